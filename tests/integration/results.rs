//! The run metadata every report carries and the results store (issue 16,
//! items 1 and 3): a directory by default, a database with `--results-url`,
//! read back by `dbload results list|show`. Each test keeps its runs in its
//! own temporary data directory (`XDG_DATA_HOME`), never in the real home.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value as Json;

use crate::support::{dbload_bin, ensure, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("results::every_command_reports_when_what_and_where", every_command_reports_when_what_and_where, Parallel),
        (
            "results::the_default_store_keeps_a_report_and_its_histograms",
            the_default_store_keeps_a_report_and_its_histograms,
            Parallel,
        ),
        ("results::no_results_keeps_nothing_anywhere", no_results_keeps_nothing_anywhere, Parallel),
        (
            "results::results_url_creates_its_tables_and_inserts_the_run",
            results_url_creates_its_tables_and_inserts_the_run,
            Parallel,
        ),
        ("results::list_and_show_read_both_stores", list_and_show_read_both_stores, Parallel),
        (
            "results::the_servers_seconds_are_kept_in_dbload_server_timeline",
            the_servers_seconds_are_kept_in_dbload_server_timeline,
            Parallel,
        ),
        (
            "results::a_store_without_the_timeline_percentiles_gets_them_in_place",
            a_store_without_the_timeline_percentiles_gets_them_in_place,
            Parallel,
        ),
        (
            "results::a_store_that_fails_is_a_warning_not_a_failed_run",
            a_store_that_fails_is_a_warning_not_a_failed_run,
            Parallel,
        ),
        ("results::list_passes_over_an_unreadable_run", list_passes_over_an_unreadable_run, Parallel),
        ("results::list_filters_and_shows_flags_and_medians", list_filters_and_shows_flags_and_medians, Parallel),
        ("results::show_prints_every_kind_as_its_run_did", show_prints_every_kind_as_its_run_did, Parallel),
    ]
}

/// One kept file that is not a report (cut short, edited by hand) does
/// not hide the good runs: `results list` lists them and names the bad
/// file on stderr (before: exit 1 and no list).
fn list_passes_over_an_unreadable_run(ctx: &Ctx) -> Result<()> {
    let home = tempfile::tempdir()?;
    let dir = home.path().join("store");
    let dir = dir.to_str().context("a temporary path")?;
    let args = ["timeit", "--url", &ctx.url, "-s", "select 1", "--repeat", "5", "--results", dir];
    let (code, report, stderr) = json_run(&args, home.path())?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let id = report["run"]["run_id"].as_str().context("run_id")?;
    let broken = format!("{dir}/{}.json", uuid::Uuid::now_v7());
    std::fs::write(&broken, "{\"schema_version\": 2, \"comm")?;
    let (code, list, stderr) = dbload_bin(&["results", "list", "--results", dir], &[]);
    ensure(code == 0 && list.lines().any(|l| l.starts_with(id)), || format!("exit {code}: {list}\n{stderr}"))?;
    ensure(stderr.contains(&broken), || format!("the unreadable file is not named: {stderr}"))
}

