//! Property tests that throw generated input at every parser of user input
//! (workload, mapping and `dbload run` files, `--fail-if`, body templates,
//! libpq, CrateDB and HTTP URLs, the command line with its durations,
//! rates and stages) and check the one law they share: an answer, value or error, never
//! a panic and never a hang. A parser that panics takes a whole run down
//! with no report; one that hangs takes the terminal.
//!
//! Inputs are built from each format's own vocabulary (its keys, functions
//! and edge values: `1e308`, `-0`, `NaN`, 2^63, `500000000000y`) and then
//! mutated byte by byte, so that both the deep paths and the error paths are
//! reached; plain random text alone rarely gets past the first token.
//!
//! `make test` runs proptest's default 256 cases of each (`PROPTEST_CASES`
//! changes that); `bench/fuzz.sh` runs each property for minutes with fresh
//! seeds. A case that fails is saved by proptest under
//! `proptest-regressions/` and replayed first from then on: commit it.

use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;

/// Longer than any parser takes on these inputs, short enough that a hang is
/// a finding rather than a stuck CI job.
const LIMIT: Duration = Duration::from_secs(5);

/// Runs `f` on its own thread; fails with the input if it panics or takes
/// longer than [`LIMIT`].
fn answers<T: Send + 'static>(input: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(LIMIT) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("no answer within {LIMIT:?} for input {input:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("panicked on input {input:?}"),
    }
}

/// Numbers where parsers and generators break: signs, zeroes, the limits of
/// every integer width and of f64, and what is not a number at all.
fn edge_number() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "0",
            "-0",
            "1",
            "-1",
            "0.5",
            "1e308",
            "-1e308",
            "1e-300",
            "5e-324",
            "1.7976931348623157e308",
            "NaN",
            ".nan",
            "inf",
            "-inf",
            ".inf",
            "-.inf",
            "32767",
            "32768",
            "2147483647",
            "2147483648",
            "-2147483649",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "1e19",
            "0x10",
            "1_000",
            "",
        ])
        .prop_map(str::to_string),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| x.to_string()),
    ]
}

/// The few values where ranges overflow, drawn often enough that a pair of
/// them meets in a range.
fn extreme() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "0",
        "-1",
        "1e308",
        "-1e308",
        "1.7976931348623157e308",
        "9223372036854775807",
        "-9223372036854775808",
        "NaN",
    ])
}

fn edge_duration() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "0s",
            "1ns",
            "1us",
            "1ms",
            "1s",
            "90m",
            "1h",
            "1d",
            "500000000000y",
            "18446744073709551615s",
            "18446744073709551616ns",
            "1e3s",
            "-1s",
            "s",
            "1 s",
            "1h 1h",
            "",
        ])
        .prop_map(str::to_string),
        (any::<u64>(), prop::sample::select(vec!["ns", "ms", "s", "m", "h", "d", "y"]))
            .prop_map(|(n, u)| format!("{n}{u}")),
    ]
}

