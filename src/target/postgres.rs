//! A PostgreSQL-protocol target, resolved the way libpq resolves one.
//!
//! Users arrive with libpq habits: a `postgres://` URL or a `key=value`
//! conninfo string, `PG*` variables for whatever the string leaves out, and
//! `sslmode` with all five of libpq's meanings. tokio-postgres parses most of
//! that but knows only three ssl modes and no `sslrootcert`, and it does not
//! read the environment. So both forms are read here into libpq's keywords,
//! dbload takes out what it implements itself (the TLS side), fills the gaps
//! from the environment, and hands tokio-postgres a conninfo string of the
//! rest, which it checks keyword by keyword so an error can name the URL or
//! the variable that set the bad value.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use tokio_postgres::error::SqlState;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, Config, NoTls, Socket};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{target, usage};

/// How much TLS to insist on, with libpq's names and meanings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plain text only.
    Disable,
    /// TLS when the server offers it, without checking its certificate.
    Prefer,
    /// TLS or nothing; the certificate is checked only if `sslrootcert` is given.
    Require,
    /// TLS, with a certificate chain that ends at a trusted root.
    VerifyCa,
    /// `VerifyCa`, and the certificate must name the host connected to.
    VerifyFull,
}

impl SslMode {
    const ALL: [SslMode; 5] =
        [SslMode::Disable, SslMode::Prefer, SslMode::Require, SslMode::VerifyCa, SslMode::VerifyFull];

    fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// Reads the `sslmode` keyword, blaming the URL or variable it came from.
    fn parse(param: &Param) -> anyhow::Result<SslMode> {
        SslMode::ALL.into_iter().find(|mode| mode.as_str() == param.value).ok_or_else(|| {
            let valid: Vec<&str> = SslMode::ALL.iter().map(|m| m.as_str()).collect();
            usage(format!("{}: sslmode `{}` is not valid: use one of {}", param.source, param.value, valid.join(", ")))
        })
    }

    /// How the server's certificate is checked in this mode, or `None` if
    /// TLS is off. libpq's `require` turns into `verify-ca` once a root
    /// certificate is given; dbload follows.
    fn verification(self, has_root_cert: bool) -> Option<Verification> {
        match self {
            SslMode::Disable => None,
            SslMode::Prefer => Some(Verification::None),
            SslMode::Require if !has_root_cert => Some(Verification::None),
            SslMode::Require | SslMode::VerifyCa => Some(Verification::Chain),
            SslMode::VerifyFull => Some(Verification::ChainAndName),
        }
    }
}

impl fmt::Display for SslMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the TLS client checks about the server's certificate.
#[derive(Clone, Copy)]
enum Verification {
    None,
    Chain,
    ChainAndName,
}

/// A resolved connection target: what to connect to, how, and how to show it.
#[derive(Clone)]
pub struct PgTarget {
    config: Config,
    ssl_mode: SslMode,
    ssl_root_cert: Option<PathBuf>,
    /// The TLS client, built once so a bad `sslrootcert` is a usage error
    /// before the run rather than a connect error in every worker; `None`
    /// when no connection uses TLS.
    tls: Option<MakeRustlsConnect>,
    redacted: String,
}

/// The `PG*` variables dbload honours and the keyword each one stands for
/// (libpq's table, limited to what dbload supports).
const ENV_VARS: [(&str, &str); 9] = [
    ("host", "PGHOST"),
    ("port", "PGPORT"),
    ("user", "PGUSER"),
    ("password", "PGPASSWORD"),
    ("dbname", "PGDATABASE"),
    ("sslmode", "PGSSLMODE"),
    ("sslrootcert", "PGSSLROOTCERT"),
    ("application_name", "PGAPPNAME"),
    ("connect_timeout", "PGCONNECT_TIMEOUT"),
];

/// Where a value that nobody gave comes from, for error messages.
const DEFAULT: &str = "default";

/// libpq waits forever for a connection; a benchmark should rather report an
/// unreachable host (exit 3) than hang, so dbload gives up after 10 seconds
/// unless `connect_timeout` says otherwise.
const DEFAULT_CONNECT_TIMEOUT: &str = "10";