/// `results show ID` prints a kept run's text report as the run printed
/// it (but for its `Kept:` lines, which say where it went and are not in
/// the report), from a directory and a database alike, for every kind of
/// run (http and k6 against the harness's HTTP server); `--output json` its JSON,
/// `--html FILE` its page (before: JSON only). Issue 35: k6 and sweep runs
/// had no test, and a run with nodeIngestBench's flags was shown without
/// the Global Results block it printed (its Options block, printed at the
/// start, is not shown).
fn show_prints_every_kind_as_its_run_did(ctx: &Ctx) -> Result<()> {
    ctx.query("DROP SCHEMA IF EXISTS results_text CASCADE; CREATE SCHEMA results_text")?;
    ctx.query("DROP TABLE IF EXISTS results_text; CREATE TABLE results_text (id int, name text)")?;
    let db = ctx.url_with("options=-csearch_path%3Dresults_text");
    let home = tempfile::tempdir()?;
    let dir = home.path().join("store");
    let dir = dir.to_str().context("a temporary path")?;
    let file = |name: &str, text: &str| -> Result<String> {
        let path = home.path().join(name);
        std::fs::write(&path, text)?;
        Ok(path.to_str().context("a temporary path")?.to_string())
    };
    let workload = file("w.yml", "- query: select 1\n  ratio: 1\n")?;
    let script = file("s.sql", "\\set x random(1, 10)\nSELECT :x;\n")?;
    let mixed = file("mixed.yml", &format!("duration: 1s\ningest:\n  table: results_text_mixed\n  drop_table: true\n  workers: 1\nworkloads:\n  - name: reads\n    file: {workload}\n"))?;
    let out = home.path().join("export");
    std::fs::create_dir(&out)?;
    let (url, out) = (ctx.url.as_str(), out.to_str().context("a temporary path")?);
    let server = crate::http::Server::start(false)?;
    let page_url = format!("{}/bytes/100", server.url);
    let k6_script = file(
        "k6.js",
        &format!(
            "import http from 'k6/http';\nexport const options = {{ vus: 1, iterations: 5 }};\n\
             export default function () {{ http.get('{page_url}'); }}\n"
        ),
    )?;
    let runs: Vec<Vec<&str>> = vec![
        vec!["http", &page_url, "--vus", "2", "-n", "20"],
        vec!["ingest", "--url", url, "--table", "results_text_i", "--drop-table", "--rows", "2000"],
        vec!["timeit", "--url", url, "-s", "select 1", "--repeat", "5"],
        vec!["timeit", "--url", url, "-f", &script, "-t", "20"],
        vec!["timeit", "--url", url, "-s", "select 1", "--repeat", "5", "--runs", "2"],
        vec!["workload", &workload, "--url", url, "--max-queries", "10"],
        vec!["export", "--url", url, "--table", "results_text_i", "--out", out],
        vec!["insert-from-sql", "--url", url, "--query", "select 1 as id, 'x' as name", "--table", "results_text"],
        vec!["run", &mixed, "--url", url],
        vec!["k6", "run", &k6_script],
        vec![
            "sweep",
            "--vary",
            "workers=1,2",
            "--",
            "ingest",
            "--url",
            url,
            "--table",
            "results_text_s",
            "--rows",
            "500",
        ],
        vec!["ingest", "--url", url, "--table", "results_text_n", "--batch_size", "300", "--max_rows", "600"],
        vec!["workload", "--url", url, "--queries_config", &workload, "--max_queries", "10", "--processes", "1"],
    ];
    for args in runs {
        // A sweep's own flags come before the command it sweeps.
        let at = args.iter().position(|a| *a == "--").unwrap_or(args.len());
        let args = [&args[..at], &["--results", dir, "--results-url", &db], &args[at..]].concat();
        let (code, printed, stderr) = dbload_bin(&args, &[]);
        ensure(code == 0, || format!("{args:?}: exit {code}: {stderr}"))?;
        // A sweep names itself on its first line: `Sweep ID: ...`.
        let id = printed
            .lines()
            .find_map(|l| l.strip_prefix("Run:").or_else(|| l.strip_prefix("Sweep ")))
            .and_then(|l| l.split_whitespace().next())
            .map(|id| id.trim_end_matches(':'));
        let id = id.with_context(|| format!("{args:?}: no Run: line in {printed}"))?;
        let printed: String = printed.lines().filter(|l| !l.starts_with("Kept:")).map(|l| format!("{l}\n")).collect();
        // Issue 32: nodeIngestBench's Options block, printed as the run
        // started, says what it was asked: it is no part of the report.
        let printed = match printed.split_once("\n}\n") {
            Some((options, rest)) if options.starts_with('-') && options.contains(" Options ") => {
                rest.split_once('\n').map_or(String::new(), |(_, report)| report.to_string())
            }
            _ => printed,
        };
        for from in [["--results", dir], ["--results-url", &db]] {
            let (code, shown, stderr) = dbload_bin(&[&["results", "show", id][..], &from].concat(), &[]);
            // A sweep too: it printed no `Run:` lines of its own before.
            ensure(code == 0 && shown == printed, || {
                format!("{args:?} {from:?}: exit {code}: {stderr}\nshown:\n{shown}\nprinted:\n{printed}")
            })?;
            let (code, json, _) = dbload_bin(&[&["results", "show", id, "--output", "json"][..], &from].concat(), &[]);
            let json: Json = serde_json::from_str(&json).with_context(|| format!("{args:?} {from:?}: exit {code}"))?;
            ensure(json["run"]["run_id"] == id, || format!("{args:?} {from:?}: {json}"))?;
        }
    }
    let (_, list, _) = dbload_bin(&["results", "list", "--results", dir, "--limit", "1"], &[]);
    let id = list.lines().nth(1).and_then(|l| l.split_whitespace().next()).context("no run listed")?;
    let page = home.path().join("run.html");
    let page_at = page.to_str().context("a temporary path")?;
    let (code, _, stderr) = dbload_bin(&["results", "show", id, "--results", dir, "--html", page_at], &[]);
    let html = std::fs::read_to_string(&page).unwrap_or_default();
    ensure(code == 0 && html.contains("<html") && html.contains(id), || format!("--html: exit {code}: {stderr}"))
}