/// Applies up to four byte-level edits (insert, delete, duplicate), so a
/// well-formed input also reaches the error paths right next to it.
fn mutated(base: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    let edit = (any::<prop::sample::Index>(), any::<prop::sample::Index>(), 0u8..3, any::<char>());
    // Most inputs stay whole, so the deep paths are reached as often as the
    // error paths.
    let edits = prop_oneof![3 => Just(Vec::new()), 1 => prop::collection::vec(edit, 1..4)];
    (base, edits).prop_map(|(mut s, edits)| {
        for (at, to, kind, c) in edits {
            let cuts: Vec<usize> = (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect();
            let (a, b) = {
                let (x, y) = (*at.get(&cuts), *to.get(&cuts));
                (x.min(y), x.max(y))
            };
            match kind {
                0 => s.insert(a, c),
                1 => s.replace_range(a..b, ""),
                _ => {
                    let piece = s[a..b].to_string();
                    s.insert_str(b, &piece);
                }
            }
        }
        s
    })
}

/// A pgbench script from the pieces of its language, whole or mutated.
fn pgbench_script() -> impl Strategy<Value = String> {
    let atom = prop::sample::select(vec![
        "1",
        "-2",
        "2.5e3",
        ".5",
        ":scale",
        ":client_id",
        ":x",
        "9223372036854775807",
        "0",
        "random(1, 10)",
        "random(:x, 1)",
        "random_exponential(1, 100, 0.5)",
        "random_gaussian(-5, 5, 2.0)",
        "random_zipfian(1, 1000000, 1.001)",
        "random_zipfian(1, 1, 1000)",
        "abs(-3)",
        "least(1, 2.5)",
        "greatest(:x)",
        "int(1e300)",
        "double(7) / 0",
        "pow(2, 1024)",
        "mod(7, 0)",
        "pi()",
        "sqrt(-1)",
    ]);
    let op = prop::sample::select(vec![" + ", " - ", " * ", " / ", " % "]);
    let expr = (atom.clone(), prop::collection::vec((op, atom), 0..4))
        .prop_map(|(a, rest)| rest.into_iter().fold(a.to_string(), |e, (o, b)| format!("({e}{o}{b})")));
    let line = prop_oneof![
        expr.clone().prop_map(|e| format!("\\set x {e}")),
        expr.prop_map(|e| format!("\\sleep {} us", if e.len() % 2 == 0 { "1" } else { ":x" })),
        prop::sample::select(vec![
            "BEGIN;",
            "END;",
            "SELECT :x, ':x', x::int;",
            "UPDATE t SET a = :scale -- :y",
            "WHERE b = :x;",
            "\\set y 1 \\",
            "\\gset",
            "-- comment",
            "'unclosed",
            "",
        ])
        .prop_map(str::to_string),
    ];
    mutated(prop::collection::vec(line, 0..8).prop_map(|lines| lines.join("\n")))
}

/// A YAML scalar or small structure from the words of dbload's files.
fn yaml_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        edge_number(),
        edge_duration(),
        prop::sample::select(vec![
            "abc",
            "'quoted'",
            "\"x\\u0000y\"",
            "\"\\ud800\"",
            "true",
            "null",
            "~",
            "[]",
            "{}",
            "[1, 2]",
            "- a",
            "&a x",
            "*a",
            "!!binary aGk=",
            "|\n  block",
            "SELECT $1",
            "$1",
            "default",
            "email",
            "user-####",
        ])
        .prop_map(str::to_string),
    ];
    let nested = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            (generator(), inner.clone()).prop_map(|(k, v)| format!("{{{k}: {v}}}")),
            (generator(), inner.clone(), inner).prop_map(|(k, v, w)| format!("{{{k}: [{v}, {w}]}}")),
        ]
    });
    // Ranges of extremes are where generators overflow: half of all values.
    prop_oneof![nested, (generator(), extreme(), extreme()).prop_map(|(k, a, b)| format!("{{{k}: [{a}, {b}]}}"))]
}

/// The generators that mappings and workload parameters name.
fn generator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["int", "float", "choice", "time_ago", "pattern", "const", "sequence", "null_ratio"])
}

/// A YAML document of entries whose keys come from `keys` (and a few
/// misspellings), as a list (`list`) or a mapping.
fn yaml_doc(keys: &'static [&'static str], list: bool) -> impl Strategy<Value = String> {
    let key = prop_oneof![prop::sample::select(keys.to_vec()).prop_map(str::to_string), "[a-z_]{1,8}"];
    let entry = prop::collection::vec((key, yaml_value()), 1..4);
    mutated(prop::collection::vec(entry, 0..3).prop_map(move |entries| {
        let mut doc = String::new();
        for pairs in entries {
            for (i, (k, v)) in pairs.iter().enumerate() {
                let lead = match (list, i) {
                    (true, 0) => "- ",
                    (true, _) => "  ",
                    (false, _) => "",
                };
                doc.push_str(&format!("{lead}{k}: {v}\n"));
            }
        }
        doc
    }))
}

/// A workload file that is whole but for its parameters and numbers, so
/// generation is reached; then mutated like the rest.
fn workload_doc() -> impl Strategy<Value = String> {
    let whole = prop::collection::vec(yaml_value(), 1..3)
        .prop_map(|params| format!("- query: SELECT $1\n  ratio: 1\n  params: [{}]\n", params.join(", ")));
    prop_oneof![yaml_doc(WORKLOAD_KEYS, true), mutated(whole)]
}

