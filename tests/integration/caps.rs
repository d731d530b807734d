//! Every file dbload reads whole is read under its kind's cap, and one over
//! it is bad input (exit 2) that names the file and the cap (issue 29,
//! item 4): the binary is run on a file one byte over the cap, made sparse
//! (`File::set_len`) so the test writes nothing, and on stdin fed one byte
//! more than the cap (which has no size to check).

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Stdio};

use anyhow::{Context, Result};

use crate::support::{ensure, refused, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        (
            "caps::configuration_files_over_64_mib_exit_2_naming_them",
            configuration_files_over_64_mib_exit_2_naming_them,
            Parallel,
        ),
        ("caps::sql_on_stdin_over_64_mib_exits_2", sql_on_stdin_over_64_mib_exits_2, Parallel),
        ("caps::reports_over_256_mib_exit_2_naming_them", reports_over_256_mib_exit_2_naming_them, Parallel),
    ]
}

const CONFIG: u64 = 64 << 20;
const REPORT: u64 = 256 << 20;

/// A sparse file of `len` bytes named `name` in `dir`; returns its path.
fn sparse(dir: &tempfile::TempDir, name: &str, len: u64) -> Result<String> {
    let path = dir.path().join(name);
    let file = std::fs::File::create(&path)?;
    file.set_len(len)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(path.to_str().context("a temporary path")?.to_string())
}

/// Runs the binary with `env` and expects exit 2 with each of `culprits` on stderr.
fn refused_with_env(argv: &[&str], env: &[(&str, &str)], culprits: &[&str]) -> Result<()> {
    let (code, stdout, stderr) = crate::support::dbload_bin(argv, env);
    let args = argv.join(" ");
    ensure(code == 2, || format!("{args}: exit {code}, stderr {stderr}"))?;
    for culprit in culprits {
        ensure(stderr.contains(culprit), || format!("{args}: stderr does not name {culprit}: {stderr}"))?;
    }
    ensure(stdout.is_empty(), || format!("{args}: printed {stdout}"))
}

/// The workload, mixed-run, mapping, pgbench script, password, service and
/// CA certificate files: refused before anything connects.
fn configuration_files_over_64_mib_exit_2_naming_them(ctx: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let big = |name: &str| sparse(&dir, name, CONFIG + 1);
    let cap = "64 MiB";
    let (workload, run, mapping, script) = (big("mix.yml")?, big("run.yml")?, big("map.yml")?, big("s.sql")?);
    for argv in [
        vec!["workload", &workload, "--url", &ctx.url],
        vec!["run", &run, "--url", &ctx.url],
        vec!["insert-fake-data", "--table", "t", "--mapping", &mapping, "--url", &ctx.url],
        vec!["timeit", "-f", &script, "--url", &ctx.url],
    ] {
        let file = argv.iter().find(|a| a.ends_with(".yml") || a.ends_with(".sql")).copied().unwrap_or_default();
        refused_with_env(&argv, &[], &[file, cap])?;
    }
    let pgpass = big("pgpass")?;
    let url = "postgres://u@127.0.0.1:1/d";
    refused_with_env(&["timeit", "-s", "select 1", "--url", url], &[("PGPASSFILE", &pgpass)], &[&pgpass, cap])?;
    let service = big("pg_service.conf")?;
    let env = [("PGSERVICEFILE", service.as_str())];
    refused_with_env(&["timeit", "-s", "select 1", "--url", "service=bench"], &env, &[&service, cap])?;
    let ca = big("ca.pem")?;
    let url = format!("postgres://u@127.0.0.1:1/d?sslmode=verify-ca&sslrootcert={ca}");
    refused_with_env(&["timeit", "-s", "select 1", "--url", &url], &[], &[&ca, cap])
}

/// timeit's statements on stdin: a pipe has no size, so it is read to
/// one byte past the cap.
fn sql_on_stdin_over_64_mib_exits_2(_: &Ctx) -> Result<()> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(["timeit", "--url", "postgres://u@127.0.0.1:1/d"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let feeder = std::thread::spawn(move || {
        let line = [b"select 1;\n".as_slice(); 1024].concat();
        let mut left = CONFIG + 1;
        while left > 0 {
            let n = left.min(line.len() as u64) as usize;
            if stdin.write_all(&line[..n]).is_err() {
                break;
            }
            left -= n as u64;
        }
    });
    let out = child.wait_with_output()?;
    let _ = feeder.join();
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(out.status.code() == Some(2), || format!("exit {:?}: {stderr}", out.status))?;
    ensure(stderr.contains("stdin") && stderr.contains("64 MiB"), || stderr.to_string())
}

/// `compare` and `results show` read reports (files, or the store's runs)
/// under the cap; `results list` warns of one over it.
fn reports_over_256_mib_exit_2_naming_them(_: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let report = sparse(&dir, "a.json", REPORT + 1)?;
    refused(&["compare", &report, &report], &report)?;
    refused(&["compare", &report, &report], "256 MiB")?;
    let store = tempfile::tempdir()?;
    let id = "0190a5b0-0000-7000-8000-000000000000";
    let kept = sparse(&store, &format!("{id}.json"), REPORT + 1)?;
    let at = store.path().to_str().context("a temporary path")?;
    let show = ["results", "show", id, "--results", at];
    refused(&show, &kept)?;
    refused(&show, "256 MiB")?;
    // `results list` passes over it, naming it and the cap, so that it
    // hides none of the runs beside it (see results::list_passes_over_an_unreadable_run).
    let (code, _, stderr) = crate::support::dbload_bin(&["results", "list", "--results", at], &[]);
    ensure(code == 0 && stderr.contains(&kept) && stderr.contains("256 MiB"), || format!("exit {code}: {stderr}"))
}