/// `results list` in both stores: `--tag` (all must match), `--command`
/// and `--since` filter; each run shows its distinctive flags (not its
/// `--url`, store, `--tag` or `--output`), and a `--runs` entry its
/// median, marked so (before: unknown flags, exit 2; the last run's figures).
fn list_filters_and_shows_flags_and_medians(ctx: &Ctx) -> Result<()> {
    ctx.query("DROP SCHEMA IF EXISTS results_list CASCADE; CREATE SCHEMA results_list")?;
    let db = ctx.url_with("options=-csearch_path%3Dresults_list");
    let home = tempfile::tempdir()?;
    let dir = home.path().join("store");
    let dir = dir.to_str().context("a temporary path")?;
    let url = ctx.url.as_str();
    let store = ["--results", dir, "--results-url", &db];
    let tagged = ["timeit", "--url", url, "-s", "select 1", "--repeat", "5", "--tag", "setup=a", "--tag", "pr=1"];
    let repeated = ["timeit", "--url", url, "-s", "select 2", "--repeat", "5", "--runs", "3", "--tag", "setup=b"];
    let ingest =
        ["ingest", "--url", url, "--table", "results_list", "--drop-table", "--rows", "1000", "--tag", "setup=a"];
    let mut ids = Vec::new();
    for args in [&tagged[..], &repeated, &ingest] {
        let (code, report, stderr) = json_run(&[args, &store].concat(), home.path())?;
        ensure(code == 0 && !stderr.contains("warning"), || format!("{args:?}: exit {code}: {stderr}"))?;
        ids.push((report["run"]["run_id"].as_str().context("run_id")?.to_string(), report));
    }
    let listed = |from: &[&str], filter: &[&str]| -> Result<Vec<usize>> {
        let (code, list, stderr) = dbload_bin(&[&["results", "list"], from, filter].concat(), &[]);
        ensure(code == 0, || format!("{from:?} {filter:?}: exit {code}: {stderr}"))?;
        Ok((0..ids.len()).filter(|&i| list.lines().any(|l| l.starts_with(&ids[i].0))).collect())
    };
    for from in [["--results", dir], ["--results-url", &db]] {
        let want = |filter: &[&str], expected: &[usize]| -> Result<()> {
            let got = listed(&from, filter)?;
            ensure(got == expected, || format!("{from:?} {filter:?}: listed {got:?}, expected {expected:?}"))
        };
        want(&["--tag", "setup=a"], &[0, 2])?;
        want(&["--tag", "setup=a", "--tag", "pr=1"], &[0])?;
        want(&["--command", "ingest"], &[2])?;
        want(&["--command", "timeit", "--tag", "setup=b"], &[1])?;
        want(&["--since", "1h"], &[0, 1, 2])?;
        want(&["--since", "2099-01-01"], &[])?;
        let (_, list, _) = dbload_bin(&[&["results", "list"][..], &from].concat(), &[]);
        let line = |i: usize| list.lines().find(|l| l.starts_with(&ids[i].0)).unwrap_or_default().to_string();
        let first = line(0);
        ensure(first.contains("-s 'select 1' --repeat 5"), || format!("{from:?}: no flags: {first}"))?;
        for hidden in ["--url", "--results", "--tag setup", "--output", "postgres://"] {
            ensure(!first.contains(hidden), || format!("{from:?}: {hidden} listed: {first}"))?;
        }
        let median = |k: &str| ids[1].1["repeat"]["figures"][k]["median"].as_f64().unwrap_or(f64::NAN);
        let (second, p99) = (line(1), format!("{:.3}", median("p99_ms")));
        let qps = dbload::format::group(median("qps").round() as u64);
        ensure(second.contains("median") && second.contains(&qps) && second.contains(&p99), || {
            format!("{from:?}: not the median ({qps} queries/s, p99 {p99}): {second}")
        })?;
    }
    let (code, _, stderr) = dbload_bin(&["results", "list", "--results", dir, "--since", "yesterday-ish"], &[]);
    ensure(code == 2 && stderr.contains("--since"), || format!("a bad --since: exit {code}: {stderr}"))?;
    let (code, _, stderr) = dbload_bin(&["results", "list", "--results", dir, "--tag", "setup"], &[]);
    ensure(code == 2 && stderr.contains("--tag"), || format!("a bad --tag: exit {code}: {stderr}"))
}

/// `dbload ARGS --output json` with its data directory in `data_home`:
/// the exit code, the report and stderr.
fn json_run(args: &[&str], data_home: &Path) -> Result<(i32, Json, String)> {
    let (code, stdout, stderr) =
        dbload_bin(&[args, &["--output", "json"]].concat(), &[("XDG_DATA_HOME", data_home.to_str().context("path")?)]);
    let report = serde_json::from_str(&stdout).with_context(|| format!("{args:?}: exit {code}: {stdout}{stderr}"))?;
    Ok((code, report, stderr))
}

