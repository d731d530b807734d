//! Numbers written for people: digits grouped (`1,234,567`), sizes in
//! binary (`1.5 KiB`) or decimal units (`1.6 MB`, k6's and `du --si`'s), a
//! figure in the unit that suits it (`812 µs`, `40.6 s`, not `0.812 ms`),
//! k6's durations. One home, so that a progress line, the reports and
//! the commands write a number the same way; a leaf, so that the loop
//! (its progress line, why it stopped) formats without naming a report.
//! The JSON reports keep machine units (ms, s, bytes), which scripts compare.

/// `1234567` → `1,234,567`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `value` divided by `base` until below it (or in the last of `units`
/// units), and the index of the unit reached.
fn scaled(mut value: f64, base: f64, units: usize) -> (f64, usize) {
    let mut unit = 0;
    while value >= base && unit < units - 1 {
        value /= base;
        unit += 1;
    }
    (value, unit)
}

/// `1.2 GiB`, `85 B`: a size in binary units, for the text and HTML reports.
pub fn binary_size(bytes: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let (value, unit) = scaled(bytes, 1024.0, units.len());
    match unit {
        // Per row, an unlogged table's WAL is a fraction of a byte: not 0.
        0 if value < 10.0 && value.fract() != 0.0 => format!("{value:.2} B"),
        0 => format!("{value:.0} B"),
        _ => format!("{value:.1} {}", units[unit]),
    }
}

/// A size in decimal units, below a kilobyte in `byte`s: `1.6 MB`, `512 B`.
fn decimal_size(bytes: f64, byte: &str) -> String {
    let units = [byte, "kB", "MB", "GB", "TB"];
    let (value, unit) = scaled(bytes, 1000.0, units.len());
    match unit {
        0 => format!("{value:.0} {byte}"),
        _ => format!("{value:.1} {}", units[unit]),
    }
}

/// `6.4 GB`, `12.0 MB`, `512 bytes`: a size on disk, as `du -h --si` says it.
pub fn human_size(bytes: u64) -> String {
    decimal_size(bytes as f64, "bytes")
}

/// k6's size style, decimal units: `1.6 MB`, `512 B`.
pub fn k6_bytes(bytes: f64) -> String {
    decimal_size(bytes, "B")
}

/// k6's duration style: `0s`, `812.5µs`, `208.12ms`, `1.05s`.
pub fn k6_time(ms: f64) -> String {
    let (v, unit) = match ms {
        ms if ms <= 0.0 => return "0s".into(),
        ms if ms < 1.0 => (ms * 1000.0, "µs"),
        ms if ms < 1000.0 => (ms, "ms"),
        ms => (ms / 1000.0, "s"),
    };
    let text = format!("{v:.2}");
    format!("{}{unit}", text.trim_end_matches('0').trim_end_matches('.'))
}

/// `12.3 MB`: a size always in megabytes (an export's files and their total).
pub fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// What a figure measures, as the report's JSON holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A time in milliseconds (latencies): written in ns, µs, ms, s or min.
    Ms,
    /// A time in seconds (durations): written like [`Unit::Ms`].
    S,
    /// Things counted (rows, queries, errors): a whole number, digits grouped.
    Count,
    /// Things per second: digits grouped, a decimal or two only below 100.
    Rate,
    /// Bytes, in powers of 1024 (KiB, MiB, GiB).
    Bytes,
    /// A fraction (0.25) as a percentage (25.00%).
    Percent,
    /// A ratio (1.5) as times (1.50×).
    Times,
}

impl std::str::FromStr for Unit {
    type Err = String;

    /// The names the templates use: `{{ l.p99|unit("ms") }}`.
    fn from_str(name: &str) -> Result<Unit, String> {
        Ok(match name {
            "ms" => Unit::Ms,
            "s" => Unit::S,
            "count" => Unit::Count,
            "rate" => Unit::Rate,
            "bytes" => Unit::Bytes,
            "percent" => Unit::Percent,
            "times" => Unit::Times,
            other => return Err(format!("no unit {other:?}: ms, s, count, rate, bytes, percent or times")),
        })
    }
}

