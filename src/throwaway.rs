//! A throwaway PostgreSQL, for runs that name no target.
//!
//! dbload should answer "how fast can this machine ingest?" with nothing but
//! the PostgreSQL binaries installed, and the test suite needs real servers.
//! Both get the same thing: a fresh cluster in a temporary directory, started
//! with settings that keep the disk out of the measurement, reached over its
//! Unix socket, and stopped and removed when dropped.
//!
//! The server belongs to whoever started it: its superuser logs in with
//! scram-sha-256 and a random password made for this server alone, its
//! socket directory is private (0700) and TCP listens on 127.0.0.1 only, so
//! that no other local user can become its superuser (and, through
//! `COPY ... TO PROGRAM`, run programs as the server's account). The
//! password reaches clients through a libpq password file in the server's
//! directory, never through a command line.

use std::fs::{self, File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use base64::Engine as _;
use nix::errno::Errno;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::{chown, geteuid, getpid, getppid, Pid, User};
use tempfile::TempDir;

use crate::driver::pg::PgTarget;
use crate::error::{target, usage};
use crate::format::human_size;

/// How to start the throwaway server.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Leave the server running and its directory in place after dbload exits.
    pub keep: bool,
    /// The server's `max_connections`: at least the number of workers.
    pub max_connections: u32,
    /// More `-c name=value` settings; a name given here replaces the
    /// benchmark default of the same name.
    pub extra_settings: Vec<(String, String)>,
}

impl Default for LocalOptions {
    /// By hand, because a derived `max_connections` of 0 would not start.
    fn default() -> Self {
        LocalOptions { keep: false, max_connections: 100, extra_settings: Vec::new() }
    }
}

/// A running throwaway server. Dropping it stops the server and removes its
/// directory, unless it was started with `keep`.
#[derive(Debug)]
pub struct LocalPostgres {
    postmaster: Child,
    port: u16,
    /// The temporary directory: `data/`, the socket, `postgres.log`, the
    /// password file and the marker that `dbload stop` looks for.
    dir: PathBuf,
    data_dir: PathBuf,
    /// The superuser's password, made for this server alone.
    password: String,
    settings: Vec<(String, String)>,
    /// Removes `dir` when dropped, which happens after `Drop::drop` has
    /// stopped the server; `None` when the server is kept.
    cleanup: Option<TempDir>,
}

/// The superuser that initdb creates, and the database dbload connects to.
const SUPERUSER: &str = "postgres";

/// Settings that keep the disk out of the measurement. The server is thrown
/// away after the run, so durability buys nothing, and an ingestion benchmark
/// should measure the database's work, not this machine's fsync latency.
const BENCHMARK_SETTINGS: [(&str, &str); 8] = [
    ("fsync", "off"),
    ("synchronous_commit", "off"),
    ("full_page_writes", "off"),
    // Minimal WAL: nothing replicates from or archives a throwaway server
    // (and minimal requires max_wal_senders = 0).
    ("wal_level", "minimal"),
    ("max_wal_senders", "0"),
    ("shared_buffers", "512MB"),
    // Checkpoints no more often than the amount of data forces them.
    ("max_wal_size", "8GB"),
    ("checkpoint_timeout", "1h"),
];

/// The file in the server's directory that says dbload made it: `dbload
/// stop` removes no directory without it.
const MARKER: &str = "dbload-throwaway";
/// The libpq password file (`PGPASSFILE` format) in the server's directory.
const PASSFILE: &str = "pgpass";
/// The password handed to initdb (`--pwfile`), removed once initdb is done.
const INITDB_PWFILE: &str = "initdb-pwfile";

/// What to do when the throwaway server cannot be made to work.
const NEXT_STEP: &str = "fix what the output above reports, or pass --url to use a running server";

/// How long the server may take to accept connections, and to stop.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
const FAST_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);
const IMMEDIATE_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Another process may take the free port between our probe and the
/// server's bind; that many tries make a clash all but impossible.
const START_ATTEMPTS: u32 = 3;