/// A `dbload run` file with an ingest part and an inline workload whose
/// options take edge values.
fn run_doc() -> impl Strategy<Value = String> {
    let whole = (edge_duration(), edge_number(), edge_number(), edge_number()).prop_map(|(d, rows, workers, rate)| {
        format!(
            "duration: {d}\ningest:\n  rows: {rows}\n  workers: {workers}\nworkloads:\n  - name: w\n    rate: {rate}\n    \
             queries:\n      - query: select 1\n        ratio: 1\n"
        )
    });
    prop_oneof![yaml_doc(RUN_KEYS, false), mutated(whole)]
}

const WORKLOAD_KEYS: &[&str] = &["name", "query", "ratio", "params"];
const MAPPING_KEYS: &[&str] = &["id", "age", "note", "plan", "code", "email", "null_ratio"];
const RUN_KEYS: &[&str] = &["duration", "warmup", "ingest", "workloads", "rows", "workers", "rate", "query"];

/// A URL or conninfo string from the pieces users type, secrets included.
fn url() -> impl Strategy<Value = String> {
    let scheme = prop::sample::select(vec![
        "postgres://",
        "postgresql://",
        "cratedb://",
        "crate://",
        "http://",
        "https://",
        "ftp://",
        "",
        "://",
    ]);
    let userinfo = prop::sample::select(vec!["", "u@", "u:pw@", "u:p/w?x@", "u:p%2@", ":@", "@", "u:p@w@", "%zz@"]);
    let host = prop::sample::select(vec![
        "h",
        "127.0.0.1",
        "[::1]",
        "[::1",
        "h1,h2:5433",
        "/tmp",
        "%2Ftmp",
        "",
        "h:",
        "h:99999",
        "h:-1",
        "h:0",
    ]);
    let rest = prop::sample::select(vec![
        "",
        "/",
        "/db",
        "/db?sslmode=require",
        "?sslmode=nope",
        "/x?a=b&&c",
        "/v2/notify?x=%",
        "#frag",
        "/a b",
    ]);
    let conninfo = prop::sample::select(vec![
        "host=h port=5432",
        "host='a b' user=u password='p w'",
        "port=",
        "dbname='unterminated",
        "=x",
        "a=b=c",
        "sslmode=verify-full sslrootcert=/nonexistent",
    ])
    .prop_map(str::to_string);
    mutated(prop_oneof![
        (scheme, userinfo, host, rest).prop_map(|(s, u, h, r)| format!("{s}{u}{h}{r}")),
        conninfo,
        ".*",
    ])
}

/// `FIELD OP NUMBER` and its near misses.
fn fail_if() -> impl Strategy<Value = String> {
    let field = prop::sample::select(vec![
        "p99_ms",
        "rows_per_sec",
        "errors",
        "latency_ms.p50",
        "throughput.rows_per_sec",
        "a..b",
        ".",
        "x.0",
        "",
    ]);
    let op = prop::sample::select(vec!["<", "<=", ">", ">=", "==", "!=", "=", "<>", ""]);
    mutated((field, op, edge_number()).prop_map(|(f, o, n)| format!("{f} {o} {n}")))
}

/// Body templates built from the functions that templates offer.
fn template() -> impl Strategy<Value = String> {
    let arg = prop_oneof![edge_number(), Just("'x'".to_string()), Just("[]".to_string())];
    let call = (
        prop::sample::select(vec!["randint", "uniform", "choice", "entity", "walk", "uuid", "now", "now_ms", "range"]),
        prop::collection::vec(arg, 0..4),
    )
        .prop_map(|(f, args)| format!("{{{{ {f}({}) }}}}", args.join(", ")));
    let piece = prop_oneof![
        call,
        Just("{% for i in range(3) %}{{ i }}{% endfor %}".to_string()),
        Just("{{ ".to_string()),
        "[a-z{}\"]{0,6}",
    ];
    mutated(prop::collection::vec(piece, 0..5).prop_map(|p| p.concat()))
}