/// The files of the default results directory under `data_home`.
fn kept(data_home: &Path) -> Result<Vec<String>> {
    let dir = data_home.join("dbload/results");
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> =
        std::fs::read_dir(dir)?.map(|e| Ok(e?.file_name().to_string_lossy().into_owned())).collect::<Result<_>>()?;
    names.sort();
    Ok(names)
}

/// The commit the tested binary was built from, as its reports say it:
/// `-dirty` when its sources differ from HEAD.
fn git_head() -> Option<String> {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").args(args).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "HEAD"])?;
    let changed = git(&["status", "--porcelain", "--", "src", "Cargo.toml", "Cargo.lock", "build.rs"])?;
    Some(if changed.is_empty() { head } else { format!("{head}-dirty") })
}

/// The `run` object of every command's report is there, well formed and
/// true (the schemas, which require it, are checked by each command's own
/// schema test): a UUID v7, UTC times in order, the command line without
/// the password, the commit this test was built from, and the address the
/// server answered on.
fn every_command_reports_when_what_and_where(ctx: &Ctx) -> Result<()> {
    ctx.query("DO $$ BEGIN CREATE ROLE secretive LOGIN SUPERUSER PASSWORD 'hunter2'; EXCEPTION WHEN duplicate_object THEN NULL; END $$")?;
    let secret_url = ctx.url.replace("postgres@", "secretive:hunter2@");
    ctx.query("DROP TABLE IF EXISTS results_fake; CREATE TABLE results_fake (id int, name text)")?;
    let home = tempfile::tempdir()?;
    let out = home.path().join("export");
    std::fs::create_dir(&out)?;
    let workload = home.path().join("w.yml");
    std::fs::write(&workload, "- query: select 1\n  ratio: 1\n")?;
    let mixed = home.path().join("mixed.yml");
    std::fs::write(&mixed, format!("duration: 1s\ningest:\n  table: results_mixed\n  drop_table: true\n  workers: 1\nworkloads:\n  - name: reads\n    file: {}\n", workload.display()))?;
    let (url, out, workload, mixed) =
        (ctx.url.as_str(), out.to_str().unwrap(), workload.to_str().unwrap(), mixed.to_str().unwrap());
    let runs: Vec<Vec<&str>> = vec![
        vec!["ingest", "--url", &secret_url, "--table", "results_meta", "--drop-table", "--rows", "2000"],
        vec!["insert-fake-data", "--url", url, "--table", "results_fake", "--num-records", "100"],
        vec!["timeit", "--url", url, "-s", "select 1", "--repeat", "5"],
        vec!["workload", workload, "--url", url, "--max-queries", "10"],
        vec!["export", "--url", url, "--table", "results_meta", "--out", out],
        vec![
            "insert-from-sql",
            "--url",
            url,
            "--query",
            "select * from results_fake limit 10",
            "--table",
            "results_fake",
        ],
        vec!["run", mixed, "--url", url],
    ];
    // Each run kept in a database too: its headline columns filled for every command.
    ctx.query("DROP SCHEMA IF EXISTS results_every CASCADE; CREATE SCHEMA results_every")?;
    let store = ctx.url_with("options=-csearch_path%3Dresults_every");
    let head = git_head();
    for args in runs {
        let args = [&args[..], &["--results-url", &store]].concat();
        let (code, report, stderr) = json_run(&args, home.path())?;
        ensure(code == 0 && !stderr.contains("warning"), || format!("{args:?}: exit {code}: {stderr}"))?;
        let run = &report["run"];
        let id = run["run_id"].as_str().context("run_id")?;
        let uuid = uuid::Uuid::parse_str(id)?;
        ensure(uuid.get_version_num() == 7, || format!("{args:?}: {id} is not a UUID v7"))?;
        let time = |k: &str| {
            chrono::DateTime::parse_from_rfc3339(run[k].as_str().unwrap_or(""))
                .with_context(|| format!("{args:?}: {k}: {run}"))
        };
        let (started, ended) = (time("started_at")?, time("ended_at")?);
        ensure(started <= ended && started.offset().local_minus_utc() == 0, || format!("{args:?}: {run}"))?;
        let line = run["command_line"].as_str().unwrap_or("");
        ensure(line.contains(&format!("{} ", args[0])) && !line.contains("hunter2"), || format!("{args:?}: {line}"))?;
        if args[2] == secret_url {
            ensure(line.contains("secretive:***@"), || line.to_string())?;
        }
        ensure(run["dbload_version"] == env!("CARGO_PKG_VERSION"), || run.to_string())?;
        if let Some(head) = &head {
            ensure(run["git_commit"] == head.as_str(), || format!("{run} is not built from {head}"))?;
        }
        let client = &run["client"];
        ensure(
            client["cpus"].as_u64().is_some_and(|n| n >= 1)
                && client["host_name"].as_str().is_some_and(|h| !h.is_empty()),
            || client.to_string(),
        )?;
        // The harness's server is reached over TCP on 127.0.0.1.
        let setup = ["/setup/target", "/setup/source", "/setup", "/ingest/setup"]
            .iter()
            .find_map(|p| report.pointer(p).filter(|s| s.is_object()));
        let setup = setup.context("no setup")?;
        let address = setup["server_address"].as_str().unwrap_or("");
        ensure(address.starts_with("127.0.0.1:"), || format!("{args:?}: server_address {address:?}"))?;
    }
    let rows = ctx.query(
        "SELECT command, engine, target IS NOT NULL, throughput_unit, p99_ms IS NOT NULL, run_id = (report->'run'->>'run_id')::uuid \
         FROM results_every.dbload_runs ORDER BY started_at",
    )?;
    let commands: Vec<&str> = rows.iter().filter_map(|r| r[0].as_deref()).collect();
    let expected = ["ingest", "insert-fake-data", "timeit", "workload", "export", "insert-from-sql", "run"];
    ensure(commands == expected, || format!("{commands:?}"))?;
    for r in &rows {
        let filled = r[1].as_deref() == Some("postgres") && r[2].as_deref() == Some("t") && r[3].is_some();
        ensure(filled && r[4].as_deref() == Some("t") && r[5].as_deref() == Some("t"), || format!("{r:?}"))?;
    }
    Ok(())
}

