//! Records the git commit dbload is built from, for every report's `run`
//! metadata (`DBLOAD_GIT_COMMIT`). A build from a source tarball (no `.git`,
//! or no git) says `unknown` rather than failing.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string()).filter(|t| out.status.success() && !t.is_empty())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DBLOAD_GIT_COMMIT={commit}");
    // Built again when HEAD moves (a commit on the branch, a checkout). Only
    // files that exist: Cargo would rebuild every time for a missing one (a
    // branch whose ref is packed).
    let branch = git(&["rev-parse", "--symbolic-full-name", "HEAD"]);
    let watched = [Some("HEAD".to_string()), branch, Some("packed-refs".into())];
    for path in watched.iter().flatten().filter_map(|p| git(&["rev-parse", "--git-path", p])) {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
