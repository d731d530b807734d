//! The grid of a sweep: the `--vary` flags and their values, every point
//! (one value of each), a point's command line, and the order the points
//! run in. Plain values, no I/O: the runner (`mod.rs`) runs what this
//! plans.

use anyhow::Result;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::error::usage;
use crate::format::group;
use crate::redact;

/// One `--vary FLAG=V1,V2,...`: a long flag of the swept command (without
/// its dashes) and its values, as the user would type them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vary {
    pub flag: String,
    /// As given to the points' commands.
    pub values: Vec<String>,
    /// As labels, progress lines, reports and tags show them: a URL's
    /// password hidden (`url=postgres://app:***@db/x`).
    pub shown: Vec<String>,
}

/// Flags the sweep sets on every point itself (its output, its repeats,
/// the store its runs go to): varying them would measure nothing.
const SET_BY_SWEEP: [&str; 8] = ["output", "runs", "pause", "tag", "results", "results-url", "no-results", "quiet"];

impl Vary {
    /// Parses `FLAG=V1,V2,...` (`--FLAG=...` also taken). A flag the sweep
    /// sets itself, an empty value, or a value given twice is a usage error
    /// naming the `--vary`.
    pub fn parse(s: &str) -> Result<Vary> {
        let given = redact::vary(s);
        let bad =
            |why: &str| usage(format!("--vary {given}: {why}; write FLAG=V1,V2,..., e.g. --vary batch-size=500,2000"));
        let Some((flag, values)) = s.split_once('=') else {
            return Err(bad("no `=` between the flag and its values"));
        };
        let flag = flag.trim().trim_start_matches('-');
        if flag.is_empty() {
            return Err(bad("the flag is missing"));
        }
        if SET_BY_SWEEP.contains(&flag) {
            return Err(usage(format!(
                "--vary {given}: the sweep sets --{flag} on every point itself; give it to the sweep, before `--`"
            )));
        }
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            return Err(bad("a value is empty"));
        }
        let long = format!("--{flag}");
        let mut seen = std::collections::HashSet::with_capacity(values.len());
        if let Some(twice) = values.iter().find(|v| !seen.insert(*v)) {
            return Err(bad(&format!("the value `{}` is given twice", redact::flag(&long, twice))));
        }
        let shown = values.iter().map(|v| redact::flag(&long, v)).collect();
        Ok(Vary { flag: flag.to_string(), values, shown })
    }
}

/// The most points a grid may have. Each point is a whole run (seconds at
/// least, each `--runs` times): ten thousand is already days of runs, and a
/// grid beyond it is a mistake (a range typed as a list, one `--vary` too
/// many) that would otherwise only show as a sweep that never ends (issue
/// 29), the points being checked one by one before any runs.
pub const MAX_POINTS: u64 = 10_000;

/// How many points the grid of `varied` has; a usage error naming that
/// number and [`MAX_POINTS`] when it has more.
pub fn size(varied: &[Vary]) -> Result<u64> {
    let counts = varied.iter().map(|v| v.values.len() as u64);
    let points = counts.clone().try_fold(1u64, u64::checked_mul).filter(|&n| n <= MAX_POINTS);
    points.ok_or_else(|| {
        let sizes: Vec<String> =
            varied.iter().map(|v| format!("{} ({})", v.flag, group(v.values.len() as u64))).collect();
        let total = counts.map(u128::from).product::<u128>();
        usage(format!(
            "sweep: the --vary values make a grid of {} points ({}), more than the {} a sweep runs: \
             give fewer values, or sweep the flags one at a time",
            group_wide(total),
            sizes.join(" x "),
            group(MAX_POINTS)
        ))
    })
}

/// [`group`] for a count beyond u64, as a grid's can be.
fn group_wide(n: u128) -> String {
    u64::try_from(n).map_or_else(|_| n.to_string(), group)
}

/// Every point of the grid, each as the index of its value of each
/// `--vary`, in order: the first `--vary` changes slowest.
pub fn points(varied: &[Vary]) -> Vec<Vec<usize>> {
    varied.iter().fold(vec![Vec::new()], |points, v| {
        points.into_iter().flat_map(|p| (0..v.values.len()).map(move |i| [&p[..], &[i]].concat())).collect()
    })
}