/// By default a run is kept in `$XDG_DATA_HOME/dbload/results` as its JSON
/// report and an HdrHistogram interval log, both named by its run_id; the
/// log's histogram gives the report's percentiles, and the text report's
/// last line says where it was kept.
fn the_default_store_keeps_a_report_and_its_histograms(ctx: &Ctx) -> Result<()> {
    let home = tempfile::tempdir()?;
    let args = [
        "ingest",
        "--url",
        &ctx.url,
        "--table",
        "results_dir",
        "--drop-table",
        "--rows",
        "20000",
        "--batch-size",
        "500",
    ];
    let html = home.path().join("report.html");
    let (code, report, stderr) = json_run(&[&args[..], &["--html", html.to_str().unwrap()]].concat(), home.path())?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let id = report["run"]["run_id"].as_str().context("run_id")?.to_string();
    let page = std::fs::read_to_string(&html)?;
    ensure(page.contains(&format!("<dt>Run</dt><dd>{id} ")) && page.contains("answering on 127.0.0.1:"), || {
        "the HTML lacks the run".into()
    })?;
    ensure(kept(home.path())? == [format!("{id}.hlog"), format!("{id}.json")], || format!("{:?}", kept(home.path())))?;
    let dir = home.path().join("dbload/results");
    let stored: Json = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{id}.json")))?)?;
    ensure(stored == report, || "the stored report differs from the one printed".into())?;
    let log = std::fs::read_to_string(dir.join(format!("{id}.hlog")))?;
    let histograms = dbload::results::hlog::read(&log)?;
    let (_, latency) =
        histograms.iter().find(|(tag, _)| tag.as_deref() == Some("latency")).context("no latency histogram")?;
    let lat = &report["latency_ms"];
    ensure(latency.len() == lat["count"].as_u64().unwrap_or(0), || format!("{} values, report {lat}", latency.len()))?;
    for (q, key) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99_9")] {
        let from_log = latency.value_at_quantile(q) as f64 / 1000.0;
        ensure(from_log == lat[key].as_f64().unwrap_or(-1.0), || format!("{key}: log {from_log}, report {lat}"))?;
    }
    // A second run, in text: two runs kept, the last line naming the report file.
    let data_home = home.path().to_str().unwrap();
    let (code, text, stderr) = dbload_bin(&args[..], &[("XDG_DATA_HOME", data_home)]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(kept(home.path())?.len() == 4, || format!("{:?}", kept(home.path())))?;
    let last = text.lines().last().unwrap_or("");
    ensure(last.starts_with("Kept:") && last.ends_with(".json") && last.contains(&dir.display().to_string()), || {
        text.clone()
    })?;
    ensure(text.contains("Run:") && text.contains("Host:     ") && text.contains("Command:  "), || text.clone())
}

/// `--no-results` keeps nothing, and no run writes into the current directory.
fn no_results_keeps_nothing_anywhere(ctx: &Ctx) -> Result<()> {
    let home = tempfile::tempdir()?;
    let cwd = tempfile::tempdir()?;
    let program = env!("CARGO_BIN_EXE_dbload");
    for extra in [&["--no-results"][..], &[]] {
        let out = std::process::Command::new(program)
            .args(["ingest", "--url", &ctx.url, "--table", "results_none", "--drop-table", "--rows", "1000"])
            .args(extra)
            .env("XDG_DATA_HOME", home.path())
            .current_dir(cwd.path())
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        ensure(out.status.success(), || format!("{extra:?}: {text}{}", String::from_utf8_lossy(&out.stderr)))?;
        if !extra.is_empty() {
            ensure(kept(home.path())?.is_empty(), || format!("--no-results kept {:?}", kept(home.path())))?;
            ensure(text.lines().last().is_some_and(|l| l.contains("--no-results")), || text.to_string())?;
        }
    }
    ensure(kept(home.path())?.len() == 2, || "the run without --no-results was not kept".into())?;
    ensure(std::fs::read_dir(cwd.path())?.next().is_none(), || "a run wrote into the current directory".into())
}

