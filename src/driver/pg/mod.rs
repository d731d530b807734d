//! A PostgreSQL-protocol target, resolved the way libpq resolves one.
//!
//! Users arrive with libpq habits: a `postgres://` URL or a `key=value`
//! conninfo string, `PG*` variables for whatever the string leaves out, and
//! `sslmode` with all five of libpq's meanings. tokio-postgres parses most of
//! that but knows only three ssl modes and no `sslrootcert`, and it does not
//! read the environment. So both forms are read into libpq's keywords (the
//! `conninfo` module), dbload takes out what it implements itself (the TLS
//! side, the `tls` module), fills the gaps from the environment, and hands
//! tokio-postgres a conninfo string of the rest, which it checks keyword by
//! keyword so an error can name the URL or the variable that set the bad
//! value. What is left here is the target itself: resolving it, connecting,
//! and saying what to check when a connection fails.

pub mod activity;
pub(super) mod conninfo;
pub mod cursor;
pub mod decode;
pub mod error;
pub mod export;
pub mod from_sql;
mod pgpass;
pub mod query;
pub mod sink;
pub mod wire;

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::ClientConfig;
use tokio_postgres::error::SqlState;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{CancelToken, Client, Config, NoTls, Socket};
use tokio_postgres_rustls::MakeRustlsConnect;

use self::conninfo::{Param, Params};
use self::error::{error_chain, error_text};
use super::tls::{certificate_advice, pg_client_config, Verification};
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

/// A resolved connection target: what to connect to, how, and how to show it.
#[derive(Clone)]
pub struct PgTarget {
    config: Config,
    ssl_mode: SslMode,
    ssl_root_cert: Option<PathBuf>,
    /// The TLS client, built once so a bad `sslrootcert` is a usage error
    /// before the run rather than a connect error in every worker; `None`
    /// when no connection uses TLS. The one config serves tokio-postgres's
    /// connections ([`PgTarget::tokio_tls`]) and dbload's own ([`wire`]).
    tls: Option<Arc<ClientConfig>>,
    redacted: String,
}