impl PgTarget {
    /// Resolves a target with libpq's rules: `url` (a `postgres://` or
    /// `postgresql://` URL, or a `key=value ...` conninfo string) wins, `PG*`
    /// variables fill what it leaves out (PGHOST, PGPORT, PGUSER, PGPASSWORD,
    /// PGDATABASE, PGSSLMODE, PGSSLROOTCERT, PGAPPNAME, PGCONNECT_TIMEOUT),
    /// then defaults: host localhost, port 5432, user $USER (or `postgres`),
    /// dbname = user, application_name `dbload`, connect_timeout 10 s.
    ///
    /// `option` names the source in error messages (`--url`, `DATABASE_URL`);
    /// `env` is injected so tests do not depend on the real environment.
    pub fn from_url(url: &str, option: &str, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<PgTarget> {
        let url = url.trim();
        let params = match url.strip_prefix("postgresql://").or_else(|| url.strip_prefix("postgres://")) {
            Some(rest) => Params::from_url(rest, option)?,
            None => {
                if let Some((scheme, _)) = url.split_once("://").filter(|(s, _)| is_scheme(s)) {
                    return Err(usage(format!(
                        "{option}: `{scheme}://` is not a PostgreSQL URL: give a postgres:// \
                         or postgresql:// URL, or key=value connection parameters"
                    )));
                }
                Params::from_conninfo(url, option)?
            }
        };
        PgTarget::resolve(params, env)
    }

    /// Resolves a target from `PG*` variables and defaults alone, for when
    /// PGHOST is set and no URL was given.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<PgTarget> {
        PgTarget::resolve(Params::default(), env)
    }

    /// Wraps a ready-made config without TLS (the throwaway local server is
    /// reached over its Unix socket). `display` must already be free of
    /// secrets: it is what [`PgTarget::redacted`] returns.
    pub fn from_config(mut config: Config, display: String) -> PgTarget {
        config.ssl_mode(tokio_postgres::config::SslMode::Disable);
        PgTarget { config, ssl_mode: SslMode::Disable, ssl_root_cert: None, tls: None, redacted: display }
    }

    /// The target as `postgres://user:***@host:port/db`: the password, if
    /// any, is never shown. Use this wherever the target is printed or stored.
    pub fn redacted(&self) -> &str {
        &self.redacted
    }

    pub fn ssl_mode(&self) -> SslMode {
        self.ssl_mode
    }

    /// Opens one connection and spawns its connection task on the current
    /// tokio runtime. Failures are target errors (exit 3) that say what the
    /// server or the network answered and what to check.
    pub async fn connect(&self) -> anyhow::Result<Client> {
        match &self.tls {
            Some(tls) => self.connect_with(tls.clone()).await,
            None => self.connect_with(NoTls).await,
        }
    }

    async fn connect_with<T>(&self, tls: T) -> anyhow::Result<Client>
    where
        T: MakeTlsConnect<Socket>,
        T::Stream: Send + 'static,
    {
        let (client, connection) = self.config.connect(tls).await.map_err(|err| self.connect_error(&err))?;
        // The task's own result is not needed: a broken connection makes the
        // client's next call fail, and that is where it is counted.
        tokio::spawn(connection);
        Ok(client)
    }

    fn resolve(mut params: Params, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        // An empty variable counts as unset, as a user who wrote `PGHOST=`
        // means "no host" rather than "the host named ''".
        let env = |var: &str| env(var).filter(|value| !value.is_empty());
        for (key, var) in ENV_VARS {
            if params.get(key).is_none() {
                if let Some(value) = env(var) {
                    params.set(key, value, var);
                }
            }
        }
        if params.get("host").is_none() && params.get("hostaddr").is_none() {
            params.set("host", "localhost".into(), DEFAULT);
        }
        if params.get("port").is_none() {
            params.set("port", "5432".into(), DEFAULT);
        }
        if params.get("user").is_none() {
            match env("USER") {
                Some(user) => params.set("user", user, "USER"),
                None => params.set("user", "postgres".into(), DEFAULT),
            }
        }
        if params.get("dbname").is_none() {
            let user = params.value("user").to_owned();
            params.set("dbname", user, DEFAULT);
        }
        if params.get("application_name").is_none() {
            params.set("application_name", "dbload".into(), DEFAULT);
        }
        if params.get("connect_timeout").is_none() {
            params.set("connect_timeout", DEFAULT_CONNECT_TIMEOUT.into(), DEFAULT);
        }

        let ssl_mode = match params.take("sslmode") {
            Some(param) => SslMode::parse(&param)?,
            None => SslMode::Prefer,
        };
        let ssl_root_cert = params.take("sslrootcert");
        params.check_hosts_and_ports()?;
        let verification = if params.all_hosts_are_sockets() {
            // libpq ignores sslmode on Unix sockets, where the server never
            // speaks TLS.
            None
        } else {
            ssl_mode.verification(ssl_root_cert.is_some())
        };
        if verification.is_some() && params.any_host_is_a_socket() {
            // tokio-postgres asks the TLS connector for a host name even on
            // a socket, and gets none, so such a mix cannot connect.
            return Err(usage(format!(
                "{}: the hosts `{}` mix Unix sockets and network hosts, which works only with \
                 sslmode=disable: list one kind of host, or add sslmode=disable",
                params.source("host"),
                params.value("host")
            )));
        }
        let tls = verification
            .map(|verification| tls_connector(verification, ssl_mode, ssl_root_cert.as_ref()))
            .transpose()?;

        let mut config = params.to_config()?;
        config.ssl_mode(match (ssl_mode, &tls) {
            (_, None) => tokio_postgres::config::SslMode::Disable,
            (SslMode::Prefer, Some(_)) => tokio_postgres::config::SslMode::Prefer,
            (_, Some(_)) => tokio_postgres::config::SslMode::Require,
        });
        Ok(PgTarget {
            config,
            ssl_mode,
            ssl_root_cert: ssl_root_cert.map(|param| PathBuf::from(param.value)),
            tls,
            redacted: params.redacted_url(),
        })
    }