/// `v` written for a reader; a missing figure is a dash.
pub fn human(v: Option<f64>, unit: Unit) -> String {
    let Some(v) = v.filter(|v| v.is_finite()) else { return "–".into() };
    match unit {
        Unit::Ms => time_ms(v),
        Unit::S => time_ms(v * 1000.0),
        Unit::Count => grouped(v),
        Unit::Rate if v.abs() >= 99.95 => grouped(v),
        Unit::Rate if v.abs() >= 9.995 => format!("{v:.1}"),
        Unit::Rate => format!("{v:.2}"),
        Unit::Bytes => binary_size(v),
        Unit::Percent => format!("{:.2}%", v * 100.0),
        Unit::Times => format!("{v:.2}×"),
    }
}

/// How much slower (or faster) a figure got under load than alone, the
/// higher the worse (a latency): `2.3× slower`, `1.5× faster`, or `same`
/// within 5 %.
pub fn slowdown(under_load: Option<f64>, alone: Option<f64>) -> String {
    match (under_load, alone) {
        (Some(l), Some(a)) if l > 0.0 && a > 0.0 => {
            let ratio = l / a;
            if ratio >= 1.05 {
                format!("{ratio:.1}× slower")
            } else if ratio <= 1.0 / 1.05 {
                format!("{:.1}× faster", 1.0 / ratio)
            } else {
                "same".into()
            }
        }
        _ => "–".into(),
    }
}

/// `v` rounded to a whole number, its thousands grouped: `-1,234`.
pub fn grouped(v: f64) -> String {
    let digits = group(v.abs().round() as u64);
    if v.round() < 0.0 {
        format!("-{digits}")
    } else {
        digits
    }
}

/// A time given in ms, in the largest unit that keeps it at 1 or more,
/// with three significant digits (`812 µs`, `4.06 ms`, `40.6 s`); a minute
/// or more as minutes and seconds (`2 min 05 s`), an hour or more as hours
/// and minutes.
fn time_ms(ms: f64) -> String {
    if ms == 0.0 {
        return "0 ms".into();
    }
    let sign = if ms < 0.0 { "-" } else { "" };
    // Rounded first, so that 999.7 µs is written 1.00 ms, not 1000 µs.
    let ms = significant(ms.abs(), 3);
    let secs = ms / 1000.0;
    if secs >= 3600.0 {
        let mins = (secs / 60.0).round() as u64;
        return format!("{sign}{} h {:02} min", mins / 60, mins % 60);
    }
    if secs >= 60.0 {
        let s = secs.round() as u64;
        return format!("{sign}{} min {:02} s", s / 60, s % 60);
    }
    let (value, unit) = match ms {
        m if m >= 1000.0 => (m / 1000.0, "s"),
        m if m >= 1.0 => (m, "ms"),
        m if m >= 0.001 => (m * 1000.0, "µs"),
        m => (m * 1_000_000.0, "ns"),
    };
    let text = match value {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v => format!("{v:.2}"),
    };
    format!("{sign}{text} {unit}")
}

/// `v` (> 0) rounded to `digits` significant digits.
fn significant(v: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits - 1 - v.log10().floor() as i32);
    (v * scale).round() / scale
}

