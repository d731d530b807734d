//! libpq's password file (`~/.pgpass`, `PGPASSFILE`, the `passfile`
//! keyword), read by libpq's rules, so that a user whose psql logs in
//! without a password on its command line gets the same from dbload.
//!
//! Each line is `host:port:database:user:password`; `*` matches anything,
//! `\:` and `\\` escape; lines starting with `#` are comments; the first
//! line that matches wins. A Unix socket is matched as `localhost`. A file
//! that others may read or write is ignored with a warning, as libpq does:
//! a password anyone can read is no secret.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use crate::file_cap::{self, Cap};

/// What a line must match: host, port, database and user, in file order.
pub(super) type Wanted<'a> = [&'a str; 4];

/// The host as a password file names it: `localhost` for a Unix socket
/// directory or no host at all (libpq's rule).
pub(super) fn host_key(host: &str) -> &str {
    if host.is_empty() || host.starts_with('/') {
        "localhost"
    } else {
        host
    }
}

/// The password of the first line of `file` that matches `wanted`. The
/// inner `Err` is a warning to show: the file exists but is not used, as
/// libpq would not use it. A missing file is no password and no warning.
/// The outer error is bad input: a file over the configuration cap.
pub(super) fn read(file: &Path, wanted: Wanted<'_>) -> anyhow::Result<Result<Option<String>, String>> {
    let Ok(meta) = fs::metadata(file) else { return Ok(Ok(None)) };
    if !meta.is_file() {
        return Ok(Err(format!("password file {} is not a plain file: it is ignored", file.display())));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Ok(Err(format!(
            "password file {} has group or world access, so it is ignored: make it private \
             (chmod 0600 {})",
            file.display(),
            file.display()
        )));
    }
    match file_cap::text_of(file, CAP) {
        Ok(text) => Ok(Ok(lookup(&text, wanted))),
        Err(file_cap::Failure::OverCap) => Err(CAP.refuse(&file.display().to_string(), file_cap::Failure::OverCap)),
        Err(file_cap::Failure::Io(err)) => {
            Ok(Err(format!("password file {} cannot be read ({err}): it is ignored", file.display())))
        }
        Err(file_cap::Failure::NotText(at)) => {
            Ok(Err(format!("password file {} is not UTF-8 text (byte {at}): it is ignored", file.display())))
        }
    }
}

const CAP: Cap = Cap::config("the password file");

/// The password of the first line of `text` that matches `wanted`.
pub(super) fn lookup(text: &str, wanted: Wanted<'_>) -> Option<String> {
    text.lines()
        .map(|line| line.trim_end_matches('\r'))
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .find_map(|line| {
            let rest = wanted.iter().try_fold(line, |rest, want| match_field(rest, want))?;
            Some(password(rest)).filter(|password| !password.is_empty())
        })
}

/// Matches the field at the start of `line` against `wanted`; returns what
/// follows its `:`, or `None` if it does not match.
fn match_field<'a>(line: &'a str, wanted: &str) -> Option<&'a str> {
    if let Some(rest) = line.strip_prefix("*:") {
        return Some(rest);
    }
    let mut chars = line.char_indices();
    let mut want = wanted.chars();
    while let Some((i, c)) = chars.next() {
        let c = match c {
            ':' => return want.next().is_none().then(|| &line[i + 1..]),
            // A backslash at the very end stands for itself.
            '\\' => chars.next().map_or('\\', |(_, escaped)| escaped),
            c => c,
        };
        if want.next() != Some(c) {
            return None;
        }
    }
    None
}

/// The password field: up to an unescaped `:` or the end of the line.
fn password(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        match c {
            ':' => break,
            '\\' => out.push(chars.next().unwrap_or('\\')),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    const FILE: &str = "\
# comment line: db.example:5432:*:*:never
db.example:5432:metrics:bench:first\\:pw
db.example:5432:*:bench:second
*:6000:*:*:any\\\\host
localhost:5432:*:alice:socket
h\\:colon:5432:*:*:escaped
";

    #[test]
    fn first_matching_line_wins() {
        assert_eq!(lookup(FILE, ["db.example", "5432", "metrics", "bench"]).as_deref(), Some("first:pw"));
        assert_eq!(lookup(FILE, ["db.example", "5432", "other", "bench"]).as_deref(), Some("second"));
        assert_eq!(lookup(FILE, ["db.example", "5432", "metrics", "carol"]), None);
    }

    #[test]
    fn wildcards_and_escapes() {
        assert_eq!(lookup(FILE, ["anywhere", "6000", "x", "y"]).as_deref(), Some("any\\host"));
        assert_eq!(lookup(FILE, ["h:colon", "5432", "d", "u"]).as_deref(), Some("escaped"));
        // Fields compare exactly: no prefix matches, no case folding.
        assert_eq!(lookup(FILE, ["db.exampl", "5432", "metrics", "bench"]), None);
        assert_eq!(lookup(FILE, ["DB.example", "5432", "metrics", "bench"]), None);
        assert_eq!(lookup(FILE, ["db.example", "543", "metrics", "bench"]), None);
        // Comments are not entries, and a short line matches nothing.
        assert_eq!(lookup("# a:b:c:d:e\nshort:line\n", ["a", "b", "c", "d"]), None);
        // A password ends at an unescaped `:`; CRLF line ends are fine.
        assert_eq!(lookup("a:1:d:u:pw:extra\r\n", ["a", "1", "d", "u"]).as_deref(), Some("pw"));
    }

    #[test]
    fn sockets_match_localhost() {
        assert_eq!(host_key("/var/run/postgresql"), "localhost");
        assert_eq!(host_key(""), "localhost");
        assert_eq!(host_key("db"), "db");
        assert_eq!(lookup(FILE, [host_key("/tmp"), "5432", "alice", "alice"]).as_deref(), Some("socket"));
    }

    #[test]
    fn a_file_others_can_read_is_ignored_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        fs::write(&file, "*:*:*:*:secret\n").unwrap();
        let wanted = ["h", "5432", "d", "u"];
        for mode in [0o644, 0o640, 0o604, 0o660] {
            fs::set_permissions(&file, fs::Permissions::from_mode(mode)).unwrap();
            let warning = read(&file, wanted).unwrap().unwrap_err();
            assert!(warning.contains("group or world access") && warning.contains("chmod 0600"), "{warning}");
            assert!(!warning.contains("secret"), "{warning}");
        }
        for mode in [0o600, 0o400] {
            fs::set_permissions(&file, fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(read(&file, wanted).unwrap(), Ok(Some("secret".into())), "mode {mode:o}");
        }
        assert_eq!(read(&dir.path().join("missing"), wanted).unwrap(), Ok(None));
        assert!(read(dir.path(), wanted).unwrap().unwrap_err().contains("not a plain file"));
    }
}