/// `--results-url` makes `dbload_runs` and `dbload_timeline` when they are
/// missing and inserts each run, which SQL then reads back.
fn results_url_creates_its_tables_and_inserts_the_run(ctx: &Ctx) -> Result<()> {
    // Its own schema, first on the search path: the tables start missing.
    ctx.query("DROP SCHEMA IF EXISTS results_url CASCADE; CREATE SCHEMA results_url")?;
    let store = ctx.url_with("options=-csearch_path%3Dresults_url");
    let home = tempfile::tempdir()?;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let args = [
            "ingest",
            "--url",
            &ctx.url,
            "--table",
            "results_db",
            "--drop-table",
            "--rate",
            "4000",
            "--duration",
            "2s",
            "--results-url",
            &store,
        ];
        let (code, report, stderr) = json_run(&args, home.path())?;
        ensure(code == 0 && !stderr.contains("warning"), || format!("exit {code}: {stderr}"))?;
        ids.push((report["run"]["run_id"].as_str().context("run_id")?.to_string(), report));
    }
    let count = ctx.scalar("SELECT count(*) FROM results_url.dbload_runs")?;
    ensure(count == "2", || format!("{count} rows in dbload_runs"))?;
    for (id, report) in &ids {
        let row = ctx.query(&format!(
            "SELECT command, status, exit_code, throughput_unit, round(throughput::numeric, 3), p99_ms, \
             report->'run'->>'command_line', schema_version, histograms LIKE '%Tag=latency,%', engine, target \
             FROM results_url.dbload_runs WHERE run_id = '{id}'"
        ))?;
        let r = row.first().context("the run is not in dbload_runs")?;
        let text = |i: usize| r[i].clone().unwrap_or_default();
        ensure(
            text(0) == "ingest"
                && text(1) == "ok"
                && text(2) == "0"
                && text(3) == "rows/s"
                && text(7) == "2"
                && text(8) == "t"
                && text(9) == "postgres"
                && text(10).starts_with("postgres://postgres")
                && text(10).contains("@127.0.0.1:"),
            || format!("{r:?}"),
        )?;
        let rate = format!("{:.3}", report["rows_per_sec"].as_f64().unwrap_or(0.0));
        ensure(text(4) == rate, || format!("throughput {} but the report says {rate}", text(4)))?;
        ensure(text(5).parse::<f64>().ok() == report["latency_ms"]["p99"].as_f64(), || format!("p99 {}", text(5)))?;
        ensure(text(6).contains("--results-url"), || text(6))?;
        let seconds = ctx
            .scalar(&format!("SELECT count(*) FROM results_url.dbload_timeline WHERE run_id = '{id}' AND part = ''"))?;
        let expected = report["timeline"].as_array().map_or(0, Vec::len);
        ensure(expected >= 1 && seconds == expected.to_string(), || {
            format!("{seconds} timeline rows, the report has {expected}")
        })?;
        let rows = ctx.scalar(&format!("SELECT sum(rows) FROM results_url.dbload_timeline WHERE run_id = '{id}'"))?;
        let in_report: u64 =
            report["timeline"].as_array().into_iter().flatten().map(|e| e["rows"].as_u64().unwrap_or(0)).sum();
        ensure(rows == in_report.to_string(), || format!("{rows} rows in the timeline, {in_report} in the report"))?;
    }
    let comment = ctx.scalar("SELECT obj_description('results_url.dbload_runs'::regclass, 'pg_class')")?;
    ensure(comment.contains("schema version 2"), || comment)
}