/// A number as JavaScript's `toLocaleString()` writes it in English (what
/// nodeIngestBench prints): grouped thousands, at most three decimals,
/// trailing zeros dropped (`239088.1349` → `239,088.135`, `25.5` → `25.5`).
pub fn js_locale(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "NaN".into()
        } else if v > 0.0 {
            "∞".into()
        } else {
            "-∞".into()
        };
    }
    let fixed = format!("{:.3}", v.abs());
    let (whole, fraction) = fixed.split_once('.').unwrap_or((&fixed, ""));
    let fraction = fraction.trim_end_matches('0');
    let sign = if v < 0.0 && fixed.bytes().any(|b| b.is_ascii_digit() && b != b'0') { "-" } else { "" };
    let whole = group(whole.parse().unwrap_or(u64::MAX));
    match fraction {
        "" => format!("{sign}{whole}"),
        f => format!("{sign}{whole}.{f}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
    }

    #[test]
    fn sizes_scale_to_binary_units() {
        assert_eq!(binary_size(85.0), "85 B");
        assert_eq!(binary_size(0.04), "0.04 B");
        assert_eq!(binary_size(1536.0), "1.5 KiB");
        assert_eq!(binary_size(1.2 * 1024.0 * 1024.0 * 1024.0), "1.2 GiB");
    }

    #[test]
    fn k6_units() {
        assert_eq!(k6_time(0.0), "0s");
        assert_eq!(k6_time(0.30226), "302.26µs");
        assert_eq!(k6_time(208.12), "208.12ms");
        assert_eq!(k6_time(1050.0), "1.05s");
        assert_eq!(k6_time(0.018), "18µs");
        assert_eq!(k6_bytes(1_600_000.0), "1.6 MB");
        assert_eq!(k6_bytes(27_000.0), "27.0 kB");
        assert_eq!(k6_bytes(512.0), "512 B");
    }

    fn ms(v: f64) -> String {
        human(Some(v), Unit::Ms)
    }

    #[test]
    fn times_take_the_unit_that_suits_them() {
        assert_eq!(ms(40566.783), "40.6 s");
        assert_eq!(ms(0.812), "812 µs");
        assert_eq!(ms(0.0421), "42.1 µs");
        assert_eq!(ms(0.0005), "500 ns");
        assert_eq!(ms(4.0567), "4.06 ms");
        assert_eq!(ms(126.399), "126 ms");
        assert_eq!(ms(1000.0), "1.00 s");
        assert_eq!(ms(0.0), "0 ms");
        assert_eq!(ms(125_000.0), "2 min 05 s");
        assert_eq!(ms(7_380_000.0), "2 h 03 min");
        assert_eq!(human(Some(1.98), Unit::S), "1.98 s");
        assert_eq!(human(Some(0.5), Unit::S), "500 ms");
    }

    #[test]
    fn rounding_up_moves_to_the_next_unit() {
        assert_eq!(ms(0.9997), "1.00 ms");
        assert_eq!(ms(999.7), "1.00 s");
        assert_eq!(ms(59_999.0), "1 min 00 s");
    }

    #[test]
    fn counts_rates_bytes_and_percentages() {
        assert_eq!(human(Some(50000.0), Unit::Count), "50,000");
        assert_eq!(human(Some(1_234_567.4), Unit::Rate), "1,234,567");
        assert_eq!(human(Some(13.14), Unit::Rate), "13.1");
        assert_eq!(human(Some(0.5), Unit::Rate), "0.50");
        assert_eq!(human(Some(6.0 * 1024.0 * 1024.0), Unit::Bytes), "6.0 MiB");
        assert_eq!(human(Some(2048.0), Unit::Bytes), "2.0 KiB");
        assert_eq!(human(Some(0.0125), Unit::Percent), "1.25%");
        assert_eq!(human(Some(1.5), Unit::Times), "1.50×");
        assert_eq!(human(None, Unit::Ms), "–");
        assert_eq!(human(Some(f64::NAN), Unit::Count), "–");
        assert_eq!(human(Some(-3.0), Unit::Count), "-3");
    }

    #[test]
    fn unit_names_are_the_templates() {
        assert_eq!("ms".parse(), Ok(Unit::Ms));
        assert_eq!("bytes".parse(), Ok(Unit::Bytes));
        assert!("kb".parse::<Unit>().unwrap_err().contains("no unit \"kb\""));
    }

    #[test]
    fn slowdown_is_a_ratio_in_words() {
        assert_eq!(slowdown(Some(23.0), Some(10.0)), "2.3× slower");
        assert_eq!(slowdown(Some(10.0), Some(15.0)), "1.5× faster");
        assert_eq!(slowdown(Some(10.2), Some(10.0)), "same");
        assert_eq!(slowdown(None, Some(10.0)), "–");
        assert_eq!(slowdown(Some(1.0), Some(0.0)), "–");
    }

    /// As nodeIngestBench's Global Results print them (Node's `toLocaleString`).
    #[test]
    fn js_locale_writes_as_node_does() {
        for (v, want) in [
            (25.179, "25.179"),
            (6_020_000.0, "6,020,000"),
            (239_088.134_9, "239,088.135"),
            (1133.787, "1,133.787"),
            (0.4410, "0.441"),
            (2.5, "2.5"),
            (0.0, "0"),
        ] {
            assert_eq!(js_locale(v), want, "{v}");
        }
    }
}