    /// Turns a failed connect into a message that says what to check.
    fn connect_error(&self, err: &tokio_postgres::Error) -> anyhow::Error {
        let url = &self.redacted;
        if let Some(db) = err.as_db_error() {
            let user = self.config.get_user().unwrap_or_default();
            let dbname = self.config.get_dbname().unwrap_or_default();
            let advice = match *db.code() {
                SqlState::INVALID_PASSWORD => "check PGPASSWORD or the password in the URL".to_owned(),
                SqlState::INVALID_AUTHORIZATION_SPECIFICATION => format!(
                    "check the user name `{user}`, or ask for a pg_hba.conf entry that lets it in \
                     from this host"
                ),
                SqlState::INVALID_CATALOG_NAME => format!(
                    "create it (createdb {dbname}) or name an existing database in the URL or \
                     PGDATABASE"
                ),
                SqlState::TOO_MANY_CONNECTIONS => {
                    "use fewer workers, or raise max_connections on the server".to_owned()
                }
                SqlState::CANNOT_CONNECT_NOW => "the server is starting or stopping: try again in a moment".to_owned(),
                _ => "the server refused the connection: see its message".to_owned(),
            };
            return target(format!(
                "cannot connect to {url}: {} (SQLSTATE {}): {advice}",
                db.message(),
                db.code().code()
            ));
        }

        let text = error_text(err);
        let io = error_chain(err).into_iter().find_map(|e| e.downcast_ref::<io::Error>());
        // tokio-rustls wraps the rustls error in an io::Error, whose
        // `source()` skips it, so it is reached through `get_ref`.
        let tls = io.and_then(io::Error::get_ref).and_then(|e| e.downcast_ref::<rustls::Error>());
        let advice = match (tls, io.map(io::Error::kind)) {
            (Some(rustls::Error::InvalidCertificate(cert)), _) => certificate_advice(cert),
            (Some(_), _) => "the TLS handshake failed: check the server's ssl settings, or try \
                             another sslmode"
                .to_owned(),
            (None, Some(io::ErrorKind::ConnectionRefused)) => "is the server running? check the \
                host and port (in the URL, or PGHOST and PGPORT)"
                .to_owned(),
            (None, Some(io::ErrorKind::NotFound)) => "no server socket there: is the server \
                running? check the socket directory (host) and the port"
                .to_owned(),
            (None, Some(io::ErrorKind::TimedOut)) => "no answer within connect_timeout: check the \
                host, the port and firewalls, or raise connect_timeout"
                .to_owned(),
            // tokio-postgres gives these two no error kind or type to test,
            // only their text.
            _ if text.contains("does not support TLS") => format!(
                "sslmode={} needs TLS, which this server does not offer: enable ssl on the \
                 server, or use sslmode=prefer or sslmode=disable",
                self.ssl_mode
            ),
            _ if text.contains("password missing") => {
                "the server asks for a password: set PGPASSWORD or put it in the URL".to_owned()
            }
            _ => "check the host name and port, and that the server is running and reachable".to_owned(),
        };
        target(format!("cannot connect to {url}: {text}: {advice}"))
    }
}

impl fmt::Debug for PgTarget {
    /// By hand, so that no field can ever print the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgTarget")
            .field("url", &self.redacted)
            .field("ssl_mode", &self.ssl_mode)
            .field("ssl_root_cert", &self.ssl_root_cert)
            .finish_non_exhaustive()
    }
}

/// tokio-postgres's own message is only the kind of failure ("error
/// connecting to server"); the reason is further down the chain.
fn error_text(err: &(dyn std::error::Error + 'static)) -> String {
    let texts: Vec<String> = error_chain(err).iter().map(ToString::to_string).collect();
    texts.join(": ")
}

fn error_chain<'a>(err: &'a (dyn std::error::Error + 'static)) -> Vec<&'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(err), |e| (*e).source()).collect()
}

