//! libpq's ways of naming a server, read into libpq's keywords.
//!
//! A target comes as a `postgres://` URL (with libpq's multi-host form) or a
//! `key=value` conninfo string, and `PG*` variables fill what it leaves out.
//! Each keyword keeps the URL option or variable it came from, so that an
//! error can blame the right one, and the password is starred out wherever
//! the target is shown.

use anyhow::Context as _;
use tokio_postgres::Config;

use super::error::error_text;
use super::pgpass;
use crate::error::usage;
use crate::file_cap::{self, Cap};

/// The `PG*` variables dbload honours and the keyword each one stands for
/// (libpq's table, limited to what dbload supports; PGSERVICE is read
/// before them, as a service's values beat the environment's).
const ENV_VARS: [(&str, &str); 10] = [
    ("host", "PGHOST"),
    ("port", "PGPORT"),
    ("user", "PGUSER"),
    ("password", "PGPASSWORD"),
    ("dbname", "PGDATABASE"),
    ("sslmode", "PGSSLMODE"),
    ("sslrootcert", "PGSSLROOTCERT"),
    ("application_name", "PGAPPNAME"),
    ("connect_timeout", "PGCONNECT_TIMEOUT"),
    ("passfile", "PGPASSFILE"),
];

/// Where a value that nobody gave comes from, for error messages.
const DEFAULT: &str = "default";

/// `pg_service.conf`, read under the configuration cap.
const SERVICE_FILE: Cap = Cap::config("the service file");

/// libpq waits forever for a connection; a benchmark should rather report an
/// unreachable host (exit 3) than hang, so dbload gives up after 10 seconds
/// unless `connect_timeout` says otherwise.
const DEFAULT_CONNECT_TIMEOUT: &str = "10";