/// Issue 35: `dbload_timeline` had no p50 and p99 columns, though every
/// report's `timeline[]` has them. A store made before them (its timeline
/// without the two columns, its runs kept) takes the next run in place:
/// the columns are added, the old rows kept (null there), the new run's
/// seconds carry the report's figures.
fn a_store_without_the_timeline_percentiles_gets_them_in_place(ctx: &Ctx) -> Result<()> {
    ctx.query("DROP SCHEMA IF EXISTS results_p99 CASCADE; CREATE SCHEMA results_p99")?;
    let store = ctx.url_with("options=-csearch_path%3Dresults_p99");
    let home = tempfile::tempdir()?;
    let args = ["timeit", "--url", &ctx.url, "-s", "select 1", "--duration", "2s", "--results-url", &store];
    let (code, _, stderr) = json_run(&args, home.path())?;
    ensure(code == 0 && !stderr.contains("warning"), || format!("exit {code}: {stderr}"))?;
    // The layout before the columns: the timeline as it was.
    ctx.query(
        "ALTER TABLE results_p99.dbload_timeline DROP COLUMN IF EXISTS latency_p50_ms,          DROP COLUMN IF EXISTS latency_p99_ms",
    )?;
    let (code, report, stderr) = json_run(&args, home.path())?;
    ensure(code == 0 && !stderr.contains("warning"), || format!("exit {code}: {stderr}"))?;
    let columns = ctx.scalar(
        "SELECT string_agg(attname, ',' ORDER BY attname) FROM pg_attribute          WHERE attrelid = 'results_p99.dbload_timeline'::regclass AND attname LIKE 'latency_p%' AND NOT attisdropped",
    )?;
    ensure(columns == "latency_p50_ms,latency_p99_ms", || {
        format!("dbload_timeline's percentile columns: {columns:?}")
    })?;
    let id = report["run"]["run_id"].as_str().context("run_id")?;
    let stored = ctx.query(&format!(
        "SELECT latency_p50_ms, latency_p99_ms FROM results_p99.dbload_timeline WHERE run_id = '{id}' AND part = ''          ORDER BY second"
    ))?;
    let in_report: Vec<[Option<f64>; 2]> = report["timeline"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| ["latency_p50_ms", "latency_p99_ms"].map(|k| e[k].as_f64()))
        .collect();
    let number = |v: &Option<String>| v.as_deref().and_then(|v| v.parse::<f64>().ok());
    let stored: Vec<[Option<f64>; 2]> = stored.iter().map(|r| [number(&r[0]), number(&r[1])]).collect();
    ensure(!stored.is_empty() && stored[0][1].is_some() && stored == in_report, || {
        format!("stored {stored:?}, the report {in_report:?}")
    })?;
    let runs = ctx.scalar("SELECT count(*) FROM results_p99.dbload_runs")?;
    ensure(runs == "2", || format!("{runs} runs: the first is kept"))
}

/// Issue 34, item 3: the sampler's seconds (the report's `server.seconds`)
/// are kept in `dbload_server_timeline`, one row a second, and read back
/// as the report has them: its wait events, WAL bytes, checkpoints and the
/// engine's own figures. A store made before the table (dropped here), or
/// before its `engine` column, gets it at its next run.
fn the_servers_seconds_are_kept_in_dbload_server_timeline(ctx: &Ctx) -> Result<()> {
    ctx.query("DROP SCHEMA IF EXISTS results_server CASCADE; CREATE SCHEMA results_server")?;
    let store = ctx.url_with("options=-csearch_path%3Dresults_server");
    let home = tempfile::tempdir()?;
    let args = ["timeit", "--url", &ctx.url, "-s", "select 1", "--duration", "3s", "--results-url", &store];
    let (code, _, stderr) = json_run(&args, home.path())?;
    ensure(code == 0 && !stderr.contains("warning"), || format!("exit {code}: {stderr}"))?;
    ctx.query("DROP TABLE IF EXISTS results_server.dbload_server_timeline")?;
    let (code, report, stderr) = json_run(&args, home.path())?;
    ensure(code == 0 && !stderr.contains("warning"), || format!("exit {code}: {stderr}"))?;
    let id = report["run"]["run_id"].as_str().context("run_id")?;
    let stored = ctx.query(&format!(
        "SELECT second, own_waits::text, other_waits::text, wal_bytes, checkpoints_timed, checkpoints_requested, \
         at = (SELECT started_at FROM results_server.dbload_runs WHERE run_id = '{id}') + second * interval '1 s' \
         FROM results_server.dbload_server_timeline WHERE run_id = '{id}' AND part = '' ORDER BY second"
    ))?;
    let seconds = report["server"]["seconds"].as_array().context("the report's server.seconds")?;
    ensure(!seconds.is_empty() && stored.len() == seconds.len(), || {
        format!("{} rows stored, {} seconds in the report", stored.len(), seconds.len())
    })?;
    let json = |t: &Option<String>| t.as_deref().map(serde_json::from_str::<Json>).transpose();
    for (row, s) in stored.iter().zip(seconds) {
        let text = |k: &str| s[k].as_u64().map(|n| n.to_string());
        let expected = [text("second"), None, None, text("wal_bytes"), text("checkpoints_timed")];
        ensure(row[0] == expected[0] && row[3] == expected[3] && row[4] == expected[4], || format!("{row:?} for {s}"))?;
        ensure(json(&row[1])? == Some(s["own_waits"].clone()), || format!("{row:?} for {s}"))?;
        ensure(json(&row[2])? == Some(s["other_waits"].clone()), || format!("{row:?} for {s}"))?;
        ensure(row[5] == text("checkpoints_requested") && row[6].as_deref() == Some("t"), || format!("{row:?}"))?;
    }
    // A store whose table lacks the engine's figures (made before them)
    // gets the column at its next run; PostgreSQL's seconds have none: {}.
    ctx.query("ALTER TABLE results_server.dbload_server_timeline DROP COLUMN IF EXISTS engine")?;
    let (code, report, stderr) = json_run(&args, home.path())?;
    ensure(code == 0 && !stderr.contains("warning"), || format!("exit {code}: {stderr}"))?;
    let id = report["run"]["run_id"].as_str().context("run_id")?;
    let engine = ctx.query(&format!(
        "SELECT engine::text FROM results_server.dbload_server_timeline WHERE run_id = '{id}' ORDER BY second"
    ))?;
    ensure(!engine.is_empty() && engine.iter().all(|r| r[0].as_deref() == Some("{}")), || format!("{engine:?}"))
}