/// A command line of `dbload <command>` whose numeric and duration options
/// take edge values; resolving it must refuse or accept, never panic.
fn command_line() -> impl Strategy<Value = Vec<String>> {
    let flag = prop_oneof![
        (
            prop::sample::select(vec![
                "--rows",
                "--workers",
                "--batch-size",
                "--devices",
                "--measurements",
                "--metrics",
                "--rate",
                "--concurrency",
                "--repeat",
                "--iterations",
                "--vus",
                "--seed",
                "--warmup",
            ]),
            edge_number()
        )
            .prop_map(|(f, v)| vec![f.to_string(), v]),
        (prop::sample::select(vec!["--duration", "--warmup", "--timeout", "--chunk-interval"]), edge_duration())
            .prop_map(|(f, v)| vec![f.to_string(), v]),
        (prop::sample::select(vec!["--stages", "--rate-stages"]), mutated(stage_list()))
            .prop_map(|(f, v)| vec![f.to_string(), v]),
    ];
    let command = prop::sample::select(vec![
        vec!["ingest"],
        vec!["timeit", "-s", "select 1"],
        vec!["http", "http://127.0.0.1:9/"],
        vec!["insert-fake-data", "--table", "t"],
        vec!["export", "--table", "t"],
    ]);
    (command, prop::collection::vec(flag, 0..4)).prop_map(|(c, flags)| {
        ["dbload"].iter().chain(&c).map(|s| s.to_string()).chain(flags.into_iter().flatten()).collect()
    })
}

/// `--stages` / `--rate-stages`: `TIME:TARGET` parts, comma-separated.
fn stage_list() -> impl Strategy<Value = String> {
    prop::collection::vec((edge_duration(), edge_number()), 0..4)
        .prop_map(|parts| parts.iter().map(|(d, n)| format!("{d}:{n}")).collect::<Vec<_>>().join(","))
}

/// JSON input as insert-json meets it: rows, arrays, pretty printing, and
/// what breaks them (brackets never closed, lone surrogates, a BOM, raw
/// bytes that are not UTF-8).
fn json_input() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\n",
            "\r\n",
            "\"id\"",
            "\"a b\"",
            "\"\\\"\"",
            "\"\\ud800\"",
            "\"",
            "\\",
            "1",
            "-0.5e308",
            "9223372036854775808",
            "true",
            "nul",
            "\u{feff}",
            "{\"id\": 1, \"v\": \"x\"}\n",
        ])
        .prop_map(|t| t.as_bytes().to_vec()),
        any::<u8>().prop_map(|b| vec![b]),
    ];
    prop::collection::vec(token, 0..80).prop_map(|t| t.concat())
}

/// What the splitter finds in `input` fed `chunk` bytes at a time, each
/// find with the bytes it holds; it stops at a value over the limit, as the
/// reader does. Fails if a call neither uses a byte nor finds anything.
fn split_all(input: &[u8], chunk: usize, limit: usize) -> Vec<(String, Vec<u8>)> {
    use crate::model::json::split::{Found, Splitter};
    let mut s = Splitter::new(limit);
    let (mut found, mut rest) = (Vec::new(), input);
    for _ in 0..=2 * input.len() + 2 {
        if rest.is_empty() {
            found.extend(s.end_of_file().map(|f| (format!("{f:?}"), std::mem::take(&mut s.buf))));
            return found;
        }
        let (used, f) = s.feed(&rest[..rest.len().min(chunk)]);
        rest = &rest[used..];
        match f {
            Some(f @ Found::TooLong { .. }) => {
                found.push((format!("{f:?}"), Vec::new()));
                return found;
            }
            Some(f) => found.push((format!("{f:?}"), std::mem::take(&mut s.buf))),
            None => assert!(used > 0, "no byte used and nothing found"),
        }
    }
    panic!("the splitter made no progress on {:?}", String::from_utf8_lossy(input))
}

/// A password with the characters that URL parsers cut at (`/ ? @ # : %`)
/// before a word that stands out (it cannot occur in a message by chance,
/// so a message that shows it shows the password, or the part of it after
/// the cut): the password and that word.
fn password() -> impl Strategy<Value = (String, String)> {
    (
        "[A-Za-z0-9]{8,12}",
        prop::collection::vec(prop::sample::select(vec!["/", "?", "@", "#", ":", "%", "%2F", ""]), 0..3),
    )
        .prop_map(|(word, cuts)| (format!("p{}{word}", cuts.concat()), word))
}

