//! Secrets kept out of everything dbload prints or stores (the project's
//! rule: "secrets never appear in output, reports or logs"): one home for what
//! counts as a secret and how each form is hidden, so that every message,
//! report, tag and stored run hides them alike. A URL's password
//! (`postgres://app:***@db/bench`), secret query parameters and conninfo
//! keys (`?token=***`, `password=***`), the values of secret HTTP headers
//! (`Authorization: ***`), the secret flags' values of a command line, and
//! any of these inside a message that quotes a user's file. A leaf: it
//! imports nothing of ours.

/// Query parameters, headers and keys whose values are never printed.
const SECRET_WORDS: [&str; 7] = ["auth", "token", "key", "secret", "pass", "sig", "cookie"];

/// libpq's connection keys that hold a file's path, not a secret, though
/// their names contain a secret word: a report keeps them (`passfile=...`)
/// so that the run can be reproduced.
const FILE_KEYS: [&str; 2] = ["passfile", "sslkey"];

/// Whether a header, query parameter or key called `name` holds a secret.
pub fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    !FILE_KEYS.contains(&name.as_str()) && SECRET_WORDS.iter().any(|w| name.contains(w))
}

/// `url` with its password replaced by `***`, read the cautious way: the
/// user info is everything between `://` and the *last* `@`, so that a
/// password with an unescaped `/`, `?` or `@` is hidden too. For a URL as
/// given, which must never be echoed with its password, whether it parsed
/// or not.
pub fn userinfo(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").map_or(("", url), |(scheme, rest)| (scheme, rest));
    let separator = if scheme.is_empty() && !url.contains("://") { "" } else { "://" };
    match rest.rsplit_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') => {
            let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
            format!("{scheme}{separator}{user}:***@{host}")
        }
        _ => url.to_owned(),
    }
}

/// A path's secret query parameters' values replaced by `***` (`?token=***`).
pub fn query(path: &str) -> String {
    let Some((p, q)) = path.split_once('?') else { return path.to_owned() };
    format!("{p}?{}", q.split('&').map(pair).collect::<Vec<_>>().join("&"))
}

/// `key=value` with the value hidden when the key looks secret.
fn pair(kv: &str) -> String {
    match kv.split_once('=') {
        Some((k, _)) if is_secret(k) => format!("{k}=***"),
        _ => kv.to_string(),
    }
}

/// A header as given (`Name: value`, or by mistake `Name value`) with its
/// value hidden when the name looks secret.
pub fn header(h: &str) -> String {
    match h.split_once(':') {
        Some((name, _)) if is_secret(name) => format!("{}: ***", name.trim()),
        Some(_) => h.to_owned(),
        None => match h.trim().split_once(char::is_whitespace) {
            Some((name, _)) if is_secret(name) => format!("{name} ***"),
            _ => h.to_owned(),
        },
    }
}

/// A value that may be a URL (its password and secret query parameters
/// hidden) or a conninfo string (its secret keys hidden: `password=***`).
pub fn value(value: &str) -> String {
    if value.contains("://") {
        return query(&userinfo(value));
    }
    value.split(' ').map(pair).collect::<Vec<_>>().join(" ")
}

/// A message that may quote a user's text (a file's line, a key): each
/// word that is a URL or a `key=value` redacted as [`value`] does, quotes
/// and brackets around it kept.
pub fn text(message: &str) -> String {
    let word = |w: &str| {
        let inner = w.trim_start_matches(['`', '"', '\'', '(']);
        let inner = inner.trim_end_matches(['`', '"', '\'', ')', ',', ';', ':']);
        if inner.is_empty() || !(inner.contains("://") || inner.contains('=')) {
            return w.to_string();
        }
        let at = w.len() - w.trim_start_matches(['`', '"', '\'', '(']).len();
        format!("{}{}{}", &w[..at], value(inner), &w[at + inner.len()..])
    };
    message.split(' ').map(word).collect::<Vec<_>>().join(" ")
}