/// `mysql`, `cratedb`, `http`: a URL scheme, as opposed to a conninfo value
/// that merely contains `://`.
fn is_scheme(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// A libpq keyword with its value and where the value came from (the URL
/// option, a `PG*` variable, or `default`), so errors can blame the right one.
pub(in crate::driver) struct Param {
    key: String,
    pub(in crate::driver) value: String,
    pub(in crate::driver) source: String,
}

/// Connection keywords in libpq's vocabulary, in the order given.
#[derive(Default)]
pub(in crate::driver) struct Params(Vec<Param>);

impl Params {
    /// Reads a target string: a `postgres://` or `postgresql://` URL, or
    /// `key=value` conninfo pairs. `source` names it in error messages.
    pub(in crate::driver) fn parse(s: &str, source: &str) -> anyhow::Result<Params> {
        let s = s.trim();
        match s.strip_prefix("postgresql://").or_else(|| s.strip_prefix("postgres://")) {
            Some(rest) => Params::from_url(rest, source),
            None => {
                if let Some((scheme, _)) = s.split_once("://").filter(|(scheme, _)| is_scheme(scheme)) {
                    return Err(usage(format!(
                        "{source}: `{scheme}://` is not a PostgreSQL URL: give a postgres:// \
                         or postgresql:// URL, or key=value connection parameters"
                    )));
                }
                Params::from_conninfo(s, source)
            }
        }
    }

    /// Reads the part of a libpq URL after `postgres://`:
    /// `[user[:password]@][host[:port][,...]][/dbname][?key=value&...]`.
    /// The `url` crate's parser is not used for this because it rejects
    /// libpq's multi-host form (`h1:5432,h2:5433`).
    ///
    /// The user info ends at the last `@` before the first `/` (libpq's
    /// rule, which lets a password hold `?` or `@`). An `@` after the first
    /// `/` most likely means a password with an unescaped `/`: that is
    /// refused without echoing any of the URL, which would show the password.
    fn from_url(rest: &str, source: &str) -> anyhow::Result<Params> {
        let mut params = Params::default();
        let (authority_part, after_slash) = rest.split_once('/').map_or((rest, None), |(a, b)| (a, Some(b)));
        let (userinfo, after_userinfo) = match authority_part.rsplit_once('@') {
            Some((userinfo, hosts)) => (Some(userinfo), hosts),
            None => (None, authority_part),
        };
        if after_slash.is_some_and(|after| after.contains('@')) {
            return Err(usage(format!(
                "{source}: the URL has an `@` after its first `/`: a password or user name that \
                 holds `/` must write it as %2F (and an `@` in the database name or a parameter as \
                 %40)"
            )));
        }
        let hosts_and_query = match after_slash {
            Some(after) => format!("{after_userinfo}/{after}"),
            None => after_userinfo.to_owned(),
        };
        let (before_query, query) = hosts_and_query.split_once('?').unwrap_or((&hosts_and_query, ""));
        let (hosts, dbname) = before_query.split_once('/').unwrap_or((before_query, ""));
        if let Some(userinfo) = userinfo {
            let (user, password) = match userinfo.split_once(':') {
                Some((user, password)) => (user, Some(password)),
                None => (userinfo, None),
            };
            if !user.is_empty() {
                params.set("user", percent_decode(user, "user name", source)?, source);
            }
            if let Some(password) = password {
                params.set("password", percent_decode(password, "password", source)?, source);
            }
        }
        if !hosts.is_empty() {
            let mut host_list = Vec::new();
            let mut port_list = Vec::new();
            for spec in hosts.split(',') {
                let (host, port) = split_host_port(spec, source)?;
                host_list.push(percent_decode(host, "host", source)?);
                port_list.push(percent_decode(port.unwrap_or(""), "port", source)?);
            }
            if host_list.iter().any(|h| !h.is_empty()) {
                params.set("host", host_list.join(","), source);
            }
            if port_list.iter().any(|p| !p.is_empty()) {
                params.set("port", port_list.join(","), source);
            }
        }
        if !dbname.is_empty() {
            params.set("dbname", percent_decode(dbname, "database name", source)?, source);
        }
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(usage(format!(
                    "{source}: the URL parameter `{pair}` has no value: write key=value pairs \
                     separated by &"
                )));
            };
            let key = percent_decode(key, "parameter name", source)?;
            let value = percent_decode(value, &format!("value of `{key}`"), source)?;
            params.set(&key, value, source);
        }
        Ok(params)
    }

    /// Reads `key=value` pairs separated by spaces; a value may be quoted
    /// with `'` and may escape a character with `\` (libpq's rules).
    fn from_conninfo(s: &str, source: &str) -> anyhow::Result<Params> {
        let mut params = Params::default();
        let mut rest = s.trim_start();
        while !rest.is_empty() {
            let key_end = rest.find(|c: char| c == '=' || c.is_whitespace()).unwrap_or(rest.len());
            let key = &rest[..key_end];
            let Some(after_eq) = rest[key_end..].trim_start().strip_prefix('=') else {
                return Err(usage(format!(
                    "{source}: `{key}` is not followed by `=`: give a \
                     postgres://user@host:port/db URL, or key=value pairs such as \
                     `host=localhost port=5432`"
                )));
            };
            if key.is_empty() {
                return Err(usage(format!("{source}: a `=` has no keyword before it: write key=value pairs")));
            }
            let Some((value, after)) = conninfo_value(after_eq.trim_start()) else {
                return Err(usage(format!(
                    "{source}: the quoted value of `{key}` has no closing `'`: close it, and \
                     write a quote inside a value as \\'"
                )));
            };
            params.set(key, value, source);
            rest = after.trim_start();
        }
        Ok(params)
    }

    /// Fills what the target string left out: from the service it or
    /// PGSERVICE names, from the `PG*` variables in [`ENV_VARS`], then from
    /// dbload's defaults (see `PgTarget::from_url`).
    pub(in crate::driver) fn fill_in(&mut self, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        // An empty variable counts as unset, as a user who wrote `PGHOST=`
        // means "no host" rather than "the host named ''".
        let env = |var: &str| env(var).filter(|value| !value.is_empty());
        if self.get("service").is_none() {
            if let Some(service) = env("PGSERVICE") {
                self.set("service", service, "PGSERVICE");
            }
        }
        if let Some(service) = self.take("service") {
            self.fill_from_service(&service, &env)?;
        }
        for (key, var) in ENV_VARS {
            if self.get(key).is_none() {
                if let Some(value) = env(var) {
                    self.set(key, value, var);
                }
            }
        }
        if self.get("host").is_none() && self.get("hostaddr").is_none() {
            self.set("host", "localhost".into(), DEFAULT);
        }
        if self.get("port").is_none() {
            self.set("port", "5432".into(), DEFAULT);
        }
        if self.get("user").is_none() {
            match env("USER") {
                Some(user) => self.set("user", user, "USER"),
                None => self.set("user", "postgres".into(), DEFAULT),
            }
        }
        if self.get("dbname").is_none() {
            let user = self.value("user").to_owned();
            self.set("dbname", user, DEFAULT);
        }
        if self.get("application_name").is_none() {
            self.set("application_name", "dbload".into(), DEFAULT);
        }
        if self.get("connect_timeout").is_none() {
            self.set("connect_timeout", DEFAULT_CONNECT_TIMEOUT.into(), DEFAULT);
        }
        Ok(())
    }

    /// Sets what the service's section of `pg_service.conf` gives and the
    /// target string did not (libpq's order: the user's file, PGSERVICEFILE
    /// or ~/.pg_service.conf, then `$PGSYSCONFDIR/pg_service.conf`).
    fn fill_from_service(&mut self, service: &Param, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<()> {
        let files = [
            env("PGSERVICEFILE").or_else(|| env("HOME").map(|home| format!("{home}/.pg_service.conf"))),
            env("PGSYSCONFDIR").map(|dir| format!("{dir}/pg_service.conf")),
        ];
        for file in files.into_iter().flatten() {
            let text = match file_cap::text_of(std::path::Path::new(&file), SERVICE_FILE) {
                Ok(text) => text,
                Err(file_cap::Failure::OverCap) => return Err(SERVICE_FILE.refuse(&file, file_cap::Failure::OverCap)),
                Err(_) => continue,
            };
            let Some(section) = service_section(&text, &service.value, &file)? else { continue };
            let source = format!("service `{}` in {file}", service.value);
            for (key, value) in section {
                if self.get(&key).is_none() {
                    self.set(&key, value, &source);
                }
            }
            return Ok(());
        }
        Err(usage(format!(
            "{}: the service `{}` is defined in no service file (PGSERVICEFILE or              ~/.pg_service.conf, then $PGSYSCONFDIR/pg_service.conf): define it there, or              give the connection parameters",
            service.source, service.value
        )))
    }

    /// Sets the password from libpq's password file (the `passfile`
    /// keyword, PGPASSFILE, or ~/.pgpass) when none was given, matched
    /// against each host in turn: the first host with a line wins, as
    /// tokio-postgres takes one password for all. A file that others may
    /// read is ignored with a warning on stderr, as libpq does.
    pub(in crate::driver) fn fill_password_from_file(
        &mut self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> anyhow::Result<()> {
        let passfile = self.take("passfile");
        if !self.value("password").is_empty() {
            return Ok(());
        }
        let file = match passfile {
            Some(param) => param.value,
            None => match env("HOME").filter(|home| !home.is_empty()) {
                Some(home) => format!("{home}/.pgpass"),
                None => return Ok(()),
            },
        };
        let ports: Vec<&str> = self.value("port").split(',').collect();
        let (dbname, user) = (self.value("dbname"), self.value("user"));
        let mut found = None;
        for (i, host) in self.hosts().enumerate() {
            let port = ports.get(i).or(ports.first()).filter(|port| !port.is_empty()).unwrap_or(&"5432");
            match pgpass::read(std::path::Path::new(&file), [pgpass::host_key(host), port, dbname, user])? {
                Ok(None) => continue,
                Ok(password) => found = password,
                Err(warning) => crate::console::line(format_args!("dbload: warning: {warning}")),
            }
            break;
        }
        if let Some(password) = found {
            self.set("password", password, &format!("the password file {file}"));
        }
        Ok(())
    }

    fn get(&self, key: &str) -> Option<&Param> {
        self.0.iter().find(|param| param.key == key)
    }

    pub(in crate::driver) fn value(&self, key: &str) -> &str {
        self.get(key).map_or("", |param| &param.value)
    }

    pub(in crate::driver) fn source(&self, key: &str) -> &str {
        self.get(key).map_or(DEFAULT, |param| &param.source)
    }

    /// Sets a keyword; a later value replaces an earlier one, as in libpq.
    fn set(&mut self, key: &str, value: String, source: &str) {
        let source = source.to_owned();
        match self.0.iter_mut().find(|param| param.key == key) {
            Some(param) => {
                param.value = value;
                param.source = source;
            }
            None => self.0.push(Param { key: key.to_owned(), value, source }),
        }
    }

    pub(in crate::driver) fn take(&mut self, key: &str) -> Option<Param> {
        let index = self.0.iter().position(|param| param.key == key)?;
        Some(self.0.remove(index))
    }

    fn hosts(&self) -> impl Iterator<Item = &str> {
        self.get("host").or_else(|| self.get("hostaddr")).map(|param| param.value.split(',')).into_iter().flatten()
    }

    pub(in crate::driver) fn all_hosts_are_sockets(&self) -> bool {
        self.hosts().all(is_socket)
    }

    pub(in crate::driver) fn any_host_is_a_socket(&self) -> bool {
        self.hosts().any(is_socket)
    }

    /// One port for all hosts, or one per host: tokio-postgres would only
    /// find out at connect time, and call it a connection failure.
    pub(in crate::driver) fn check_hosts_and_ports(&self) -> anyhow::Result<()> {
        let hosts = self.hosts().count();
        let ports = self.value("port").split(',').count();
        if ports == 1 || ports == hosts {
            return Ok(());
        }
        Err(usage(format!(
            "{}: {ports} ports (`{}`) do not match the {hosts} hosts (`{}`, from {}): give one \
             port for all hosts, or one per host",
            self.source("port"),
            self.value("port"),
            self.value("host"),
            self.source("host"),
        )))
    }

    /// Hands the keywords to tokio-postgres. Each one is checked alone first,
    /// so that a value it rejects is blamed on the URL or variable that set it.
    pub(in crate::driver) fn to_config(&self) -> anyhow::Result<Config> {
        let mut conninfo = String::new();
        for param in &self.0 {
            let pair = format!("{}={} ", param.key, conninfo_quote(&param.value));
            if let Err(err) = pair.parse::<Config>() {
                let shown = if param.key == "password" { "***" } else { &param.value };
                return Err(usage(format!(
                    "{}: `{}={shown}` is not accepted ({}): fix or remove it",
                    param.source,
                    param.key,
                    error_text(&err)
                )));
            }
            conninfo.push_str(&pair);
        }
        conninfo.parse().context("the connection parameters were accepted one by one but not together")
    }

    /// `postgres://user:***@host:port,.../dbname`, or with `?host=` for
    /// Unix sockets, which libpq also accepts.
    pub(in crate::driver) fn redacted_url(&self) -> String {
        let user = self.value("user");
        let password = if self.get("password").is_some() { ":***" } else { "" };
        let dbname = self.value("dbname");
        let hosts: Vec<&str> = self.hosts().collect();
        let ports: Vec<&str> = self.value("port").split(',').collect();
        if self.any_host_is_a_socket() {
            return format!("postgres://{user}{password}@/{dbname}?host={}&port={}", hosts.join(","), ports.join(","));
        }
        let authority: Vec<String> = hosts
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let port = ports.get(i).or(ports.first()).filter(|port| !port.is_empty()).unwrap_or(&"5432");
                if host.contains(':') {
                    format!("[{host}]:{port}")
                } else {
                    format!("{host}:{port}")
                }
            })
            .collect();
        format!("postgres://{user}{password}@{}/{dbname}", authority.join(","))
    }
}

