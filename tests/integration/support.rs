//! Shared helpers: run dbload in process or as a binary, query the server,
//! recompute what the generators wrote.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;

use dbload::cli::{Cli, Command};
use dbload::config::IngestConfig;
use dbload::driver::PgTarget;
use dbload::encode::unnest::ArrayParam;
use dbload::model::{Batch, Values};
use dbload::report::ingest::IngestReport;
use dbload::throwaway::LocalPostgres;
use dbload::Finished;
use postgres_types::ToSql;

pub struct Ctx {
    /// postgres://postgres@127.0.0.1:PORT/postgres?passfile=DIR/pgpass: the
    /// password comes from the server's password file, as a user's would.
    pub url: String,
    target: PgTarget,
}

impl Ctx {
    pub fn new(server: &LocalPostgres) -> Ctx {
        let url = format!("{}?passfile={}", server.url(), server.passfile().display());
        Ctx { url, target: server.target() }
    }

    /// The server's Unix socket, logged in as trusted.
    pub fn target(&self) -> &PgTarget {
        &self.target
    }

    /// The harness URL with one more parameter (it already has a `?`).
    pub fn url_with(&self, param: &str) -> String {
        let sep = if self.url.contains('?') { '&' } else { '?' };
        format!("{}{sep}{param}", self.url)
    }

    /// The same server, its connections named `app` in `pg_stat_activity`
    /// (so a test can find, or terminate, its own and no other test's).
    pub fn with_app(&self, app: &str) -> Ctx {
        Ctx { url: self.url_with(&format!("application_name={app}")), target: self.target.clone() }
    }

    /// A server given by URL (the engines' tests: `DBLOAD_TEST_*_URL`).
    pub fn from_url(url: &str) -> Result<Ctx> {
        Ok(Ctx { url: url.to_string(), target: PgTarget::from_url(url, "test URL", &|_| None)? })
    }

    /// `dbload ingest --url URL --quiet ARGS`, in process, hermetic env.
    pub fn ingest(&self, args: &str) -> Result<Finished<IngestReport>> {
        let a = ingest_args(&format!("--url {} --quiet {args}", self.url));
        let mut out = Vec::new();
        dbload::ingest(a, &|_| None, &mut out)
    }

    /// Runs `sql` and returns every value of every row as text.
    pub fn query(&self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        rt.block_on(async {
            let client = self.target.connect().await?;
            let rows = client.simple_query(sql).await.with_context(|| sql.to_string())?;
            Ok(rows
                .into_iter()
                .filter_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => {
                        Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
                    }
                    _ => None,
                })
                .collect())
        })
    }

    /// Runs `stmt`, a count, with one array parameter per column of `batch`
    /// bound as the unnest method binds them.
    pub fn count_bound(&self, stmt: &str, batch: &Batch) -> Result<u64> {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        rt.block_on(async {
            let client = self.target.connect().await?;
            let arrays: Vec<ArrayParam> =
                batch.columns.iter().map(|values| ArrayParam { values, len: batch.len }).collect();
            let params: Vec<&(dyn ToSql + Sync)> = arrays.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
            let n: i64 = client.query_one(stmt, &params).await.with_context(|| stmt.to_string())?.get(0);
            Ok(n as u64)
        })
    }

    /// The first value of the first row, as text.
    pub fn scalar(&self, sql: &str) -> Result<String> {
        self.query(sql)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
            .with_context(|| format!("no value from {sql}"))
    }
}

/// Parses `dbload ingest ARGS` as the binary would.
pub fn ingest_args(args: &str) -> dbload::cli::IngestArgs {
    let argv = std::iter::once("dbload").chain(std::iter::once("ingest")).chain(args.split_whitespace());
    match Cli::parse_from(argv).command {
        Command::Ingest(a) => a,
        _ => unreachable!("parsed as ingest"),
    }
}

/// The resolved config of `args`, as dbload would run it (resolving connects to nothing).
pub fn config(args: &str) -> IngestConfig {
    IngestConfig::resolve(ingest_args(&format!("--url postgres://u@127.0.0.1:1/d {args}")), &|_| None)
        .expect("valid test arguments")
}

/// Sums over every generated row, computed exactly (as integers) so they can be
/// compared with the same sums computed by the server, whatever the row order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Checksum {
    pub rows: u64,
    /// Sum of the timestamps in µs since the Unix epoch.
    pub time_us: i128,
    /// Sum of column 1 (device_id) for measurement; of usage_user for cpu.
    pub ints: i128,
    /// Sum of the bit patterns of m1 (measurement) as signed 64-bit integers.
    pub m1_bits: i128,
}

