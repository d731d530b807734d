//! The container image's run stage (Containerfile: `FROM scratch` and the
//! files `scripts/image-root.sh` lays out), tested without a container
//! engine, which this machine cannot fetch: the same files in an empty
//! directory, dbload run from it under `chroot` as the image's non-root
//! user. A library or file the list misses fails here, not in a cluster.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};

use crate::support::{ensure, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![("image::run_stage_files_run_dbload_under_chroot", run_stage_files_run_dbload_under_chroot, Parallel)]
}

/// The image's user (scripts/image-root.sh, Containerfile's USER).
const USER: &str = "10001:10001";

fn run_stage_files_run_dbload_under_chroot(ctx: &Ctx) -> Result<()> {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("image::run_stage_files_run_dbload_under_chroot: skipped, chroot needs root (run the tests as root)");
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("root");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/image-root.sh");
    let laid = Command::new(&script).arg(env!("CARGO_BIN_EXE_dbload")).arg(&root).output();
    let laid = laid.with_context(|| format!("running {}", script.display()))?;
    ensure(laid.status.success(), || format!("{}: {}", script.display(), String::from_utf8_lossy(&laid.stderr)))?;
    // The harness's server, its password file copied in for the image's user.
    let passfile = ctx.url.split_once("passfile=").map(|(_, p)| p).context("the harness URL's passfile")?;
    std::fs::copy(passfile, root.join("tmp/pgpass"))?;
    std::fs::set_permissions(root.join("tmp/pgpass"), std::fs::Permissions::from_mode(0o600))?;
    nix::unistd::chown(&root.join("tmp/pgpass"), Some(10001.into()), Some(10001.into()))?;
    let url = ctx.url.replace(passfile, "/tmp/pgpass");
    let runs: [&[&str]; 3] = [
        &["--version"],
        &["ingest", "--dry-run", "--rows", "10000", "--quiet"],
        &["timeit", "--url", &url, "-s", "select 1", "--repeat", "10", "--quiet"],
    ];
    // Found here: the command's own PATH is the image's.
    let chroot = ["/usr/sbin/chroot", "/usr/bin/chroot", "/sbin/chroot"].into_iter().find(|p| Path::new(p).exists());
    let chroot = chroot.context("no chroot (coreutils)")?;
    for args in runs {
        let out = Command::new(chroot)
            .arg(format!("--userspec={USER}"))
            .arg(&root)
            .arg("dbload")
            .args(args)
            .env_clear()
            .env("PATH", "/usr/local/bin")
            .env("HOME", "/home/dbload")
            .output()?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let what =
            || format!("chroot dbload {args:?}: {}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
        ensure(out.status.success() && !stdout.is_empty(), what)?;
    }
    // The run kept its report in the user's home: the store works there.
    let kept = root.join("home/dbload/.local/share/dbload/results");
    ensure(std::fs::read_dir(&kept).is_ok_and(|mut d| d.next().is_some()), || {
        format!("nothing kept in {}", kept.display())
    })
}