/// A point's name, as its tag and the tables show it: `batch-size=500,workers=2`.
pub fn label(varied: &[Vary], point: &[usize]) -> String {
    varied.iter().zip(point).map(|(v, &i)| format!("{}={}", v.flag, v.shown[i])).collect::<Vec<_>>().join(",")
}

/// How a flag may be spelt in a command's arguments: its long names (the
/// flag and its aliases) and its short letter, as clap knows them.
#[derive(Debug, Clone, Default)]
pub struct Spellings {
    pub longs: Vec<String>,
    pub short: Option<char>,
}

impl Spellings {
    /// Only the long name given.
    pub fn long(flag: &str) -> Spellings {
        Spellings { longs: vec![flag.to_string()], short: None }
    }

    /// How many arguments at `args[i..]` are this flag with its value (2
    /// for `--flag value` and `-f value`, 1 for `--flag=value` and
    /// `-fvalue`); 0 when `args[i]` is not this flag.
    fn matches(&self, args: &[String], i: usize) -> usize {
        let arg = args[i].as_str();
        let long = arg.strip_prefix("--").map(|a| a.split_once('=').map_or((a, false), |(name, _)| (name, true)));
        if let Some((name, joined)) = long {
            if self.longs.iter().any(|l| l == name) {
                return if joined { 1 } else { 2.min(args.len() - i) };
            }
            return 0;
        }
        match (self.short, arg.strip_prefix('-').and_then(|a| a.chars().next())) {
            (Some(s), Some(c)) if c == s && arg.len() == 2 => 2.min(args.len() - i),
            (Some(s), Some(c)) if c == s => 1,
            _ => 0,
        }
    }
}

/// `args` with `--FLAG value` where the flag was (`--flag v`, `--flag=v`,
/// or its short form; later occurrences removed), or appended. Arguments
/// after a bare `--` are the command's own and left alone.
pub fn with_flag(args: &[String], flag: &Spellings, value: &str) -> Vec<String> {
    let canonical = format!("--{}", flag.longs[0]);
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let mut out = Vec::with_capacity(args.len() + 2);
    let mut placed = false;
    let mut i = 0;
    while i < end {
        match flag.matches(&args[..end], i) {
            0 => {
                out.push(args[i].clone());
                i += 1;
            }
            n => {
                if !placed {
                    out.extend([canonical.clone(), value.to_string()]);
                    placed = true;
                }
                i += n;
            }
        }
    }
    if !placed {
        out.extend([canonical, value.to_string()]);
    }
    out.extend(args[end..].iter().cloned());
    out
}

/// Whether `args` (before a bare `--`) give the flag at all.
pub fn has_flag(args: &[String], flag: &Spellings) -> bool {
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    (0..end).any(|i| flag.matches(&args[..end], i) > 0)
}