/// The `key=value` lines of the `[service]` section of a service file, or
/// `None` if the file has no such section.
fn service_section(text: &str, service: &str, file: &str) -> anyhow::Result<Option<Vec<(String, String)>>> {
    let mut section = None;
    let mut in_service = false;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if in_service {
                break;
            }
            in_service = name == service;
            if in_service {
                section = Some(Vec::new());
            }
            continue;
        }
        let Some(pairs) = section.as_mut().filter(|_| in_service) else { continue };
        let bad = |why: &str| usage(format!("{file}, line {}: {why}", number + 1));
        let Some((key, value)) = line.split_once('=') else {
            return Err(bad("not `key=value`: fix the line"));
        };
        let key = key.trim();
        if key == "service" {
            return Err(bad("a service cannot name another service: give its parameters instead"));
        }
        pairs.push((key.to_owned(), value.trim().to_owned()));
    }
    Ok(section)
}

/// A host given as a path is a Unix socket directory (libpq's rule).
fn is_socket(host: &str) -> bool {
    host.starts_with('/')
}

/// Splits `host:port` or `[v6addr]:port`; the port is optional.
fn split_host_port<'a>(spec: &'a str, source: &str) -> anyhow::Result<(&'a str, Option<&'a str>)> {
    let Some(bracketed) = spec.strip_prefix('[') else {
        return Ok(match spec.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (spec, None),
        });
    };
    match bracketed.split_once(']') {
        Some((host, "")) => Ok((host, None)),
        Some((host, after)) if after.starts_with(':') => Ok((host, Some(&after[1..]))),
        _ => Err(usage(format!(
            "{source}: the host `{spec}` is not `[address]` or `[address]:port`: write IPv6 \
             addresses in brackets, as in postgres://[::1]:5432/db"
        ))),
    }
}

