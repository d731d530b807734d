//! Value parsers shared by the flags: counts written the way people write
//! them (`1M`, `1e6`, `1_000_000`) and times as pgbench and cr8 take them (a
//! plain number of seconds) beside humantime's `30s`, `2m`. One parser per
//! kind of value, so that every flag of that kind takes the same forms and
//! refuses the same mistakes, naming itself (clap puts the flag in front of
//! the message).

use std::time::Duration;

/// A count of rows, queries, requests or records: digits with optional `_`
/// separators, an optional fraction and exponent (`2.5M`, `1e6`), and an
/// optional suffix `k` (thousand), `M` (million) or `G` (billion), decimal
/// like `--rate`'s rows per second, never 1024. The value must come out a
/// whole number that fits `T`.
pub fn count<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    let n = whole(s)?;
    T::try_from(n).map_err(|_| format!("{n} is too large here; give a smaller count"))
}

/// The number `s` stands for, exactly (no float rounding: `2.5M` is
/// 2,500,000 and `1.0000001M` is refused rather than rounded).
fn whole(s: &str) -> Result<u64, String> {
    let forms = "give a whole number such as 1000000, 1_000_000, 1e6, 1M or 2.5k";
    let text = s.trim();
    if text.starts_with('-') {
        return Err(format!("{s} is negative; {forms}"));
    }
    let bad = || format!("{s:?} is not a count; {forms}");
    let (number, scale) = match text.char_indices().last() {
        Some((i, 'k' | 'K')) => (&text[..i], 3u32),
        Some((i, 'm' | 'M')) => (&text[..i], 6),
        Some((i, 'g' | 'G')) => (&text[..i], 9),
        _ => (text, 0),
    };
    let (mantissa, exponent) = match number.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.strip_prefix('+').unwrap_or(e).parse::<u32>().map_err(|_| bad())?),
        None => (number, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let separators_ok = !int.starts_with('_') && !int.ends_with('_') && !frac.contains('_');
    let int: String = int.chars().filter(|&c| c != '_').collect();
    if int.is_empty() || !separators_ok || !(int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())) {
        return Err(bad());
    }
    // Trailing zeros of the fraction change nothing; any other digit there
    // must be moved left of the point by the exponent and suffix.
    let frac = frac.trim_end_matches('0');
    let shift = u64::from(scale) + u64::from(exponent);
    if frac.len() as u64 > shift {
        return Err(format!("{s} is not a whole number; {forms}"));
    }
    let digits = [int.as_str(), frac].concat();
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(0);
    }
    let too_large = || format!("{s} is too large; give at most {}", u64::MAX);
    let mut value: u64 = digits.parse().map_err(|_| too_large())?;
    for _ in 0..shift - frac.len() as u64 {
        value = value.checked_mul(10).ok_or_else(too_large)?;
    }
    Ok(value)
}

/// A time: a plain number of seconds (pgbench's `-T 60`, cr8's `--duration
/// 60`, `0.5`) or a humantime duration (`30s`, `2m`, `1h 30m`).
pub fn seconds_or_duration(s: &str) -> Result<Duration, String> {
    let text = s.trim();
    if text.bytes().next().is_some_and(|b| b.is_ascii_digit() || b == b'.') && text.parse::<f64>().is_ok() {
        let secs: f64 = text.parse().expect("checked");
        return Duration::try_from_secs_f64(secs)
            .map_err(|e| format!("{s}: {e}; give seconds (30) or a time (30s, 2m)"));
    }
    humantime::parse_duration(text).map_err(|e| format!("{s:?}: {e}; give seconds (30) or a time (30s, 2m, 1h)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_suffixes_exponents_and_separators() {
        for (text, want) in [
            ("1000000", 1_000_000),
            ("1_000_000", 1_000_000),
            ("1e6", 1_000_000),
            ("1E6", 1_000_000),
            ("1e+6", 1_000_000),
            ("1M", 1_000_000),
            ("1m", 1_000_000),
            ("10k", 10_000),
            ("10K", 10_000),
            ("2.5M", 2_500_000),
            ("2.5e3", 2_500),
            ("1.5k", 1_500),
            ("3G", 3_000_000_000),
            ("0", 0),
            ("0e4000000000", 0),
            ("007", 7),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(count::<u64>(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn counts_that_are_not_whole_or_negative_are_refused_saying_why() {
        let err = |text: &str| count::<u64>(text).unwrap_err();
        assert!(err("1.5").starts_with("1.5 is not a whole number; give a whole number such as"), "{}", err("1.5"));
        assert!(err("2.0000005M").contains("not a whole number"));
        assert!(err("-3").starts_with("-3 is negative"), "{}", err("-3"));
        for text in ["", "M", "1x", "1..2", "1e", "e6", "_1", "1_", "1._5", "1e-3", "1 000", "0x10", "1MM"] {
            assert!(err(text).contains("is not a count"), "{text}: {}", err(text));
        }
        assert!(err("18446744073709551616").contains("too large"));
        assert!(err("100000000000000000000000000000000000000000000k").contains("too large"));
        assert!(err("1e30").contains("too large"));
        assert!(err("1e4000000000").contains("too large"));
        assert!(count::<u32>("5G").unwrap_err().contains("too large here"));
        assert_eq!(count::<usize>("20k"), Ok(20_000));
    }

    #[test]
    fn times_are_seconds_or_humantime() {
        assert_eq!(seconds_or_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(seconds_or_duration("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(seconds_or_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(seconds_or_duration("1h 30m"), Ok(Duration::from_secs(5400)));
        assert!(seconds_or_duration("-1").unwrap_err().contains("give seconds (30) or a time"));
        assert!(seconds_or_duration("soon").unwrap_err().contains("give seconds (30) or a time"));
        assert!(seconds_or_duration("1e300").is_err());
    }
}