mod laws {
    use std::path::PathBuf;

    use clap::Parser;
    use rand::rngs::ChaCha8Rng;
    use rand::SeedableRng;

    use super::*;
    use crate::cli::{Cli, Command};
    use crate::config::fail_if::Condition;
    use crate::config::{data, http::HttpConfig, ExportConfig, IngestConfig, MixedConfig, QueryConfig};
    use crate::driver::cratedb_http::CrateTarget;
    use crate::driver::http::template::BodyTemplate;
    use crate::driver::http::Endpoint;
    use crate::driver::PgTarget;
    use crate::model::fake::Env;
    use crate::model::mapping::Mapping;
    use crate::report::fail_if::holds;
    use crate::workload::file;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    /// A run's length and warm-up, once accepted, fit the clock the workers
    /// add them to (`--duration 500000000000y` was once taken and panicked
    /// there).
    fn on_the_clock(duration: Option<Duration>, warmup: crate::op::Warmup) {
        let warm = match warmup {
            crate::op::Warmup::Duration(d) => Some(d),
            _ => None,
        };
        for d in duration.iter().chain(&warm) {
            assert!(std::time::Instant::now().checked_add(*d).is_some(), "{d:?} is past the clock");
        }
    }

    proptest! {
        #[test]
        fn workload_files_answer(text in workload_doc(), seed: u64) {
            answers(&text.clone(), move || {
                // What was accepted must also draw its parameters.
                if let Ok(specs) = file::parse(&text, "w.yml") {
                    let mut rng = ChaCha8Rng::seed_from_u64(seed);
                    for spec in &specs {
                        for _ in 0..8 {
                            spec.draw(&mut rng, 1_700_000_000_000_000).iter().for_each(|v| drop(v.to_sql_literal()));
                        }
                    }
                }
            });
        }

        #[test]
        fn pgbench_scripts_answer(text in pgbench_script(), seed: u64) {
            answers(&text.clone(), move || {
                // What was accepted must also draw its values (or say why not).
                if let Ok(script) = crate::workload::script::Script::parse(&text, "s.sql") {
                    let mut rng = ChaCha8Rng::seed_from_u64(seed);
                    for client in [0, 7] {
                        let _ = script.draw(&mut rng, [1, client, i64::MAX], false);
                    }
                }
            });
        }

        #[test]
        fn mapping_files_answer(text in yaml_doc(MAPPING_KEYS, false), seed: u64, row: u64) {
            answers(&text.clone(), move || {
                // What was accepted must also generate values, for any row number.
                if let Ok(m) = Mapping::parse(&text, "m.yml") {
                    let mut rng = ChaCha8Rng::seed_from_u64(seed);
                    let mut out = String::new();
                    for fake in m.entries.iter().filter_map(|e| e.fake.as_ref()) {
                        for (row, cratedb) in [(0, false), (row, true), (u64::MAX, false)] {
                            out.clear();
                            fake.write(&mut rng, row, &Env { anchor_us: 1_700_000_000_000_000, cratedb }, Some(8), &mut out);
                        }
                    }
                }
            });
        }

        #[test]
        fn run_files_answer(text in run_doc()) {
            let dir = tempfile::tempdir().unwrap();
            let path: PathBuf = dir.path().join("run.yml");
            std::fs::write(&path, &text).unwrap();
            answers(&text.clone(), move || {
                let Ok(Cli { command: Command::Run(args), .. }) =
                    Cli::try_parse_from(["dbload".as_ref(), "run".as_ref(), path.as_os_str()])
                else {
                    panic!("`dbload run FILE` did not parse")
                };
                let _ = MixedConfig::resolve(args, &no_env);
            });
        }

        /// Whatever the input, the splitter answers, and how the input is
        /// cut into reads (a pipe, a file, gzip) does not change what it finds.
        #[test]
        fn json_input_splits_alike_in_any_chunks(input in json_input(), chunk in 1usize..17, small: bool) {
            let limit = if small { 48 } else { crate::model::json::split::MAX_VALUE };
            let shown = String::from_utf8_lossy(&input).into_owned();
            let whole = answers(&shown, { let input = input.clone(); move || split_all(&input, usize::MAX, limit) });
            let cut = answers(&shown, move || split_all(&input, chunk, limit));
            prop_assert_eq!(whole, cut);
        }

        /// No form of URL shows its password: not in the redacted form that
        /// reports print, not in any error about the URL.
        #[test]
        fn urls_never_show_their_password((pw, word) in password(), form in 0usize..6, rest in "(/[a-z]{0,3})?(\\?[a-z]=1)?") {
            let url = match form {
                0 => format!("postgres://u:{pw}@h:5432{rest}"),
                1 => format!("postgresql://u:{pw}@h1,h2{rest}"),
                2 => format!("cratedb://u:{pw}@h:4200{rest}"),
                3 => format!("http://u:{pw}@h:8080{rest}"),
                4 => format!("https://u:{pw}@{rest}"),
                _ => format!("ftp://u:{pw}@h{rest}"),
            };
            let shown = answers(&url.clone(), move || {
                let errors = |e: anyhow::Error| format!("{e:#}");
                [
                    PgTarget::from_url(&url, "--url", &no_env).map(|t| t.redacted().to_string()).unwrap_or_else(errors),
                    CrateTarget::parse(&url, "--url", false).map(|t| t.redacted().to_string()).unwrap_or_else(errors),
                    Endpoint::parse(&url, "URL").map(|e| e.redacted).unwrap_or_else(errors),
                ]
            });
            for text in shown {
                prop_assert!(!text.contains(&word), "{text:?} shows the password {pw:?}");
            }
        }

        #[test]
        fn fail_if_conditions_answer(text in fail_if()) {
            answers(&text.clone(), move || {
                let report = serde_json::json!({
                    "p99_ms": 1.5, "errors": 0, "latency_ms": {"p50": 1}, "rows_per_sec": 1e308, "list": [1, 2]
                });
                if let Ok(c) = Condition::parse(&text) {
                    let _ = holds(&c, &report);
                }
            });
        }

        #[test]
        fn body_templates_answer(text in template(), seed: u64) {
            answers(&text.clone(), move || {
                if let Ok(t) = BodyTemplate::from_source(&text, "body.j2") {
                    if let Ok(mut r) = t.renderer(seed, 0) {
                        let mut out = Vec::new();
                        for _ in 0..4 {
                            out.clear();
                            let _ = r.render(&mut out);
                        }
                    }
                }
            });
        }

        #[test]
        fn urls_answer(text in url()) {
            answers(&text.clone(), move || {
                let _ = PgTarget::from_url(&text, "--url", &no_env);
                let _ = CrateTarget::parse(&text, "--url", false);
                let _ = Endpoint::parse(&text, "URL");
            });
        }

        #[test]
        fn pg_variables_answer(host in url(), port in edge_number(), sslmode in "[a-z-]{0,12}") {
            let input = format!("PGHOST={host} PGPORT={port} PGSSLMODE={sslmode}");
            answers(&input, move || {
                let env = move |k: &str| match k {
                    "PGHOST" => Some(host.clone()),
                    "PGPORT" => Some(port.clone()),
                    "PGSSLMODE" => Some(sslmode.clone()),
                    _ => None,
                };
                let _ = PgTarget::from_env(&env);
            });
        }

        #[test]
        fn command_lines_answer(argv in command_line()) {
            answers(&argv.join(" "), move || {
                let Ok(cli) = Cli::try_parse_from(&argv) else { return };
                let _ = match cli.command {
                    Command::Ingest(a) => IngestConfig::resolve(a, &no_env).map(|c| on_the_clock(c.load.duration, c.load.warmup)),
                    Command::Timeit(a) => QueryConfig::timeit(a, &no_env, Some(&mut std::io::empty()))
                        .map(|c| on_the_clock(c.load.duration, c.load.warmup)),
                    Command::Http(a) => HttpConfig::resolve(a, &no_env).map(|c| on_the_clock(c.load.duration, c.load.warmup)),
                    Command::InsertFakeData(a) => data::insert_fake_data(a, &no_env).map(drop),
                    Command::Export(a) => ExportConfig::resolve(a, &no_env).map(drop),
                    _ => Ok(()),
                };
            });
        }
    }
}