/// Decodes `%XX` escapes. libpq decodes nothing else (a `+` stays a `+`),
/// unlike form decoding, hence no `url::form_urlencoded` here; and it
/// refuses a `%` without two hex digits, which the crate would keep as is.
fn percent_decode(s: &str, what: &str, source: &str) -> anyhow::Result<String> {
    let escaped = |at: usize| s.as_bytes().get(at + 1..at + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
    if !s.match_indices('%').all(|(at, _)| escaped(at)) {
        return Err(usage(format!(
            "{source}: the {what} in the URL has an invalid %-escape: write a literal % as %25, \
             and escape other bytes as %XX with two hex digits"
        )));
    }
    match percent_encoding::percent_decode_str(s).decode_utf8() {
        Ok(decoded) => Ok(decoded.into_owned()),
        Err(_) => Err(usage(format!(
            "{source}: the {what} in the URL decodes to bytes that are not UTF-8: check its \
             %-escapes"
        ))),
    }
}

/// Reads one conninfo value from the start of `s`; returns it and the rest,
/// or `None` if a quoted value is not closed.
fn conninfo_value(s: &str) -> Option<(String, &str)> {
    let (quoted, body) = match s.strip_prefix('\'') {
        Some(body) => (true, body),
        None => (false, s),
    };
    let mut value = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => value.extend(chars.next().map(|(_, escaped)| escaped)),
            '\'' if quoted => return Some((value, &body[i + 1..])),
            c if c.is_whitespace() && !quoted => return Some((value, &body[i..])),
            c => value.push(c),
        }
    }
    (!quoted).then_some((value, ""))
}

