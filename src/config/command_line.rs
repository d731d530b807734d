//! The command line as every report states it (`run.command_line`), with
//! its secrets hidden the way dbload hides them everywhere else: a URL's
//! password (`postgres://app:***@db/bench`), secret query parameters and
//! conninfo keys (`password=***`, `sslpassword=***`, `?token=***`), and the
//! values of secret HTTP headers (`-H 'Authorization: ***'`).

use super::http::redact_header;
use crate::driver::http::{is_secret, redact_query, redact_userinfo};

/// `args` (the program first) as one line: each argument redacted, and
/// shell-quoted when it holds a space or a quote, so it can be run again.
pub fn redacted(args: impl IntoIterator<Item = String>) -> String {
    let mut value_of: Option<&str> = None;
    let mut shown = Vec::new();
    for arg in args {
        let value = match value_of.take() {
            Some(flag) => redact_flag_value(flag, &arg),
            None => redact_arg(&arg),
        };
        value_of = SECRET_VALUED.iter().copied().find(|f| *f == arg);
        shown.push(shell_quoted(&value));
    }
    shown.join(" ")
}

/// The flags whose value is, or may hold, a secret (`dbload http`'s, and
/// tsdbperf's `--db-password` on ingest).
const SECRET_VALUED: [&str; 6] = ["-H", "--header", "--bearer", "-u", "--user", "--db-password"];

/// The value of one of [`SECRET_VALUED`]: a header as reports show it, a
/// token hidden, `USER:PASSWORD` with its password hidden.
fn redact_flag_value(flag: &str, value: &str) -> String {
    match flag {
        "-H" | "--header" => redact_header(value),
        "-u" | "--user" => value.split_once(':').map_or(value.to_string(), |(user, _)| format!("{user}:***")),
        _ => "***".into(),
    }
}

/// One argument: `--flag=VALUE` has its value redacted.
fn redact_arg(arg: &str) -> String {
    match arg.split_once('=') {
        Some((flag, value)) if SECRET_VALUED.contains(&flag) => format!("{flag}={}", redact_flag_value(flag, value)),
        Some((flag, value)) if flag.starts_with("--") && !flag.contains(' ') => {
            format!("{flag}={}", redact_value(value))
        }
        _ => redact_value(arg),
    }
}

/// A URL's password and secret query parameters (`?token=***`), or a
/// conninfo string's secret keys (`password=***`).
fn redact_value(value: &str) -> String {
    if value.contains("://") {
        return redact_query(&redact_userinfo(value));
    }
    let pair = |kv: &str| match kv.split_once('=') {
        Some((k, _)) if is_secret(k) => format!("{k}=***"),
        _ => kv.to_string(),
    };
    value.split(' ').map(pair).collect::<Vec<_>>().join(" ")
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
        redacted(args.iter().map(|a| a.to_string()))
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
