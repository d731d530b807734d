//! Records the git commit dbload is built from, for every report's `run`
//! metadata (`DBLOAD_GIT_COMMIT`), with `-dirty` appended when the sources
//! the binary is built from differ from that commit (a figure measured with
//! uncommitted changes cannot be reproduced from the commit alone). A build
//! from a source tarball (no `.git`, or no git) says `unknown` rather than
//! failing.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string()).filter(|t| out.status.success() && !t.is_empty())
}

/// What the binary is built from: a change anywhere else (docs, benches)
/// does not make it dirty.
const SOURCES: [&str; 4] = ["src", "Cargo.toml", "Cargo.lock", "build.rs"];

fn main() {
    let changed = git(&[&["status", "--porcelain", "--"], &SOURCES[..]].concat()).is_some();
    let commit = match git(&["rev-parse", "HEAD"]) {
        Some(c) if changed => format!("{c}-dirty"),
        Some(c) => c,
        None => "unknown".into(),
    };
    println!("cargo:rustc-env=DBLOAD_GIT_COMMIT={commit}");
    // Built again when a source changes (the tree may become dirty or
    // clean) or HEAD moves (a commit on the branch, a checkout). Only
    // files that exist: Cargo would rebuild every time for a missing one (a
    // branch whose ref is packed).
    let branch = git(&["rev-parse", "--symbolic-full-name", "HEAD"]);
    let watched = [Some("HEAD".to_string()), branch, Some("packed-refs".into())];
    for path in watched.iter().flatten().filter_map(|p| git(&["rev-parse", "--git-path", p])) {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    for path in SOURCES {
        println!("cargo:rerun-if-changed={path}");
    }
}