fn conninfo_quote(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use crate::driver::pg::tests::{env_of, no_env, parse, password_of, usage_error};
    use crate::driver::PgTarget;

    #[test]
    fn bad_input_is_a_usage_error_naming_its_source() {
        let message = usage_error(PgTarget::from_url("postgres://h/db", "--url", &env_of(&[("PGPORT", "abc")])));
        assert!(message.starts_with("PGPORT: `port=abc` is not accepted"), "{message}");
        for (url, expected) in [
            ("postgres://h:99999/db", "--url: `port=99999`"),
            ("host=h frobnicate=1", "--url: `frobnicate=1`"),
            ("mysql://h/db", "`mysql://` is not a PostgreSQL URL"),
            ("localhost:5432", "`localhost:5432` is not followed by `=`"),
            ("host='db", "the quoted value of `host` has no closing"),
            ("postgres://u:%zz@h/db", "the password in the URL has an invalid"),
            ("postgres://u:pw%2@h/db", "the password in the URL has an invalid"),
            ("postgres://u:%ff@h/db", "the password in the URL decodes to bytes that are not UTF-8"),
            ("postgres://h/d%+1", "the database name in the URL has an invalid"),
            ("postgres://h/db?sslmode", "parameter `sslmode` has no value"),
            ("postgres://h1,h2/db?port=1,2,3", "3 ports (`1,2,3`) do not match the 2 hosts"),
            ("postgres:///db?host=/tmp,db2", "mix Unix sockets and network hosts"),
        ] {
            let message = usage_error(PgTarget::from_url(url, "--url", &no_env));
            assert!(message.contains(expected), "{url}: {message}");
        }
        // The same mix is fine without TLS.
        parse("postgres:///db?host=/tmp,db2&sslmode=disable");
    }

    #[test]
    fn password_is_never_shown() {
        let targets = [
            parse("postgres://u:hunter2@h/db"),
            parse("postgres://u@h/db?password=hunter2"),
            parse("host=h user=u password=hunter2"),
            PgTarget::from_env(&env_of(&[("PGPASSWORD", "hunter2")])).unwrap(),
        ];
        for t in targets {
            assert!(t.redacted().contains(":***@"), "{}", t.redacted());
            assert!(!t.redacted().contains("hunter2"), "{}", t.redacted());
            let debug = format!("{t:?}");
            assert!(!debug.contains("hunter2"), "{debug}");
        }
        for url in [
            "postgres://u:hunter2@h/db?sslmode=nope",
            "host=h password=hunter2 bogus=1",
            "postgres://u:hunter2@h/db?port=x",
            // Unescaped `/` in the password (was: "port=hunter2 is not accepted").
            "postgres://u:hunter2/x@h/db",
            "postgres://u:a/hunter2@h/db",
            "postgres://u:hunter2/x?y@h:99999/db",
        ] {
            let message = usage_error(PgTarget::from_url(url, "--url", &no_env));
            assert!(!message.contains("hunter2"), "{url}: {message}");
        }
    }

    #[test]
    fn a_password_may_hold_question_marks_and_at_signs() {
        // libpq's rule: the user info ends at the last `@` before the first `/`.
        let t = parse("postgres://u:hunter2?x@y@h:6000/db?sslmode=disable");
        assert_eq!(password_of(&t).as_deref(), Some("hunter2?x@y"));
        assert_eq!(t.redacted(), "postgres://u:***@h:6000/db");
    }

    /// A user whose psql logs in through ~/.pgpass, PGPASSFILE or the
    /// `passfile` keyword must not get "password missing" from dbload.
    #[test]
    fn password_comes_from_the_password_file() {
        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "other:5432:*:*:wrong\ndb:6000:*:bench:from\\:file\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let file = file.to_str().unwrap();
        let password = |url: &str, env: &[(&str, &str)]| {
            let t = PgTarget::from_url(url, "--url", &env_of(env)).unwrap();
            assert!(!t.redacted().contains("file"), "{}", t.redacted());
            password_of(&t)
        };
        let pw = Some("from:file".to_owned());
        assert_eq!(password("postgres://bench@db:6000/x", &[("PGPASSFILE", file)]), pw);
        assert_eq!(password(&format!("postgres://bench@db:6000/x?passfile={file}"), &[]), pw);
        std::fs::copy(file, dir.path().join(".pgpass")).unwrap();
        assert_eq!(password("postgres://bench@db:6000/x", &[("HOME", dir.path().to_str().unwrap())]), pw);
        // The second host of a list has the line; a given password wins.
        assert_eq!(password("postgres://bench@nohost,db/x?port=6000", &[("PGPASSFILE", file)]), pw);
        let given = Some("given".to_owned());
        assert_eq!(password("postgres://bench@db:6000/x", &[("PGPASSFILE", file), ("PGPASSWORD", "given")]), given);
        assert_eq!(password("postgres://bench@db:6001/x", &[("PGPASSFILE", file)]), None);
    }

    #[test]
    fn a_service_fills_what_the_url_leaves_out() {
        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("services.conf");
        let text = "# comment\n[other]\nhost=wrong\n\n[bench]\nhost = svc-host\nport=6000\ndbname=svcdb\n\
                    user=svcuser\n[next]\nport=1\n";
        std::fs::write(&file, text).unwrap();
        let env = env_of(&[("PGSERVICEFILE", file.to_str().unwrap()), ("PGSERVICE", "bench"), ("PGPORT", "7000")]);
        let t = PgTarget::from_url("postgres:///urldb", "--url", &env).unwrap();
        // The URL beats the service, and the service beats PG* variables.
        assert_eq!(t.redacted(), "postgres://svcuser@svc-host:6000/urldb");
        let t = PgTarget::from_url("host=h service=other", "--url", &env).unwrap();
        assert_eq!(t.redacted(), "postgres://postgres@h:7000/postgres");

        let message = usage_error(PgTarget::from_url("service=nope", "--url", &env));
        assert!(message.starts_with("--url: the service `nope` is defined in no service file"), "{message}");
        std::fs::write(&file, "[bench]\nhost\n").unwrap();
        let message = usage_error(PgTarget::from_env(&env));
        assert!(message.ends_with("services.conf, line 2: not `key=value`: fix the line"), "{message}");
    }
}