fn certificate_advice(err: &CertificateError) -> String {
    match err {
        CertificateError::UnknownIssuer | CertificateError::BadSignature => {
            "the server's certificate is not signed by a trusted CA: give that CA with \
             sslrootcert=FILE (or PGSSLROOTCERT), or use sslmode=require to encrypt without \
             verifying the server"
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            "the server's certificate is not issued for this host name: connect with a name \
             the certificate lists, or use sslmode=verify-ca to check only the CA"
        }
        CertificateError::Expired
        | CertificateError::ExpiredContext { .. }
        | CertificateError::NotValidYet
        | CertificateError::NotValidYetContext { .. } => {
            "the server's certificate is outside its validity period: renew it, or check this \
             machine's clock"
        }
        _ => {
            "the server's certificate was rejected: check it and sslrootcert, or use \
             sslmode=require to encrypt without verifying the server"
        }
    }
    .to_owned()
}

/// `mysql`, `cratedb`, `http`: a URL scheme, as opposed to a conninfo value
/// that merely contains `://`.
fn is_scheme(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// A libpq keyword with its value and where the value came from (the URL
/// option, a `PG*` variable, or `default`), so errors can blame the right one.
struct Param {
    key: String,
    value: String,
    source: String,
}

/// Connection keywords in libpq's vocabulary, in the order given.
#[derive(Default)]
struct Params(Vec<Param>);

impl Params {
    /// Reads the part of a libpq URL after `postgres://`:
    /// `[user[:password]@][host[:port][,...]][/dbname][?key=value&...]`.
    /// The `url` crate's parser is not used for this because it rejects
    /// libpq's multi-host form (`h1:5432,h2:5433`).
    fn from_url(rest: &str, source: &str) -> anyhow::Result<Params> {
        let mut params = Params::default();
        let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, dbname) = before_query.split_once('/').unwrap_or((before_query, ""));
        // The last `@`, so that an unescaped `@` in a password still works.
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((userinfo, hosts)) => (Some(userinfo), hosts),
            None => (None, authority),
        };
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

    fn get(&self, key: &str) -> Option<&Param> {
        self.0.iter().find(|param| param.key == key)
    }

    fn value(&self, key: &str) -> &str {
        self.get(key).map_or("", |param| &param.value)
    }

    fn source(&self, key: &str) -> &str {
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

    fn take(&mut self, key: &str) -> Option<Param> {
        let index = self.0.iter().position(|param| param.key == key)?;
        Some(self.0.remove(index))
    }

    fn hosts(&self) -> impl Iterator<Item = &str> {
        self.get("host").or_else(|| self.get("hostaddr")).map(|param| param.value.split(',')).into_iter().flatten()
    }

    fn all_hosts_are_sockets(&self) -> bool {
        self.hosts().all(is_socket)
    }

    fn any_host_is_a_socket(&self) -> bool {
        self.hosts().any(is_socket)
    }

    /// One port for all hosts, or one per host: tokio-postgres would only
    /// find out at connect time, and call it a connection failure.
    fn check_hosts_and_ports(&self) -> anyhow::Result<()> {
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
    fn to_config(&self) -> anyhow::Result<Config> {
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
    fn redacted_url(&self) -> String {
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
/// unlike form decoding, hence no `url::form_urlencoded` here.
fn percent_decode(s: &str, what: &str, source: &str) -> anyhow::Result<String> {
    let invalid = || {
        usage(format!(
            "{source}: the {what} in the URL has an invalid %-escape: write a literal % as %25, \
             and escape other bytes as %XX with two hex digits"
        ))
    };
    let mut bytes = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&byte, after)) = rest.split_first() {
        if byte == b'%' {
            let digit = |i: usize| after.get(i).and_then(|&b| char::from(b).to_digit(16));
            let (Some(high), Some(low)) = (digit(0), digit(1)) else {
                return Err(invalid());
            };
            // Two hex digits make at most 0xff.
            bytes.push((high * 16 + low) as u8);
            rest = &after[2..];
        } else {
            bytes.push(byte);
            rest = after;
        }
    }
    String::from_utf8(bytes).map_err(|_| {
        usage(format!(
            "{source}: the {what} in the URL decodes to bytes that are not UTF-8: check its \
             %-escapes"
        ))
    })
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

/// Builds the rustls client for one way of checking the server. The crypto
/// provider is given explicitly: relying on a process-wide default would
/// panic if none or two were installed.
fn tls_connector(
    verification: Verification,
    ssl_mode: SslMode,
    root_cert: Option<&Param>,
) -> anyhow::Result<MakeRustlsConnect> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("the ring crypto provider does not support TLS 1.2 or 1.3")?;
    let config = match verification {
        Verification::ChainAndName => {
            builder.with_root_certificates(root_store(ssl_mode, root_cert)?).with_no_client_auth()
        }
        Verification::Chain => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(LibpqVerifier {
                roots: Some(root_store(ssl_mode, root_cert)?),
                provider,
            }))
            .with_no_client_auth(),
        Verification::None => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(LibpqVerifier { roots: None, provider }))
            .with_no_client_auth(),
    };
    Ok(MakeRustlsConnect::new(config))
}

/// The CA certificates from `sslrootcert`, or the system's when none is given.
fn root_store(ssl_mode: SslMode, root_cert: Option<&Param>) -> anyhow::Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    let Some(param) = root_cert else {
        let found = rustls_native_certs::load_native_certs();
        let (added, _unparsable) = roots.add_parsable_certificates(found.certs);
        if added == 0 {
            return Err(usage(format!(
                "sslmode={ssl_mode} checks the server's certificate against trusted CAs, but \
                 this system has none: give the CA with sslrootcert=FILE (or PGSSLROOTCERT), or \
                 install the ca-certificates package"
            )));
        }
        return Ok(roots);
    };
    let path = &param.value;
    let unusable = |why: String| {
        usage(format!(
            "{}: sslrootcert `{path}` {why}: give the PEM file of the CA that signed the \
             server's certificate",
            param.source
        ))
    };
    let file = File::open(path).map_err(|err| unusable(format!("cannot be read ({err})")))?;
    let certs: Vec<CertificateDer<'static>> = rustls_pemfile::certs(&mut BufReader::new(file))
        .collect::<Result<_, _>>()
        .map_err(|err| unusable(format!("cannot be read as PEM ({err})")))?;
    if certs.is_empty() {
        return Err(unusable("holds no certificate (no -----BEGIN CERTIFICATE----- block)".into()));
    }
    for cert in certs {
        roots.add(cert).map_err(|err| unusable(format!("holds a certificate rustls cannot use ({err})")))?;
    }
    Ok(roots)
}