/// The command line as every report states it (`run.command_line`):
/// `args` (the program first) as one line, each argument redacted, and
/// shell-quoted when it holds a space or a quote, so it can be run again.
pub fn command_line(args: impl IntoIterator<Item = String>) -> String {
    let mut value_of: Option<&str> = None;
    let mut shown = Vec::new();
    for arg in args {
        let value = match value_of.take() {
            Some(VARY) => vary(&arg),
            Some(flag) => flag_value(flag, &arg),
            None => argument(&arg),
        };
        value_of = SECRET_VALUED.iter().copied().chain([VARY]).find(|f| *f == arg);
        shown.push(shell_quoted(&value));
    }
    shown.join(" ")
}

/// The flags whose value is, or may hold, a secret (`dbload http`'s, and
/// tsdbperf's `--db-password` on ingest).
const SECRET_VALUED: [&str; 6] = ["-H", "--header", "--bearer", "-u", "--user", "--db-password"];

/// The sweep's flag whose value is another command's flag and its values.
const VARY: &str = "--vary";

/// A sweep's `FLAG=V1,V2,...` as it may be shown: each value as [`flag`]
/// shows the flag's (`bearer=***,***`).
pub fn vary(given: &str) -> String {
    match given.split_once('=') {
        Some((name, values)) => {
            let long = format!("--{}", name.trim().trim_start_matches('-'));
            let values: Vec<String> = values.split(',').map(|v| flag(&long, v)).collect();
            format!("{name}={}", values.join(","))
        }
        None => given.to_string(),
    }
}

/// The value of flag `flag` (its long form, `--bearer`) as it may be
/// shown: a secret flag's as [`command_line`] shows it, any other's as
/// [`value`] does (a URL's password hidden).
pub fn flag(flag: &str, given: &str) -> String {
    if SECRET_VALUED.contains(&flag) {
        flag_value(flag, given)
    } else {
        value(given)
    }
}

/// The value of one of [`SECRET_VALUED`]: a header as reports show it, a
/// token hidden, `USER:PASSWORD` with its password hidden.
fn flag_value(flag: &str, value: &str) -> String {
    match flag {
        "-H" | "--header" => header(value),
        "-u" | "--user" => value.split_once(':').map_or(value.to_string(), |(user, _)| format!("{user}:***")),
        _ => "***".into(),
    }
}

/// One argument: `--flag=VALUE` has its value redacted.
fn argument(arg: &str) -> String {
    match arg.split_once('=') {
        Some((flag, value)) if SECRET_VALUED.contains(&flag) => format!("{flag}={}", flag_value(flag, value)),
        Some((VARY, value)) => format!("{VARY}={}", vary(value)),
        Some((flag, value)) if flag.starts_with("--") && !flag.contains(' ') => {
            format!("{flag}={}", self::value(value))
        }
        _ => value(arg),
    }
}