/// What the generators of `cfg` produce.
pub fn expected(cfg: &IngestConfig) -> Checksum {
    let mut sum = Checksum::default();
    let mut batch = Batch::new(&cfg.schema);
    for (w, &rows) in cfg.rows_per_worker.iter().enumerate() {
        let mut g = cfg.model.generator(cfg.load.seed, w as u32, cfg.start_us, rows);
        while g.next_batch(&mut batch, 10_000) {
            sum.rows += batch.len as u64;
            for (i, col) in batch.columns.iter().enumerate() {
                match col {
                    Values::Timestamptz(v) => sum.time_us += v.iter().map(|&t| t as i128).sum::<i128>(),
                    Values::Oid(v) => sum.ints += v.iter().map(|&d| d as i128).sum::<i128>(),
                    Values::Int4(v) if i == 2 => sum.ints += v.iter().map(|&d| d as i128).sum::<i128>(),
                    Values::Float8(v) if i == 2 => {
                        sum.m1_bits += v.iter().map(|&x| x.to_bits() as i64 as i128).sum::<i128>()
                    }
                    Values::Jsonb { .. } if cfg.model.name() == "measurement" => {
                        for r in 0..batch.len {
                            let j: serde_json::Value = serde_json::from_str(col.json(r)).unwrap();
                            sum.m1_bits += j["m1"].as_f64().unwrap().to_bits() as i64 as i128;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    sum
}

/// The same sums computed by the server over `table`.
pub fn found(ctx: &Ctx, cfg: &IngestConfig, table: &str) -> Result<Checksum> {
    let time = cfg.schema.columns[0].name.as_str();
    let (ints, m1) = match (cfg.model.name(), cfg.schema.columns[2].name.as_str()) {
        ("cpu", _) => ("usage_user::int8", "0::int8"),
        (_, "metrics") => ("device_id::int8", "float8send((metrics->>'m1')::float8)"),
        _ => ("device_id::int8", "float8send(m1)"),
    };
    let m1 = if m1.starts_with("float8send") {
        format!("('x' || encode({m1}, 'hex'))::bit(64)::int8")
    } else {
        m1.to_string()
    };
    let row = ctx.query(&format!(
        "SELECT count(*), coalesce(sum((extract(epoch FROM {time}) * 1000000)::int8::numeric), 0), \
         coalesce(sum({ints}::numeric), 0), coalesce(sum({m1}::numeric), 0) FROM {table}"
    ))?;
    let v = |i: usize| row[0][i].as_deref().unwrap_or("0").parse::<i128>().context("numeric sum");
    Ok(Checksum { rows: v(0)? as u64, time_us: v(1)?, ints: v(2)?, m1_bits: v(3)? })
}

/// Runs the dbload binary; returns (exit code, stdout, stderr).
pub fn dbload_bin(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_dbload"));
    cmd.args(args).env_remove("DATABASE_URL").env_remove("PGHOST").env_remove("PGPORT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running dbload");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs the binary with `argv` (its stdin fed by `feed`, if given, until
/// the pipe closes), sends SIGINT after `after`, and checks that it stops
/// within 15 s with exit code 130 and a JSON report marked interrupted
/// that counts some rows; returns that report.
pub fn interrupted(
    argv: &[&str],
    feed: Option<fn(&mut dyn std::io::Write)>,
    after: Duration,
) -> Result<serde_json::Value> {
    let report = interrupt(argv, feed, after)?;
    ensure(report["rows"].as_u64() > Some(0), || report.to_string())?;
    Ok(report)
}

/// [`interrupted`] for any command: the same checks but for the rows.
pub fn interrupt(
    argv: &[&str],
    feed: Option<fn(&mut dyn std::io::Write)>,
    after: Duration,
) -> Result<serde_json::Value> {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::io::Read;
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(argv)
        .stdin(if feed.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let feeder = feed.zip(child.stdin.take()).map(|(feed, mut stdin)| std::thread::spawn(move || feed(&mut stdin)));
    std::thread::sleep(after);
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT)?;
    let t = Instant::now();
    let status = child.wait()?;
    let mut stdout = String::new();
    child.stdout.take().context("stdout")?.read_to_string(&mut stdout)?;
    if let Some(feeder) = feeder {
        let _ = feeder.join();
    }
    ensure(t.elapsed() < Duration::from_secs(15), || format!("took {:?} to stop", t.elapsed()))?;
    let mut stderr = String::new();
    child.stderr.take().context("stderr")?.read_to_string(&mut stderr)?;
    ensure(status.code() == Some(130), || format!("exit {status:?}: {stderr}"))?;
    let report: serde_json::Value = serde_json::from_str(&stdout).with_context(|| stdout.clone())?;
    ensure(report["status"] == "interrupted", || stdout.clone())?;
    Ok(report)
}

/// Runs the binary with `argv` and expects bad usage: exit 2, `culprit`
/// named on stderr, no report on stdout.
pub fn refused(argv: &[&str], culprit: &str) -> Result<()> {
    let args = argv.join(" ");
    let (code, stdout, stderr) = dbload_bin(argv, &[]);
    ensure(code == 2, || format!("{args}: exit {code}, stderr {stderr}"))?;
    ensure(stderr.contains(culprit), || format!("{args}: stderr does not name {culprit}: {stderr}"))?;
    ensure(stdout.is_empty(), || format!("{args}: printed a report: {stdout}"))
}

/// Checks a report's `accounting`: `requested = ok + failed + rejected +
/// unattempted`, with `requested` as given; returns `unattempted`.
pub fn accounted(accounting: &serde_json::Value, requested: Option<u64>) -> Result<u64> {
    let n = |k: &str| accounting[k].as_u64();
    let (ok, failed, rejected, in_doubt) = (n("ok"), n("failed"), n("rejected"), n("in_doubt"));
    let (Some(ok), Some(failed), Some(rejected), Some(in_doubt)) = (ok, failed, rejected, in_doubt) else {
        anyhow::bail!("no accounting in the report: {accounting}");
    };
    ensure(n("requested") == requested || requested.is_none() && n("requested").is_some(), || {
        format!("requested {:?}, want {requested:?}: {accounting}", n("requested"))
    })?;
    let (Some(total), Some(unattempted)) = (n("requested"), n("unattempted")) else {
        anyhow::bail!("requested or unattempted missing: {accounting}");
    };
    ensure(total == ok + failed + rejected + in_doubt + unattempted, || {
        format!("the identity does not hold: {accounting}")
    })?;
    Ok(unattempted)
}

pub fn ensure(cond: bool, msg: impl FnOnce() -> String) -> Result<()> {
    if cond {
        Ok(())
    } else {
        anyhow::bail!(msg())
    }
}

/// A private TMPDIR for a dbload process, so the throwaway servers it may
/// start can be seen (and their removal checked) without racing other tests.
pub fn private_tmp() -> Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir()?;
    // The server runs as the postgres account when we are root: let it in.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    Ok(dir)
}

/// Entries in a directory.
pub fn entries(dir: &std::path::Path) -> Result<Vec<String>> {
    Ok(std::fs::read_dir(dir)?.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
}

/// A report printed as JSON (`--output json`), parsed.
pub fn json(stdout: &str) -> Result<serde_json::Value> {
    serde_json::from_str(stdout).with_context(|| format!("not JSON: {stdout}"))
}

/// Writes `text` to `name` in `dir`; returns its path.
pub fn write_file(dir: &tempfile::TempDir, name: &str, text: &str) -> Result<String> {
    let path = dir.path().join(name);
    std::fs::write(&path, text)?;
    Ok(path.to_str().context("a temporary path")?.to_string())
}

/// `report` (JSON) follows the schema `schema` (its text).
pub fn follows(schema: &str, report: &serde_json::Value) -> Result<()> {
    let schema: serde_json::Value = serde_json::from_str(schema).context("schema file")?;
    let validator = jsonschema::validator_for(&schema).context("compiling the schema")?;
    let errors: Vec<String> = validator.iter_errors(report).map(|e| format!("{}: {e}", e.instance_path())).collect();
    ensure(errors.is_empty(), || format!("report against the schema: {errors:?}"))
}

/// Runs `run` (its connections named `app`) and terminates, a second in,
/// the connection of one of its workers: one whose current statement
/// meets the condition `running`.
pub fn terminate_one_running<R: Send>(
    ctx: &Ctx,
    app: &str,
    running: &str,
    run: impl FnOnce() -> Result<R> + Send,
) -> Result<R> {
    let (out, killed) = std::thread::scope(|s| {
        let run = s.spawn(run);
        std::thread::sleep(Duration::from_secs(1));
        // On a loaded machine the workers may still be logging in: look again a while.
        let kill = format!(
            "SELECT count(pg_terminate_backend(pid)) FROM (SELECT pid FROM pg_stat_activity \
             WHERE application_name = '{app}' AND {running} ORDER BY pid LIMIT 1) AS one"
        );
        let looking = Instant::now();
        let killed = loop {
            match ctx.scalar(&kill) {
                Ok(n) if n == "0" && looking.elapsed() < Duration::from_secs(10) && !run.is_finished() => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                other => break other,
            }
        };
        (run.join().expect("the run does not panic"), killed)
    });
    let killed = killed?;
    ensure(killed == "1", || format!("terminated {killed} connections"))?;
    out
}