/// libpq's checks that rustls's own verifier does not offer: no check at all
/// (`prefer`, `require`: encrypted, but the server is not authenticated), or
/// the chain without the host name (`verify-ca`). Handshake signatures are
/// verified in both cases, so the session is at least bound to whoever
/// holds the certificate's key.
#[derive(Debug)]
struct LibpqVerifier {
    /// `None`: accept any certificate.
    roots: Option<RootCertStore>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for LibpqVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            rustls::client::verify_server_cert_signed_by_trust_anchor(
                &ParsedCertificate::try_from(end_entity)?,
                roots,
                intermediates,
                now,
                self.provider.signature_verification_algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use std::fs::{self, Permissions};
    use std::future::Future;
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::Path;
    use std::time::Duration;

    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose};
    use tempfile::TempDir;
    use tokio_postgres::config::Host;

    use super::*;
    use crate::error::{exit, exit_code};
    use crate::target::local::{server_account, LocalOptions, LocalPostgres};

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars.iter().map(|&(k, v)| (k.to_owned(), v.to_owned())).collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn parse(url: &str) -> PgTarget {
        PgTarget::from_url(url, "--url", &no_env).unwrap_or_else(|err| panic!("{url}: {err:#}"))
    }

    /// The message of a usage error (exit 2), failing the test on any other.
    fn usage_error(result: anyhow::Result<PgTarget>) -> String {
        let err = result.expect_err("expected a usage error");
        assert_eq!(exit_code(&err), exit::USAGE, "{err:#}");
        err.to_string()
    }

    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
    }

    #[test]
    fn url_fields_reach_tokio_postgres() {
        let t = parse(
            "postgres://bench:s3cret@db.example:6543/metrics\
             ?application_name=loader&connect_timeout=3",
        );
        assert_eq!(t.config.get_hosts(), [Host::Tcp("db.example".into())]);
        assert_eq!(t.config.get_ports(), [6543]);
        assert_eq!(t.config.get_user(), Some("bench"));
        assert_eq!(t.config.get_password(), Some(&b"s3cret"[..]));
        assert_eq!(t.config.get_dbname(), Some("metrics"));
        assert_eq!(t.config.get_application_name(), Some("loader"));
        assert_eq!(t.config.get_connect_timeout(), Some(&Duration::from_secs(3)));
        assert_eq!(t.redacted(), "postgres://bench:***@db.example:6543/metrics");
    }

    #[test]
    fn multi_host_ipv6_and_escapes_in_a_postgresql_url() {
        let t = parse("postgresql://u%40corp:p%2Fw+@[::1]:5433,db2/my%20db");
        assert_eq!(t.config.get_hosts(), [Host::Tcp("::1".into()), Host::Tcp("db2".into())]);
        assert_eq!(t.config.get_ports(), [5433, 5432]);
        assert_eq!(t.config.get_user(), Some("u@corp"));
        // libpq decodes %XX only: a `+` stays a `+`.
        assert_eq!(t.config.get_password(), Some(&b"p/w+"[..]));
        assert_eq!(t.config.get_dbname(), Some("my db"));
        assert_eq!(t.redacted(), "postgres://u@corp:***@[::1]:5433,db2:5432/my db");
    }

    #[test]
    fn conninfo_fields_reach_tokio_postgres() {
        let t = parse(r"host=db port=6000 user=u password='a b\'c' dbname = d sslmode=disable");
        assert_eq!(t.config.get_hosts(), [Host::Tcp("db".into())]);
        assert_eq!(t.config.get_ports(), [6000]);
        assert_eq!(t.config.get_user(), Some("u"));
        assert_eq!(t.config.get_password(), Some(&b"a b'c"[..]));
        assert_eq!(t.config.get_dbname(), Some("d"));
        assert_eq!(t.ssl_mode(), SslMode::Disable);
        assert_eq!(t.redacted(), "postgres://u:***@db:6000/d");
    }

    #[test]
    fn user_only_url_takes_defaults_for_the_rest() {
        let t = parse("postgres://alice@");
        assert_eq!(t.config.get_hosts(), [Host::Tcp("localhost".into())]);
        assert_eq!(t.config.get_ports(), [5432]);
        assert_eq!(t.config.get_dbname(), Some("alice"));
        assert_eq!(t.config.get_password(), None);
        assert_eq!(t.config.get_application_name(), Some("dbload"));
        assert_eq!(t.config.get_connect_timeout(), Some(&Duration::from_secs(10)));
        assert_eq!(t.ssl_mode(), SslMode::Prefer);
        assert_eq!(t.redacted(), "postgres://alice@localhost:5432/alice");
    }

    #[test]
    fn socket_directory_as_host_query_parameter() {
        let env = env_of(&[("USER", "carol")]);
        let t = PgTarget::from_url("postgres:///bench?host=/var/run/postgresql", "--url", &env).unwrap();
        assert_eq!(t.config.get_hosts(), [Host::Unix("/var/run/postgresql".into())]);
        assert_eq!(t.config.get_user(), Some("carol"));
        // No TLS on a socket, whatever sslmode says (as in libpq).
        assert!(t.tls.is_none());
        assert_eq!(t.redacted(), "postgres://carol@/bench?host=/var/run/postgresql&port=5432");
    }

    #[test]
    fn url_beats_environment_and_environment_beats_defaults() {
        let env = env_of(&[
            ("PGHOST", "envhost"),
            ("PGPORT", "7000"),
            ("PGUSER", "envuser"),
            ("PGPASSWORD", "envpw"),
            ("PGDATABASE", "envdb"),
            ("PGAPPNAME", "envapp"),
            ("PGCONNECT_TIMEOUT", "4"),
            ("PGSSLMODE", "require"),
            ("USER", "unixuser"),
        ]);
        let t = PgTarget::from_url("postgres://urluser@urlhost/urldb?sslmode=disable", "--url", &env).unwrap();
        assert_eq!(t.config.get_hosts(), [Host::Tcp("urlhost".into())]);
        assert_eq!(t.config.get_ports(), [7000], "the URL gives no port");
        assert_eq!(t.config.get_user(), Some("urluser"));
        assert_eq!(t.config.get_password(), Some(&b"envpw"[..]));
        assert_eq!(t.config.get_dbname(), Some("urldb"));
        assert_eq!(t.config.get_application_name(), Some("envapp"));
        assert_eq!(t.config.get_connect_timeout(), Some(&Duration::from_secs(4)));
        assert_eq!(t.ssl_mode(), SslMode::Disable);

        let t = PgTarget::from_env(&env).unwrap();
        assert_eq!(t.config.get_hosts(), [Host::Tcp("envhost".into())]);
        assert_eq!(t.config.get_user(), Some("envuser"));
        assert_eq!(t.config.get_dbname(), Some("envdb"));
        assert_eq!(t.ssl_mode(), SslMode::Require);
        assert_eq!(t.redacted(), "postgres://envuser:***@envhost:7000/envdb");

        // Without PG* variables: $USER, and the database named after it. An
        // empty variable counts as unset.
        let t = PgTarget::from_env(&env_of(&[("USER", "unixuser"), ("PGHOST", "")])).unwrap();
        assert_eq!(t.redacted(), "postgres://unixuser@localhost:5432/unixuser");
        let t = PgTarget::from_env(&no_env).unwrap();
        assert_eq!(t.redacted(), "postgres://postgres@localhost:5432/postgres");
    }

    #[test]
    fn pghost_path_is_a_socket_directory() {
        let t = PgTarget::from_env(&env_of(&[("PGHOST", "/tmp/pg"), ("PGUSER", "u")])).unwrap();
        assert_eq!(t.config.get_hosts(), [Host::Unix("/tmp/pg".into())]);
        assert!(t.tls.is_none());
    }

    #[test]
    fn sslmode_values_and_where_they_come_from() {
        let certs = TempDir::new().unwrap();
        let ca = new_ca("dbload test CA");
        let ca_file = certs.path().join("ca.pem");
        fs::write(&ca_file, ca.pem()).unwrap();
        let ca_file = ca_file.display();

        for (value, mode) in [("disable", SslMode::Disable), ("prefer", SslMode::Prefer), ("require", SslMode::Require)]
        {
            let t = parse(&format!("postgres://h/db?sslmode={value}"));
            assert_eq!(t.ssl_mode(), mode);
            assert_eq!(t.tls.is_some(), mode != SslMode::Disable);
            assert_eq!(mode.to_string(), value);
        }
        for (value, mode) in [("verify-ca", SslMode::VerifyCa), ("verify-full", SslMode::VerifyFull)] {
            let t = parse(&format!("postgres://h/db?sslmode={value}&sslrootcert={ca_file}"));
            assert_eq!(t.ssl_mode(), mode);
            assert_eq!(t.config.get_ssl_mode(), tokio_postgres::config::SslMode::Require);
        }
        let t = parse(&format!("host=h sslmode=verify-full sslrootcert={ca_file}"));
        assert_eq!(t.ssl_mode(), SslMode::VerifyFull);

        let message = usage_error(PgTarget::from_url("postgres://h/db?sslmode=verify_full", "DATABASE_URL", &no_env));
        assert!(message.starts_with("DATABASE_URL: sslmode `verify_full`"), "{message}");
        assert!(message.contains("disable, prefer, require, verify-ca, verify-full"), "{message}");
        let message = usage_error(PgTarget::from_env(&env_of(&[("PGSSLMODE", "on")])));
        assert!(message.starts_with("PGSSLMODE: sslmode `on`"), "{message}");

        let message = usage_error(PgTarget::from_url(
            "postgres://h/db?sslmode=verify-ca",
            "--url",
            &env_of(&[("PGSSLROOTCERT", "/nonexistent/ca.pem")]),
        ));
        assert!(message.starts_with("PGSSLROOTCERT: sslrootcert `/nonexistent/ca.pem` cannot be read"), "{message}");
        let not_pem = certs.path().join("not.pem");
        fs::write(&not_pem, "hello").unwrap();
        let message = usage_error(PgTarget::from_url(
            &format!("postgres://h/db?sslmode=require&sslrootcert={}", not_pem.display()),
            "--url",
            &no_env,
        ));
        assert!(message.contains("holds no certificate"), "{message}");
    }

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
        ] {
            let message = usage_error(PgTarget::from_url(url, "--url", &no_env));
            assert!(!message.contains("hunter2"), "{message}");
        }
    }

    #[test]
    fn refused_connection_is_a_target_error() {
        // A port that was free a moment ago: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let t = parse(&format!("postgres://u:pw@127.0.0.1:{port}/db"));
        let err = block_on(t.connect()).unwrap_err();
        assert_eq!(exit_code(&err), exit::TARGET, "{err:#}");
        let message = err.to_string();
        assert!(message.starts_with(&format!("cannot connect to postgres://u:***@127.0.0.1:{port}/db")), "{message}");
        assert!(message.contains("is the server running?"), "{message}");
    }

    fn new_ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
    }

    /// Writes a file that the local server can read: when the tests run as
    /// root, the server runs as another account, and PostgreSQL wants its
    /// key file private to the account that runs it.
    fn write_for_server(dir: &Path, name: &str, contents: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, contents).unwrap();
        fs::set_permissions(&path, Permissions::from_mode(0o600)).unwrap();
        if let Some(user) = server_account().unwrap() {
            nix::unistd::chown(&path, Some(user.uid), Some(user.gid)).unwrap();
        }
        path
    }

    /// A local server with TLS on, whose certificate (signed by `ca`) names
    /// only 127.0.0.1, and whose network logins are: `postgres` trusted,
    /// `bench` by password, anyone else rejected.
    struct TlsServer {
        server: LocalPostgres,
        ca: PathBuf,
        _files: TempDir,
    }

    impl TlsServer {
        fn start() -> TlsServer {
            let files = TempDir::new().unwrap();
            // The server account must be able to enter the directory.
            fs::set_permissions(files.path(), Permissions::from_mode(0o755)).unwrap();
            let ca = new_ca("dbload test CA");
            let key = KeyPair::generate().unwrap();
            let cert = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap().signed_by(&key, &ca).unwrap();
            let dir = files.path();
            let cert_file = write_for_server(dir, "server.crt", &cert.pem());
            let key_file = write_for_server(dir, "server.key", &key.serialize_pem());
            let hba_file = write_for_server(
                dir,
                "pg_hba.conf",
                "local all all trust\n\
                 host all postgres 127.0.0.1/32 trust\n\
                 host all bench 127.0.0.1/32 scram-sha-256\n\
                 host all all 127.0.0.1/32 reject\n",
            );
            let ca_file = dir.join("ca.pem");
            fs::write(&ca_file, ca.pem()).unwrap();
            let setting = |name: &str, path: &Path| (name.to_owned(), path.display().to_string());
            let server = LocalPostgres::start(&LocalOptions {
                extra_settings: vec![
                    ("ssl".into(), "on".into()),
                    setting("ssl_cert_file", &cert_file),
                    setting("ssl_key_file", &key_file),
                    setting("hba_file", &hba_file),
                ],
                ..LocalOptions::default()
            })
            .unwrap();
            TlsServer { server, ca: ca_file, _files: files }
        }

        /// `user[:password]@127.0.0.1:PORT/dbname?query`
        fn url(&self, userinfo: &str, dbname: &str, query: &str) -> String {
            let port = self.server.url().rsplit(':').next().unwrap().to_owned();
            let port = port.split('/').next().unwrap();
            format!("postgres://{userinfo}@127.0.0.1:{port}/{dbname}?{query}")
        }
    }

    /// Connects and reports whether the session is encrypted.
    async fn connect_ssl(url: &str) -> anyhow::Result<bool> {
        let client = PgTarget::from_url(url, "--url", &no_env)?.connect().await?;
        let row = client.query_one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[]).await?;
        Ok(row.get(0))
    }

    #[test]
    fn tls_modes_check_what_libpq_checks() {
        let tls = TlsServer::start();
        let ca = tls.ca.display().to_string();
        let other_ca_file = tls._files.path().join("other-ca.pem");
        fs::write(&other_ca_file, new_ca("some other CA").pem()).unwrap();
        let other_ca = other_ca_file.display().to_string();
        let url = |query: &str| tls.url("postgres", "postgres", query);
        // The certificate names 127.0.0.1 only; `localhost` connects to the
        // same address under a name the certificate does not list.
        let by_name = |query: &str| format!("{}&host=localhost&hostaddr=127.0.0.1", url(query));

        block_on(async {
            let verified = format!("sslmode=verify-full&sslrootcert={ca}");
            assert!(connect_ssl(&url(&verified)).await.unwrap());
            assert!(connect_ssl(&url("sslmode=require")).await.unwrap());
            assert!(connect_ssl(&url("sslmode=prefer")).await.unwrap());
            assert!(!connect_ssl(&url("sslmode=disable")).await.unwrap());
            let chain_only = format!("sslmode=verify-ca&sslrootcert={ca}");
            assert!(connect_ssl(&by_name(&chain_only)).await.unwrap());

            // verify-full also checks the name.
            let err = connect_ssl(&by_name(&verified)).await.unwrap_err();
            assert_eq!(exit_code(&err), exit::TARGET, "{err:#}");
            assert!(err.to_string().contains("not issued for this host name"), "{err}");

            // Without our CA: the system's roots do not know it (or there are
            // none, which is a usage error saying the same thing).
            let err = connect_ssl(&url("sslmode=verify-full")).await.unwrap_err();
            assert!(err.to_string().contains("sslrootcert"), "{err:#}");

            // require + a root certificate checks the chain, like verify-ca.
            let err = connect_ssl(&url(&format!("sslmode=require&sslrootcert={other_ca}"))).await.unwrap_err();
            assert_eq!(exit_code(&err), exit::TARGET, "{err:#}");
            assert!(err.to_string().contains("not signed by a trusted CA"), "{err}");
        });
    }

    #[test]
    fn login_refusals_say_what_to_check() {
        let tls = TlsServer::start();
        block_on(async {
            let admin = tls.server.target().connect().await.unwrap();
            admin.batch_execute("CREATE ROLE bench LOGIN PASSWORD 'right'").await.unwrap();
            connect_ssl(&tls.url("bench:right", "postgres", "")).await.unwrap();

            for (userinfo, dbname, expected) in [
                ("bench:wrong", "postgres", "(SQLSTATE 28P01): check PGPASSWORD or the password in the URL"),
                ("bench", "postgres", "set PGPASSWORD or put it in the URL"),
                ("stranger", "postgres", "(SQLSTATE 28000): check the user name `stranger`"),
                ("postgres", "nosuchdb", "(SQLSTATE 3D000): create it (createdb nosuchdb)"),
            ] {
                let err = connect_ssl(&tls.url(userinfo, dbname, "")).await.unwrap_err();
                assert_eq!(exit_code(&err), exit::TARGET, "{err:#}");
                let message = err.to_string();
                assert!(message.contains(expected), "{userinfo}: {message}");
                assert!(!message.contains("wrong"), "{message}");
            }
        });
    }
}