impl LocalPostgres {
    /// Creates and starts a fresh server. Synchronous: call it before the
    /// tokio runtime starts, or outside it.
    ///
    /// When dbload runs as root, the server runs as `postgres` (or `nobody`),
    /// since PostgreSQL refuses root.
    ///
    /// Unless `keep`, the server is told to shut down (SIGQUIT) when its
    /// parent dies, so that a SIGKILLed dbload leaves no server running (its
    /// directory does stay behind, as nobody is left to remove it).
    /// Linux sends that signal when the *thread* that spawned the server
    /// exits, not the process: call `start` from a thread that lives as long
    /// as the server (the main thread, or the test's own thread).
    pub fn start(opts: &LocalOptions) -> anyhow::Result<LocalPostgres> {
        let binaries = Binaries::find()?;
        let account = server_account()?;
        let cleanup = tempfile::Builder::new()
            .prefix("dbload-pg-")
            .tempdir()
            .context("cannot create a temporary directory for the local PostgreSQL")?;
        let dir = cleanup.path().to_path_buf();
        // The socket's directory: only its owner may reach the socket.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} private", dir.display()))?;
        if let Some(user) = &account {
            // It becomes the server account's private directory.
            chown(&dir, Some(user.uid), Some(user.gid))
                .with_context(|| format!("cannot hand {} to the `{}` account", dir.display(), user.name))?;
        }
        write_private(
            &dir.join(MARKER),
            "a throwaway PostgreSQL made by dbload; `dbload stop DIR` stops it and removes DIR\n",
        )?;
        let data_dir = dir.join("data");
        let password = new_password()?;
        initdb(&binaries.initdb, &dir, &data_dir, account.as_ref(), &password)?;
        let settings = server_settings(opts);
        let (postmaster, port) =
            start_postmaster(&binaries.postgres, &dir, &data_dir, &settings, account.as_ref(), opts.keep)?;
        // The host names libpq looks up: 127.0.0.1 for TCP, and for the Unix
        // socket in `dir` that directory itself (libpq reads `localhost` as
        // a socket only in its default socket directory), escaped as a
        // password file's fields are.
        let socket_host = dir.display().to_string().replace('\\', "\\\\").replace(':', "\\:");
        let passfile = [&*socket_host, "127.0.0.1", "localhost"]
            .map(|host| format!("{host}:{port}:*:{SUPERUSER}:{password}\n"))
            .concat();
        let mut postmaster = postmaster;
        if let Err(err) = write_private(&dir.join(PASSFILE), &passfile) {
            stop(&mut postmaster);
            return Err(err);
        }
        let cleanup = if opts.keep {
            // A kept server outlives dbload, and so must its directory.
            let _kept = cleanup.keep();
            None
        } else {
            Some(cleanup)
        };
        Ok(LocalPostgres { postmaster, port, dir, data_dir, password, settings, cleanup })
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`, without the password:
    /// for messages and reports.
    pub fn url(&self) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{SUPERUSER}", self.port)
    }

    /// The libpq password file (mode 0600) that holds the superuser's
    /// password for this server: `PGPASSFILE=...`, or `?passfile=...` in
    /// a URL, lets psql or dbload log in without the password on a command line.
    pub fn passfile(&self) -> PathBuf {
        self.dir.join(PASSFILE)
    }

    /// The server's directory, which `dbload stop` takes.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The target dbload itself uses: the Unix socket, which is cheaper than
    /// TCP per round trip, so the client spends less of the machine.
    pub fn target(&self) -> PgTarget {
        let mut config = tokio_postgres::Config::new();
        config.host_path(&self.dir).port(self.port).user(SUPERUSER).dbname(SUPERUSER).password(&self.password);
        PgTarget::from_config(config, self.url())
    }

    /// What `--keep` prints: how to connect without the password on a
    /// command line, how to stop the server and remove its directory, and
    /// how much disk it holds until then.
    pub fn keep_recipe(&self) -> String {
        let dir = self.dir.display();
        format!(
            "dbload: the throwaway PostgreSQL keeps running on 127.0.0.1:{port} ({size} in {dir}).\n\
             Connect with (the password is in {passfile}, readable only by you):\n  \
             PGPASSFILE={passfile} psql -h 127.0.0.1 -p {port} -U {SUPERUSER} {SUPERUSER}\n  \
             dbload ... --url 'postgres://{SUPERUSER}@127.0.0.1:{port}/{SUPERUSER}?passfile={passfile}'\n\
             Stop it and remove {dir} with:\n  dbload stop {dir}\n",
            port = self.port,
            size = human_size(disk_usage(&self.data_dir)),
            passfile = self.passfile().display(),
        )
    }

    /// The settings the server was started with beyond its defaults, as
    /// `(name, value)`, for the report.
    pub fn settings(&self) -> &[(String, String)] {
        &self.settings
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }
}

impl Drop for LocalPostgres {
    fn drop(&mut self) {
        if self.cleanup.is_some() {
            stop(&mut self.postmaster);
        }
    }
}

/// The two server programs, found the way a user would look for them.
struct Binaries {
    initdb: PathBuf,
    postgres: PathBuf,
}

impl Binaries {
    /// PATH first (the user's choice), then `pg_config --bindir`, then the
    /// newest Debian/Ubuntu package under /usr/lib/postgresql, whose
    /// binaries are not on PATH.
    fn find() -> anyhow::Result<Binaries> {
        if let (Some(initdb), Some(postgres)) = (in_path("initdb"), in_path("postgres")) {
            return Ok(Binaries { initdb, postgres });
        }
        pg_config_bindir()
            .into_iter()
            .chain(packaged_bindirs())
            .find_map(|dir| {
                let binaries = Binaries { initdb: dir.join("initdb"), postgres: dir.join("postgres") };
                (is_executable(&binaries.initdb) && is_executable(&binaries.postgres)).then_some(binaries)
            })
            .ok_or_else(|| {
                usage(
                    "no PostgreSQL server binaries found (initdb, postgres): install them \
                     (apt-get install postgresql) or pass --url to use a running server",
                )
            })
    }
}

fn in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|file| is_executable(file))
}

fn is_executable(file: &Path) -> bool {
    fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn pg_config_bindir() -> Option<PathBuf> {
    let output = Command::new("pg_config").arg("--bindir").output().ok()?;
    output.status.success().then(|| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()))
}

/// `/usr/lib/postgresql/<version>/bin`, newest version first.
fn packaged_bindirs() -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir("/usr/lib/postgresql") else {
        return Vec::new();
    };
    let mut versions: Vec<(Vec<u32>, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let version = version_key(entry.file_name().to_str()?)?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    versions.into_iter().map(|(_, dir)| dir).collect()
}

/// `"9.6"` → `[9, 6]`, so that 10 sorts after 9.6; `None` if not a version.
fn version_key(name: &str) -> Option<Vec<u32>> {
    name.split('.').map(|part| part.parse().ok()).collect()
}

/// PostgreSQL refuses to run as root. When dbload is root, the server runs as
/// `postgres` (the account the packages create) or else `nobody`; `None`
/// means it runs as dbload's own user.
pub(crate) fn server_account() -> anyhow::Result<Option<User>> {
    if !geteuid().is_root() {
        return Ok(None);
    }
    for name in ["postgres", "nobody"] {
        if let Some(user) = User::from_name(name).with_context(|| format!("cannot look up the `{name}` account"))? {
            return Ok(Some(user));
        }
    }
    Err(usage(
        "dbload runs as root, as which PostgreSQL refuses to run, and there is no `postgres` or \
         `nobody` account to run the local server as: create one (useradd --system postgres), \
         run dbload as another user, or pass --url to use a running server",
    ))
}

/// A command for a server program, run in `dir` and, when dbload is root, as
/// `account`. std also drops the supplementary groups when it switches the
/// user id, so root's groups do not leak into the server.
fn server_command(program: &Path, dir: &Path, account: Option<&User>) -> Command {
    let mut command = Command::new(program);
    command.current_dir(dir).stdin(Stdio::null());
    if let Some(user) = account {
        command
            .uid(user.uid.as_raw())
            .gid(user.gid.as_raw())
            // root's HOME is not readable by the account.
            .env("HOME", dir);
    }
    command
}

/// A random password: 24 bytes from the kernel, base64url (no `:` or `\`,
/// which a password file would need escaped).
fn new_password() -> anyhow::Result<String> {
    let mut bytes = [0u8; 24];
    File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .context("cannot read /dev/urandom for the local PostgreSQL's password")?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Writes a new file that only its owner may read (0600 from the start, so
/// that it is never readable by others, not even for a moment).
fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

fn initdb(initdb: &Path, dir: &Path, data_dir: &Path, account: Option<&User>, password: &str) -> anyhow::Result<()> {
    // The password goes through a file (--pwfile), as a command line shows
    // to every local user; the file is the server account's, and gone once
    // initdb has read it.
    let pwfile = dir.join(INITDB_PWFILE);
    write_private(&pwfile, password)?;
    if let Some(user) = account {
        chown(&pwfile, Some(user.uid), Some(user.gid))
            .with_context(|| format!("cannot hand {} to the `{}` account", pwfile.display(), user.name))?;
    }
    // The C locale keeps the cluster independent of this machine's LANG,
    // and --no-sync skips fsyncing files that are thrown away anyway.
    let output = server_command(initdb, dir, account)
        .arg("-D")
        .arg(data_dir)
        .args(["-U", SUPERUSER, "--auth=scram-sha-256", "--encoding=UTF8"])
        .arg(format!("--pwfile={}", pwfile.display()))
        .args(["--locale=C", "--no-sync"])
        .output()
        .with_context(|| format!("cannot run {}", initdb.display()));
    fs::remove_file(&pwfile).with_context(|| format!("cannot remove {}", pwfile.display()))?;
    let output = output?;
    if output.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    Err(target(format!(
        "cannot create the local PostgreSQL: {} failed ({}), ending with:\n{}\n{NEXT_STEP}",
        initdb.display(),
        output.status,
        tail(&text)
    )))
}

/// The benchmark settings, then `max_connections`, then the extra settings,
/// each replacing an earlier one of the same name.
fn server_settings(opts: &LocalOptions) -> Vec<(String, String)> {
    let mut settings: Vec<(String, String)> =
        BENCHMARK_SETTINGS.iter().map(|&(name, value)| (name.to_owned(), value.to_owned())).collect();
    let max_connections = ("max_connections".to_owned(), opts.max_connections.to_string());
    for (name, value) in std::iter::once(max_connections).chain(opts.extra_settings.clone()) {
        match settings.iter_mut().find(|(existing, _)| *existing == name) {
            Some(setting) => setting.1 = value,
            None => settings.push((name, value)),
        }
    }
    settings
}

/// Starts the postmaster on a free port and waits until it accepts
/// connections; retries on another port if the chosen one was taken.
fn start_postmaster(
    postgres: &Path,
    dir: &Path,
    data_dir: &Path,
    settings: &[(String, String)],
    account: Option<&User>,
    keep: bool,
) -> anyhow::Result<(Child, u16)> {
    let log_path = dir.join("postgres.log");
    let mut attempt = 1;
    loop {
        let port = free_port()?;
        let log = File::create(&log_path).with_context(|| format!("cannot create {}", log_path.display()))?;
        let mut command = server_command(postgres, dir, account);
        command
            .arg("-D")
            .arg(data_dir)
            .args(["-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!("port={port}"))
            .arg("-c")
            .arg(format!("unix_socket_directories={}", dir.display()))
            // The directory is already private; the socket is too, in case
            // someone opens the directory up.
            .args(["-c", "unix_socket_permissions=0700"]);
        for (name, value) in settings {
            command.arg("-c").arg(format!("{name}={value}"));
        }
        command
            .stdout(log.try_clone()?)
            .stderr(log)
            // Its own process group: a Ctrl-C in the terminal reaches only
            // dbload, which then stops the server itself.
            .process_group(0);
        if !keep {
            die_with_parent(&mut command);
        }
        let mut child = command.spawn().with_context(|| format!("cannot run {}", postgres.display()))?;

        // Ok: ready; Err: exited. An unanswerable try_wait counts as still
        // starting, which the deadline ends.
        let outcome = poll(READY_TIMEOUT, || match child.try_wait() {
            Ok(Some(status)) => Some(Err(status)),
            _ => is_ready(data_dir).then_some(Ok(())),
        });
        let status = match outcome {
            Some(Ok(())) => return Ok((child, port)),
            Some(Err(status)) => status,
            None => {
                stop(&mut child);
                return Err(target(format!(
                    "the local PostgreSQL did not accept connections within {} s; its log ends \
                     with:\n{}\n{NEXT_STEP}",
                    READY_TIMEOUT.as_secs(),
                    log_tail(&log_path)
                )));
            }
        };
        let log = log_tail(&log_path);
        if log.contains("could not bind") && attempt < START_ATTEMPTS {
            attempt += 1;
            continue;
        }
        return Err(target(format!(
            "the local PostgreSQL exited while starting ({status}); its log ends with:\n{log}\n{NEXT_STEP}"
        )));
    }
}

/// Asks the kernel to send the server SIGQUIT (immediate shutdown) when the
/// spawning thread dies. It is set in the child after std has switched the
/// user id, which would otherwise clear it again.
fn die_with_parent(command: &mut Command) {
    let parent = getpid();
    // SAFETY: the closure runs between fork and exec and makes only
    // async-signal-safe system calls (prctl, getppid) and no allocation.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGQUIT)?;
            // The parent may have died before the request was in place.
            if getppid() != parent {
                return Err(Errno::ESRCH.into());
            }
            Ok(())
        });
    }
}

fn free_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .context("cannot find a free TCP port on 127.0.0.1 for the local PostgreSQL")?;
    Ok(listener.local_addr()?.port())
}

/// The 8th line of postmaster.pid is the server's status, `ready` once it
/// accepts connections (PostgreSQL 10 and later).
fn is_ready(data_dir: &Path) -> bool {
    fs::read_to_string(data_dir.join("postmaster.pid"))
        .is_ok_and(|pid_file| pid_file.lines().nth(7).map(str::trim) == Some("ready"))
}

/// Stops the server: fast shutdown (SIGINT: end sessions, checkpoint, exit),
/// then immediate (SIGQUIT), then SIGKILL to its whole process group, which
/// also holds the backends.
fn stop(postmaster: &mut Child) {
    // An exited child keeps its pid until it is reaped, and only we reap it,
    // so the pid signalled below cannot belong to another process.
    if !is_running(postmaster) {
        return;
    }
    let pid = Pid::from_raw(postmaster.id() as i32);
    for (signal, limit) in [(Signal::SIGINT, FAST_SHUTDOWN_TIMEOUT), (Signal::SIGQUIT, IMMEDIATE_SHUTDOWN_TIMEOUT)] {
        // Errors mean the server is already gone, which try_wait will see.
        let _ = kill(pid, signal);
        if poll(limit, || (!is_running(postmaster)).then_some(())).is_some() {
            return;
        }
    }
    let _ = killpg(pid, Signal::SIGKILL);
    let _ = postmaster.wait();
}

/// `dbload stop DIR`: stops the kept server in `dir` (fast shutdown, then
/// immediate, then SIGKILL) and removes the directory. Refuses a directory
/// that dbload did not make. Returns the bytes freed.
pub fn stop_kept(dir: &Path) -> anyhow::Result<u64> {
    let data_dir = dir.join("data");
    if !dir.join(MARKER).is_file() || !data_dir.join("PG_VERSION").is_file() {
        return Err(usage(format!(
            "dbload stop {}: not a throwaway PostgreSQL made by dbload (no {MARKER} file and data/ \
             cluster there): give the directory that `--keep` printed",
            dir.display()
        )));
    }
    if let Some(pid) = running_postmaster(dir) {
        // Gone, or a zombie that has let go of its directory.
        let gone = || running_postmaster(dir).is_none().then_some(());
        let signals = [(Signal::SIGINT, FAST_SHUTDOWN_TIMEOUT), (Signal::SIGQUIT, IMMEDIATE_SHUTDOWN_TIMEOUT)];
        let stopped = signals.into_iter().any(|(signal, limit)| {
            let _ = kill(pid, signal);
            poll(limit, gone).is_some()
        });
        if !stopped {
            let _ = killpg(pid, Signal::SIGKILL);
            poll(IMMEDIATE_SHUTDOWN_TIMEOUT, gone).ok_or_else(|| {
                target(format!(
                    "the PostgreSQL in {} (pid {pid}) does not stop: kill it, then try again",
                    dir.display()
                ))
            })?;
        }
    }
    let size = disk_usage(dir);
    fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    Ok(size)
}

/// The postmaster of the server in `dir`, if it runs: the pid in
/// postmaster.pid, and only if that process still works in the data
/// directory (the server moves there; a stale file's pid may belong to
/// another program by now).
fn running_postmaster(dir: &Path) -> Option<Pid> {
    let data_dir = dir.join("data");
    let pid_file = fs::read_to_string(data_dir.join("postmaster.pid")).ok()?;
    let pid: i32 = pid_file.lines().next()?.trim().parse().ok()?;
    let cwd = fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
    (cwd == fs::canonicalize(&data_dir).ok()?).then(|| Pid::from_raw(pid))
}

/// The disk space a directory takes, as `du` counts it (allocated blocks).
pub fn disk_usage(path: &Path) -> u64 {
    let Ok(meta) = fs::symlink_metadata(path) else { return 0 };
    let own = meta.blocks() * 512;
    if !meta.is_dir() {
        return own;
    }
    let entries = fs::read_dir(path).into_iter().flatten().flatten();
    own + entries.map(|entry| disk_usage(&entry.path())).sum::<u64>()
}

/// Whether the child has not exited yet; an error (it cannot be asked) counts
/// as exited, so that nothing waits on it forever.
fn is_running(child: &mut Child) -> bool {
    matches!(child.try_wait(), Ok(None))
}

/// Calls `check` until it returns something or `limit` has passed.
fn poll<T>(limit: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = check() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

fn log_tail(path: &Path) -> String {
    match fs::read(path) {
        Ok(bytes) => tail(&String::from_utf8_lossy(&bytes)),
        Err(err) => format!("(cannot read {}: {err})", path.display()),
    }
}

/// The last lines of a program's output: where the reason for a failure is.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_numerically() {
        let mut versions = vec![version_key("9.6"), version_key("15"), version_key("10")];
        versions.sort();
        assert_eq!(versions, [Some(vec![9, 6]), Some(vec![10]), Some(vec![15])]);
        assert_eq!(version_key("15beta"), None);
    }

    #[test]
    fn extra_settings_replace_defaults_in_place() {
        let opts = LocalOptions {
            max_connections: 42,
            extra_settings: vec![("shared_buffers".into(), "128MB".into()), ("work_mem".into(), "64MB".into())],
            ..LocalOptions::default()
        };
        let settings = server_settings(&opts);
        let get = |name: &str| settings.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        assert_eq!(get("shared_buffers"), Some("128MB"));
        assert_eq!(get("max_connections"), Some("42"));
        assert_eq!(get("work_mem"), Some("64MB"));
        assert_eq!(get("fsync"), Some("off"));
        assert_eq!(settings.iter().filter(|(n, _)| n == "shared_buffers").count(), 1);
    }

    #[test]
    fn starts_serves_and_removes_a_throwaway_server() {
        let opts = LocalOptions { max_connections: 20, ..LocalOptions::default() };
        let server = LocalPostgres::start(&opts).unwrap();
        let dir = server.dir.clone();
        let pid = Pid::from_raw(server.postmaster.id() as i32);
        assert!(server.data_dir().starts_with(&dir));
        assert!(server.url().starts_with("postgres://postgres@127.0.0.1:"));

        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (fsync, max_connections) = runtime.block_on(async {
            let client = server.target().connect().await.unwrap();
            let show = |name: &'static str| {
                let client = &client;
                async move {
                    let row = client.query_one(&format!("SHOW {name}"), &[]).await.unwrap();
                    row.get::<_, String>(0)
                }
            };
            (show("fsync").await, show("max_connections").await)
        });
        assert_eq!(fsync, "off");
        assert_eq!(max_connections, "20");

        // Private: the directory (and so the socket) is its owner's, and TCP
        // wants the password, which only the 0600 password file holds.
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&server.passfile()), 0o600);
        let no_env = |_: &str| None;
        let tcp = PgTarget::from_url(&server.url(), "--url", &no_env).unwrap();
        let err = runtime.block_on(tcp.connect()).unwrap_err();
        assert!(err.to_string().contains("password missing"), "{err:#}");
        let with_file = format!("{}?passfile={}", server.url(), server.passfile().display());
        let tcp = PgTarget::from_url(&with_file, "--url", &no_env).unwrap();
        runtime.block_on(tcp.connect()).unwrap();

        drop(server);
        assert!(!dir.exists(), "{} was not removed", dir.display());
        assert_eq!(kill(pid, None), Err(Errno::ESRCH), "the postmaster is still alive");
    }
}