/// The order of each of `runs` rounds: every point once per round, in an
/// order shuffled per round by a generator seeded with `seed`, so that the
/// same seed gives the same order and drift over the sweep (caches
/// warming, a table growing, a noisy neighbour) spreads over every point.
pub fn rounds(points: usize, runs: u32, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..runs)
        .map(|_| {
            let mut order: Vec<usize> = (0..points).collect();
            order.shuffle(&mut rng);
            order
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_flag_replaces_both_forms_or_is_appended() {
        let batch = Spellings::long("batch-size");
        let got = with_flag(&args("--rows 10 --batch-size 100 --workers 2"), &batch, "500");
        assert_eq!(got, args("--rows 10 --batch-size 500 --workers 2"));
        let got = with_flag(&args("--rows 10 --batch-size=100 --workers 2"), &batch, "500");
        assert_eq!(got, args("--rows 10 --batch-size 500 --workers 2"));
        assert_eq!(with_flag(&args("--rows 10"), &batch, "500"), args("--rows 10 --batch-size 500"));
        // A later occurrence goes; a flag that only starts the same is another flag.
        let got = with_flag(&args("--batch-size 1 --batch-size-x 3 --batch-size=2"), &batch, "7");
        assert_eq!(got, args("--batch-size 7 --batch-size-x 3"));
        // Short forms and aliases, as clap names them; nothing after a bare `--`.
        let concurrency = Spellings { longs: vec!["concurrency".into(), "clients".into()], short: Some('c') };
        assert_eq!(with_flag(&args("-c 4 -s x"), &concurrency, "8"), args("--concurrency 8 -s x"));
        assert_eq!(with_flag(&args("-c4 -s x"), &concurrency, "8"), args("--concurrency 8 -s x"));
        assert_eq!(with_flag(&args("--clients=4"), &concurrency, "8"), args("--concurrency 8"));
        assert_eq!(with_flag(&args("-s x -- -c 4"), &concurrency, "8"), args("-s x --concurrency 8 -- -c 4"));
        assert!(has_flag(&args("-q --rows 1"), &Spellings { longs: vec!["quiet".into()], short: Some('q') }));
        assert!(!has_flag(&args("--rows 1"), &Spellings::long("quiet")));
    }

    #[test]
    fn the_grid_is_every_combination_first_flag_slowest() {
        let varied = [Vary::parse("batch-size=500,2000").unwrap(), Vary::parse("--workers=1,2,4").unwrap()];
        let points = points(&varied);
        assert_eq!(points.len(), 6);
        assert_eq!(points[1], [0, 1]);
        assert_eq!(label(&varied, &points[5]), "batch-size=2000,workers=4");
        assert_eq!(super::points(&[]), [Vec::<usize>::new()]);
    }

    /// Issue 29, item 6: a varied URL's password, or the value of a flag
    /// that holds a secret (`--bearer`, `--header`, `--user`), is not shown
    /// in a point's label (its tag, progress line and report).
    #[test]
    fn labels_hide_secrets() {
        let varied = [
            Vary::parse("url=postgres://u:pw1@h/d,postgres://u:pw2@h/d").unwrap(),
            Vary::parse("bearer=t0k3n1,t0k3n2").unwrap(),
            Vary::parse("header=X-Api-Key: k3y1,X-Api-Key: k3y2").unwrap(),
            Vary::parse("user=app:hunter1,app:hunter2").unwrap(),
        ];
        assert_eq!(
            label(&varied, &[1, 1, 1, 1]),
            "url=postgres://u:***@h/d,bearer=***,header=X-Api-Key: ***,user=app:***"
        );
        let e = Vary::parse("bearer=t0k3n1,t0k3n1").unwrap_err().to_string();
        assert!(!e.contains("t0k3n1"), "{e}");
    }

    #[test]
    fn a_grid_beyond_the_cap_is_refused_naming_its_size() {
        let values = |flag: &str, n: usize| {
            let list: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
            Vary::parse(&format!("{flag}={}", list.join(","))).unwrap()
        };
        assert_eq!(size(&[values("rows", 100), values("workers", 100)]).unwrap(), MAX_POINTS);
        let e = size(&[values("rows", 1000), values("batch-size", 1000)]).unwrap_err().to_string();
        assert!(e.contains("1,000,000 points (rows (1,000) x batch-size (1,000))") && e.contains("10,000"), "{e}");
        assert_eq!(crate::error::exit_code(&size(&[values("rows", 10_001)]).unwrap_err()), crate::error::exit::USAGE);
    }

    #[test]
    fn bad_varies_name_themselves() {
        for (bad, why) in [
            ("batch-size", "no `=`"),
            ("=1,2", "the flag is missing"),
            ("workers=1,,2", "a value is empty"),
            ("workers=1,2,1", "`1` is given twice"),
            ("output=json,text", "the sweep sets --output"),
        ] {
            let e = Vary::parse(bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), crate::error::exit::USAGE);
            assert!(e.to_string().starts_with(&format!("--vary {bad}: ")) && e.to_string().contains(why), "{e}");
        }
    }

    #[test]
    fn each_round_runs_every_point_once_in_a_seeded_order() {
        let rounds_ = rounds(6, 5, 42);
        assert_eq!(rounds_.len(), 5);
        for round in &rounds_ {
            let mut sorted = round.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..6).collect::<Vec<_>>());
        }
        assert_eq!(rounds_, rounds(6, 5, 42), "the same seed replays the same order");
        assert_ne!(rounds_, rounds(6, 5, 43));
        assert!(rounds_.windows(2).any(|w| w[0] != w[1]), "each round is shuffled anew: {rounds_:?}");
    }
}