/// `results list` and `results show` read the directory and the database alike.
fn list_and_show_read_both_stores(ctx: &Ctx) -> Result<()> {
    ctx.query("DROP SCHEMA IF EXISTS results_show CASCADE; CREATE SCHEMA results_show")?;
    let store = ctx.url_with("options=-csearch_path%3Dresults_show");
    let home = tempfile::tempdir()?;
    let dir = home.path().join("elsewhere");
    let dir = dir.to_str().unwrap();
    let args =
        ["timeit", "--url", &ctx.url, "-s", "select 1", "--repeat", "20", "--results", dir, "--results-url", &store];
    let (code, report, stderr) = json_run(&args, home.path())?;
    ensure(code == 0 && !stderr.contains("warning"), || format!("exit {code}: {stderr}"))?;
    ensure(kept(home.path())?.is_empty(), || "--results DIR kept the run in the default directory too".into())?;
    let id = report["run"]["run_id"].as_str().context("run_id")?;
    for from in [["--results", dir], ["--results-url", &store]] {
        let (code, list, stderr) = dbload_bin(&[&["results", "list"][..], &from].concat(), &[]);
        ensure(code == 0, || format!("{from:?}: exit {code}: {stderr}"))?;
        let line =
            list.lines().find(|l| l.starts_with(id)).with_context(|| format!("{from:?}: {id} not listed: {list}"))?;
        ensure(line.contains("timeit") && line.contains("queries/s") && line.contains(" ok "), || line.to_string())?;
        let (code, shown, stderr) =
            dbload_bin(&[&["results", "show", &id[..13], "--output", "json"][..], &from].concat(), &[]);
        ensure(code == 0, || format!("{from:?}: exit {code}: {stderr}"))?;
        let shown: Json = serde_json::from_str(&shown)?;
        ensure(shown == report, || format!("{from:?}: the report shown differs from the one printed"))?;
        let (code, log, _) = dbload_bin(&[&["results", "show", id, "--histograms"][..], &from].concat(), &[]);
        let histograms = dbload::results::hlog::read(&log)?;
        ensure(code == 0 && histograms.len() == 2, || format!("{from:?}: {log}"))?;
        let (code, _, stderr) = dbload_bin(&[&["results", "show", "ffffffff"][..], &from].concat(), &[]);
        ensure(code == 2 && stderr.contains("no run with that id"), || format!("{from:?}: exit {code}: {stderr}"))?;
    }
    Ok(())
}

/// A store that cannot be written is said on stderr, naming where and why,
/// and the run keeps its exit code and its report.
fn a_store_that_fails_is_a_warning_not_a_failed_run(ctx: &Ctx) -> Result<()> {
    let home = tempfile::tempdir()?;
    let file = home.path().join("a-file");
    std::fs::write(&file, "")?;
    let not_a_dir = file.join("results");
    let args = [
        "ingest",
        "--url",
        &ctx.url,
        "--table",
        "results_fail",
        "--drop-table",
        "--rows",
        "1000",
        "--results",
        not_a_dir.to_str().unwrap(),
        "--results-url",
        "postgres://nobody:hunter2@127.0.0.1:1/none",
    ];
    let (code, text, stderr) = dbload_bin(&args, &[]);
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(stderr.contains(&format!("warning: the run was not kept in {}", not_a_dir.display())), || stderr.clone())?;
    ensure(
        stderr.contains("warning: the run was not kept in the database postgres://nobody:***@127.0.0.1:1/none"),
        || stderr.clone(),
    )?;
    ensure(!stderr.contains("hunter2") && !text.contains("hunter2"), || "a password was printed".into())?;
    ensure(text.lines().last().is_some_and(|l| l.starts_with("Not kept:")), || text.clone())
}