impl PgTarget {
    /// Resolves a target with libpq's rules: `url` (a `postgres://` or
    /// `postgresql://` URL, or a `key=value ...` conninfo string) wins, then
    /// the service it or PGSERVICE names (`pg_service.conf`), then `PG*`
    /// variables fill what is left out (PGHOST, PGPORT, PGUSER, PGPASSWORD,
    /// PGDATABASE, PGSSLMODE, PGSSLROOTCERT, PGAPPNAME, PGCONNECT_TIMEOUT,
    /// PGPASSFILE), then defaults: host localhost, port 5432, user $USER (or
    /// `postgres`), dbname = user, application_name `dbload`, connect_timeout
    /// 10 s. Without a password, libpq's password file gives one (`passfile`,
    /// PGPASSFILE, or ~/.pgpass).
    ///
    /// `option` names the source in error messages (`--url`, `DATABASE_URL`);
    /// `env` is injected so tests do not depend on the real environment.
    pub fn from_url(url: &str, option: &str, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<PgTarget> {
        PgTarget::resolve(Params::parse(url, option)?, env)
    }

    /// Resolves a target from `PG*` variables and defaults alone, for when
    /// PGHOST or PGSERVICE is set and no URL was given.
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

    /// The resolved connection settings, for dbload's own connection
    /// ([`wire`]), which reaches the server as tokio-postgres does.
    pub(in crate::driver::pg) fn config(&self) -> &Config {
        &self.config
    }

    /// The TLS client, if connections to this target may use TLS.
    pub(in crate::driver::pg) fn tls_config(&self) -> Option<&Arc<ClientConfig>> {
        self.tls.as_ref()
    }

    /// The TLS client in tokio-postgres's form.
    fn tokio_tls(&self) -> Option<MakeRustlsConnect> {
        self.tls.as_ref().map(|config| MakeRustlsConnect::new(ClientConfig::clone(config)))
    }

    pub fn ssl_mode(&self) -> SslMode {
        self.ssl_mode
    }

    /// The target whose connections name run `run_id` in their
    /// `application_name` (`dbload <run_id>`), so that the server's view of
    /// its sessions (`pg_stat_activity`) tells the run's apart from the
    /// others. A name the user gave (the URL's, PGAPPNAME) is kept as it is:
    /// what they filter their sessions by does not change under them, and
    /// the sessions of that name count as the run's.
    pub fn for_run(&self, run_id: &str) -> PgTarget {
        if self.config.get_application_name().is_some_and(|own| own != "dbload") {
            return self.clone();
        }
        self.named(&format!("dbload {run_id}"))
    }

    /// The target whose connections give the server `application_name`.
    pub fn named(&self, application_name: &str) -> PgTarget {
        let mut config = self.config.clone();
        config.application_name(application_name);
        PgTarget { config, ..self.clone() }
    }

    /// The `application_name` the server shows for this target's connections.
    pub fn application_name(&self) -> Option<&str> {
        self.config.get_application_name()
    }

    /// Opens one connection and spawns its connection task on the current
    /// tokio runtime. Failures are target errors (exit 3) that say what the
    /// server or the network answered and what to check.
    ///
    /// `connect_timeout` bounds the whole of it (TCP, TLS, the startup and
    /// the login), per host as libpq counts it: tokio-postgres's own bounds
    /// only the TCP connect, and a server that takes the connection and
    /// never answers (a stuck pooler, the wrong service on the port) would
    /// hold dbload forever.
    pub async fn connect(&self) -> anyhow::Result<Client> {
        let connecting = async {
            match self.tokio_tls() {
                Some(tls) => self.connect_with(tls).await,
                None => self.connect_with(NoTls).await,
            }
        };
        let Some(&per_host) = self.config.get_connect_timeout() else { return connecting.await };
        let hosts = self.config.get_hosts().len().max(1) as u32;
        tokio::time::timeout(per_host * hosts, connecting).await.unwrap_or_else(|_| {
            Err(target(format!(
                "cannot connect to {}: no answer to the startup and login within connect_timeout ({} s{}): \
                 is a PostgreSQL server listening there? check the host and port, or raise connect_timeout \
                 (in the URL, or PGCONNECT_TIMEOUT)",
                self.redacted,
                per_host.as_secs_f64(),
                if hosts > 1 { " per host" } else { "" }
            )))
        })
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

    /// What cancels the statement running on `client`'s connection, over a
    /// connection of its own made as `client`'s was (same TLS).
    pub fn canceller(&self, client: &Client) -> Canceller {
        let timeout = self.config.get_connect_timeout().copied();
        Canceller { token: Box::new(client.cancel_token()), tls: self.tokio_tls(), timeout }
    }

    fn resolve(mut params: Params, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        params.fill_in(env)?;
        params.fill_password_from_file(env)?;
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
            .map(|verification| pg_client_config(verification, ssl_mode, ssl_root_cert.as_ref()))
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

    /// What to check when the server refused a login with `code`, for
    /// tokio-postgres's connections and dbload's own alike.
    pub(in crate::driver::pg) fn refusal_advice(&self, code: &SqlState) -> String {
        let user = self.config.get_user().unwrap_or_default();
        let dbname = self.config.get_dbname().unwrap_or_default();
        match *code {
            SqlState::INVALID_PASSWORD => {
                "check the password (in ~/.pgpass, PGPASSFILE, PGPASSWORD, a service or the URL)".to_owned()
            }
            SqlState::INVALID_AUTHORIZATION_SPECIFICATION => format!(
                "check the user name `{user}`, or ask for a pg_hba.conf entry that lets it in \
                 from this host"
            ),
            SqlState::INVALID_CATALOG_NAME => {
                format!("create it (createdb {dbname}) or name an existing database in the URL or PGDATABASE")
            }
            SqlState::TOO_MANY_CONNECTIONS => "use fewer workers, or raise max_connections on the server".to_owned(),
            SqlState::CANNOT_CONNECT_NOW => "the server is starting or stopping: try again in a moment".to_owned(),
            _ => "the server refused the connection: see its message".to_owned(),
        }
    }

    /// Turns a failed connect into a message that says what to check.
    fn connect_error(&self, err: &tokio_postgres::Error) -> anyhow::Error {
        let url = &self.redacted;
        if let Some(db) = err.as_db_error() {
            let advice = self.refusal_advice(db.code());
            return target(format!(
                "cannot connect to {url}: {} (SQLSTATE {}): {advice}",
                db.message(),
                db.code().code()
            ));
        }

        let text = error_text(err);
        let io = error_chain(err).into_iter().find_map(|e| e.downcast_ref::<io::Error>());
        if let Some(e) = io.and_then(|io| super::out_of_descriptors(url, io)) {
            return e;
        }
        let advice = match io.and_then(socket_advice) {
            Some(advice) => advice,
            // tokio-postgres gives these two no error kind or type to test,
            // only their text.
            None if text.contains("does not support TLS") => no_tls_advice(self.ssl_mode),
            None if text.contains("password missing") => PASSWORD_ADVICE.to_owned(),
            None => UNREACHED_ADVICE.to_owned(),
        };
        target(format!("cannot connect to {url}: {text}: {advice}"))
    }
}

/// What to do when the server asks for a password and none was given.
pub(in crate::driver::pg) const PASSWORD_ADVICE: &str =
    "the server asks for a password: put it in ~/.pgpass or the file PGPASSFILE names \
                               (mode 0600), or set PGPASSWORD";

/// What to check when a connection failed and nothing says why.
pub(in crate::driver::pg) const UNREACHED_ADVICE: &str =
    "check the host name and port, and that the server is running and reachable";

/// What to do when `mode` needs TLS and the server has none.
pub(in crate::driver::pg) fn no_tls_advice(mode: SslMode) -> String {
    format!(
        "sslmode={mode} needs TLS, which this server does not offer: enable ssl on the server, or use \
         sslmode=prefer or sslmode=disable"
    )
}

/// What to check when a connection failed in its socket or its TLS
/// handshake, for tokio-postgres's connections and dbload's own alike;
/// `None` when the error says nothing that points anywhere.
pub(in crate::driver::pg) fn socket_advice(io: &io::Error) -> Option<String> {
    // tokio-rustls wraps the rustls error in an io::Error, whose
    // `source()` skips it, so it is reached through `get_ref`.
    let tls = io.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>());
    let advice = match (tls, io.kind()) {
        (Some(rustls::Error::InvalidCertificate(cert)), _) => return Some(certificate_advice(cert)),
        (Some(_), _) => "the TLS handshake failed: check the server's ssl settings, or try another sslmode",
        (None, io::ErrorKind::ConnectionRefused) => {
            "is the server running? check the host and port (in the URL, or PGHOST and PGPORT)"
        }
        (None, io::ErrorKind::NotFound) => {
            "no server socket there: is the server running? check the socket directory (host) and the port"
        }
        (None, io::ErrorKind::TimedOut) => {
            "no answer within connect_timeout: check the host, the port and firewalls, or raise connect_timeout"
        }
        _ => return None,
    };
    Some(advice.to_owned())
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

/// Cancels what a connection is running, for a worker that gave up on a
/// statement: dropping its future only stops dbload waiting, while the
/// server would go on running it (and holding its locks) to the end.
#[derive(Clone)]
pub struct Canceller {
    /// Boxed: a token carries the connection's whole socket configuration,
    /// and every worker's executor holds one.
    token: Box<CancelToken>,
    tls: Option<MakeRustlsConnect>,
    /// `connect_timeout`: the request opens a connection of its own, and
    /// a server that never answers it must not hold the one who cancels.
    timeout: Option<std::time::Duration>,
}

impl Canceller {
    /// Asks the server to cancel the connection's current statement. The
    /// server does not say whether it did; a request that cannot be sent
    /// is said on stderr, as the statement may still be running.
    pub async fn cancel(&self) {
        let sending = async {
            match &self.tls {
                Some(tls) => self.token.cancel_query(tls.clone()).await,
                None => self.token.cancel_query(NoTls).await,
            }
        };
        let failed = match self.timeout {
            Some(t) => match tokio::time::timeout(t, sending).await {
                Ok(sent) => sent.err().map(|e| error_text(&e)),
                Err(_) => Some(format!("no answer within connect_timeout ({} s)", t.as_secs_f64())),
            },
            None => sending.await.err().map(|e| error_text(&e)),
        };
        if let Some(why) = failed {
            crate::console::line(format_args!(
                "dbload: could not cancel a statement still running on the server: {why}"
            ));
        }
    }
}

/// Also the home of the helpers that the `conninfo` and `tls` tests share.
#[cfg(test)]
pub(crate) mod tests {
    use std::fs;
    use std::future::Future;
    use std::time::Duration;

    use tempfile::TempDir;
    use tokio_postgres::config::Host;

    use super::*;
    use crate::driver::tls::tests::new_ca;
    use crate::error::{exit, exit_code};

    pub(in crate::driver) fn no_env(_: &str) -> Option<String> {
        None
    }

    pub(in crate::driver) fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars.iter().map(|&(k, v)| (k.to_owned(), v.to_owned())).collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    pub(in crate::driver) fn parse(url: &str) -> PgTarget {
        PgTarget::from_url(url, "--url", &no_env).unwrap_or_else(|err| panic!("{url}: {err:#}"))
    }

    /// The message of a usage error (exit 2), failing the test on any other.
    pub(in crate::driver) fn usage_error(result: anyhow::Result<PgTarget>) -> String {
        let err = result.expect_err("expected a usage error");
        assert_eq!(exit_code(&err), exit::USAGE, "{err:#}");
        err.to_string()
    }

    /// The password a target will log in with, if any.
    pub(in crate::driver) fn password_of(t: &PgTarget) -> Option<String> {
        t.config.get_password().map(|p| String::from_utf8(p.to_vec()).unwrap())
    }

    pub(in crate::driver) fn block_on<F: Future>(future: F) -> F::Output {
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
    fn a_run_names_its_sessions_unless_the_user_named_them() {
        assert_eq!(parse("postgres://alice@db/d").for_run("r1").application_name(), Some("dbload r1"));
        let named = parse("postgres://alice@db/d?application_name=loader").for_run("r1");
        assert_eq!(named.application_name(), Some("loader"));
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
}