/// `arg` as a POSIX shell reads it back: bare when it is plain, single-quoted otherwise.
fn shell_quoted(arg: &str) -> String {
    let plain =
        !arg.is_empty() && arg.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@,%+".contains(c) || !c.is_ascii());
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(args: &[&str]) -> String {
        command_line(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn secrets_are_hidden_and_the_rest_kept() {
        assert_eq!(
            line(&[
                "dbload",
                "ingest",
                "--url",
                "postgres://app:hunter2@db:5432/bench?sslmode=require",
                "--rows",
                "10"
            ]),
            "dbload ingest --url 'postgres://app:***@db:5432/bench?sslmode=require' --rows 10"
        );
        assert_eq!(
            line(&["dbload", "timeit", "--url=postgres://a:p@w@h/d"]),
            "dbload timeit '--url=postgres://a:***@h/d'"
        );
        assert_eq!(
            line(&["dbload", "export", "--url", "host=db user=app password=hunter2 dbname=x"]),
            "dbload export --url 'host=db user=app password=*** dbname=x'"
        );
        assert_eq!(
            line(&[
                "dbload",
                "http",
                "http://h/x?api_key=k1&page=2",
                "-H",
                "Authorization: Bearer abc",
                "-H",
                "Accept: x"
            ]),
            "dbload http 'http://h/x?api_key=***&page=2' -H 'Authorization: ***' -H 'Accept: x'"
        );
        assert_eq!(line(&["dbload", "--header=X-Api-Token: t"]), "dbload '--header=X-Api-Token: ***'");
        assert_eq!(
            line(&["dbload", "http", "http://h/", "--bearer", "tok3n", "-u", "app:pw", "--user=me:pw2", "--bearer=t"]),
            "dbload http http://h/ --bearer '***' -u 'app:***' '--user=me:***' '--bearer=***'"
        );
        assert_eq!(line(&["dbload", "-s", "select 'a b'"]), r"dbload -s 'select '\''a b'\'''");
        assert_eq!(
            line(&["dbload", "ingest", "--db-host", "h", "--db-password", "s3cret", "--db-password=s3cret"]),
            "dbload ingest --db-host h --db-password '***' '--db-password=***'"
        );
    }

    #[test]
    fn secret_names() {
        for name in ["Authorization", "X-Api-Key", "Cookie", "X-Auth-Token", "password"] {
            assert!(is_secret(name), "{name}");
        }
        assert!(!is_secret("Content-Type") && !is_secret("Fiware-Service"));
        assert_eq!(userinfo("cratedb://u:pw/x@h"), "cratedb://u:***@h");
        assert_eq!(userinfo("http://h/a@b"), "http://h/a@b");
        assert_eq!(header("X-Api-Key S3cr3t"), "X-Api-Key ***");
        assert_eq!(header("Accept text/csv"), "Accept text/csv");
    }

    /// Issue 29, item 6: a sweep's `--vary` of a secret flag kept its
    /// values in the sweep's own command line.
    #[test]
    fn varied_secrets_are_hidden() {
        assert_eq!(
            line(&[
                "dbload",
                "sweep",
                "--vary",
                "bearer=t0k3n1,t0k3n2",
                "--vary=user=a:pw1,a:pw2",
                "--vary",
                "workers=1,2"
            ]),
            "dbload sweep --vary 'bearer=***,***' '--vary=user=a:***,a:***' --vary workers=1,2"
        );
    }

    /// A message quoting a user's text: URLs and secret pairs hidden, the
    /// quotes around them and every other word kept.
    #[test]
    fn messages_hide_what_they_quote() {
        assert_eq!(
            text("found `postgres://u:pw@h/db`, not (password=x); see http://h/?token=t&a=1 ok"),
            "found `postgres://u:***@h/db`, not (password=***); see http://h/?token=***&a=1 ok"
        );
        assert_eq!(text("ratio: a=b is fine"), "ratio: a=b is fine");
    }

    proptest::proptest! {
        /// A URL's password or a secret key's value, quoted anywhere in a
        /// message, never survives it.
        #[test]
        fn no_quoted_secret_survives_a_message(
            before in "[a-z :`(]{0,12}",
            after in "[a-z :`),;]{0,12}",
            password in "[A-Z][A-Za-z0-9!/?#@]{7,15}",
            key in "(password|api_key|token|sslpassword)",
            url in proptest::bool::ANY,
        ) {
            let secret = if url { format!("postgres://u:{password}@h:5432/db") } else { format!("{key}={password}") };
            let shown = text(&format!("{before}{secret}{after}"));
            proptest::prop_assert!(!shown.contains(&password), "{}", shown);
        }
    }

    /// libpq's keys that name files (`passfile`, `sslkey`...) are paths the
    /// reader needs to reproduce a run, not secrets; `sslpassword` is one.
    #[test]
    fn libpq_file_paths_are_kept_and_their_passwords_hidden() {
        assert_eq!(
            line(&[
                "dbload",
                "ingest",
                "--url",
                "postgres://u@h/d?passfile=/home/u/.pgpass&sslkey=/k.pem&sslpassword=s"
            ]),
            "dbload ingest --url 'postgres://u@h/d?passfile=/home/u/.pgpass&sslkey=/k.pem&sslpassword=***'"
        );
        assert_eq!(
            line(&["dbload", "export", "--url", "host=db passfile=/p/.pgpass sslkey=/k.pem password=x"]),
            "dbload export --url 'host=db passfile=/p/.pgpass sslkey=/k.pem password=***'"
        );
    }
}
