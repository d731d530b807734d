//! `HttpConfig`: the flags of `dbload http` resolved and validated once:
//! the request (method, URL, headers, auth, body), the run (VUs, rate,
//! iterations, duration, think time) and the checks. Files are read here,
//! so a missing body file or a broken template stops the run before it
//! starts, naming the option.

use std::time::Duration;

use anyhow::Result;
use base64::Engine as _;

use super::fail_if::Contract;
use super::ingest::split_rows;
use super::load::Load;
use super::{default_in_flight, parse_warmup, OutputConfig, TargetChoice};
use crate::cli::HttpArgs;
use crate::driver::http::check::Check;
use crate::driver::http::template::BodyTemplate;
use crate::driver::http::{Endpoint, RequestSpec};
use crate::error::usage;
use crate::file_cap::{self, Cap};
use crate::op::Stages;
use crate::redact;

/// The run length when neither `--duration` nor `--iterations` is given (wrk's).
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// The longest `--timeout`: the longest latency a histogram records (a
/// request that took longer would be recorded as taking this long).
const MAX_TIMEOUT: Duration = Duration::from_micros(crate::stats::hist::MAX_US);

/// With `--rate` and no `--vus`: one VU per request/s, up to this many.
pub const MAX_DEFAULT_VUS: u32 = 100;

/// `--body-file` and `--body-template`: held in memory and sent with every
/// request, so one over the configuration cap is a mistake (a device such
/// as /dev/zero, a dump).
const BODY_FILE: Cap = Cap::config("the request body");

/// Where the bodies come from.
#[derive(Debug, Clone)]
pub enum BodySource {
    /// No body, or the same bytes every time (in [`RequestSpec::body`]).
    Fixed { label: Option<String> },
    /// Rendered per request.
    Template(BodyTemplate),
}

#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub request: RequestSpec,
    pub body: BodySource,
    pub vus: u32,
    /// Requests per VU (u64::MAX: until the duration ends).
    pub per_vu: Vec<u64>,
    pub iterations: Option<u64>,
    /// Closed loop: think time after each request.
    pub sleep: Option<Duration>,
    /// Duration, rate (total requests per second), stages, warm-up, seed,
    /// the first VU's number; `reconnect` stays false (`dbload http` has no `--reconnect`).
    pub load: Load,
    /// `--threads`: the threads that run the VUs (`run::cores`); none: one
    /// per CPU.
    pub threads: Option<usize>,
    /// `--observe`: the database behind the API, sampled while the run runs.
    pub observe: Option<TargetChoice>,
    pub output: OutputConfig,
}

impl HttpConfig {
    pub fn resolve(a: HttpArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<HttpConfig> {
        let (method, url) = match a.request.as_slice() {
            [url] => (None, url.clone()),
            [method, url] => (Some(method.clone()), url.clone()),
            _ => return Err(usage("give the URL, optionally after the method: dbload http POST http://host/path")),
        };
        let endpoint = Endpoint::parse(&url, "URL")?;

        let (body, label, has_body, template) = if let Some(text) = a.body {
            let label = format!("--body ({} bytes)", text.len());
            (text.into_bytes(), Some(label), true, None)
        } else if let Some(path) = &a.body_file {
            let bytes = file_cap::read(path, &format!("--body-file {}", path.display()), BODY_FILE)?;
            let label = format!("{} ({} bytes)", path.display(), bytes.len());
            (bytes, Some(label), true, None)
        } else if let Some(path) = &a.body_template {
            let shown = path.display().to_string();
            let source = file_cap::read_text(path, &format!("--body-template {shown}"), BODY_FILE)?;
            (Vec::new(), None, true, Some(BodyTemplate::from_source(&source, &shown)?))
        } else {
            (Vec::new(), None, false, None)
        };
        let method = match method {
            Some(m) => {
                let upper = m.to_ascii_uppercase();
                if upper.is_empty() || !upper.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_') {
                    return Err(usage(format!("method {m:?}: give an HTTP method such as GET or POST before the URL")));
                }
                upper
            }
            None if has_body => "POST".to_owned(),
            None => "GET".to_owned(),
        };

        let mut headers = Vec::with_capacity(a.headers.len() + 2);
        for h in &a.headers {
            let (name, value) = h
                .split_once(':')
                .map(|(n, v)| (n.trim(), v.trim()))
                .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_graphic()))
                .ok_or_else(|| usage(format!("--header {:?}: give `Name: value`", redact::header(h))))?;
            if ["host", "content-length", "transfer-encoding", "connection"]
                .contains(&name.to_ascii_lowercase().as_str())
            {
                return Err(usage(format!(
                    "--header {name}: dbload sets this header itself (use the URL for the host, --no-keepalive for Connection)"
                )));
            }
            if value.bytes().any(|b| b == b'\r' || b == b'\n') {
                return Err(usage(format!("--header {name}: a value cannot contain a line break")));
            }
            headers.push((name.to_owned(), value.to_owned()));
        }
        let has = |headers: &[(String, String)], name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        let basic = match (&a.user, &endpoint.userinfo) {
            (Some(u), _) => Some(u.split_once(':').map_or((u.clone(), String::new()), |(u, p)| (u.into(), p.into()))),
            (None, Some(ui)) => Some(ui.clone()),
            // Out of the command line, which every local user sees in `ps`.
            (None, None) => env("DBLOAD_HTTP_USER")
                .filter(|u| !u.is_empty())
                .map(|u| u.split_once(':').map_or((u.clone(), String::new()), |(u, p)| (u.into(), p.into()))),
        };
        let bearer = a.bearer.clone().or_else(|| env("DBLOAD_BEARER_TOKEN")).filter(|t| !t.is_empty());
        let given = has(&headers, "authorization");
        match (basic, bearer) {
            _ if given && (a.user.is_some() || a.bearer.is_some()) => {
                return Err(usage("-H 'Authorization: ...' and --user/--bearer both set Authorization: give one"))
            }
            // The header given wins over the URL's user:password@ (and the
            // environment's), as curl's -H does: one Authorization is sent.
            _ if given => {}
            (Some(_), Some(_)) => {
                return Err(usage(
                    "--user (or user:password@ in the URL, or DBLOAD_HTTP_USER) and --bearer (or DBLOAD_BEARER_TOKEN) \
                     both set Authorization: give one",
                ))
            }
            (Some((user, pass)), None) => {
                let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
                headers.push(("Authorization".into(), format!("Basic {token}")));
            }
            (None, Some(token)) => headers.push(("Authorization".into(), format!("Bearer {token}"))),
            (None, None) => {}
        }
        if has_body && !has(&headers, "content-type") {
            // The APIs this is for (NGSI notify, CrateDB, ingest endpoints) take JSON.
            headers.push(("Content-Type".into(), "application/json".into()));
        }

        if a.timeout.is_zero() || a.timeout > MAX_TIMEOUT {
            return Err(usage(format!(
                "--timeout {}: out of range; give a positive time up to {} (the longest latency recorded), such as 30s",
                humantime::format_duration(a.timeout),
                humantime::format_duration(MAX_TIMEOUT)
            )));
        }
        let output = OutputConfig::resolve(a.output, Contract::Http)?;
        let instance = output.instance.clone();
        super::stages_not_split(&a.stages, instance.as_ref())?;
        // --rate and --iterations are the whole run's; this instance does its share.
        let rate = super::check_rate(a.rate, "requests")?.map(|r| instance.as_ref().map_or(r, |i| i.rate(r)));
        let stages = super::resolve_stages(&a.stages, a.duration, rate, ("--vus", a.vus))?;
        if a.sleep.is_some() && a.stages.rate_stages.is_some() {
            return Err(usage(
                "--sleep and --rate-stages: an open loop's schedule sets when requests start; leave out --sleep",
            ));
        }
        let vus = match (super::stage_workers(stages.as_ref()), a.vus, super::sizing_rate(rate, stages.as_ref())) {
            (Some(n), _, _) => n,
            (None, Some(n), _) => super::connections("--vus", n, "virtual user")?,
            (None, None, Some(r)) => default_in_flight(r, MAX_DEFAULT_VUS),
            (None, None, None) => 1,
        };
        let given = stages.as_ref().map(Stages::duration).or(super::check_duration(a.duration)?);
        let (iterations, duration) = match (a.iterations, given) {
            (Some(0), _) => return Err(usage("--iterations 0: give at least 1 request")),
            (None, None) => (None, Some(DEFAULT_DURATION)),
            (i, d) => (i, d),
        };
        let all_vus = instance.as_ref().map_or(vus, |i| i.all_workers(vus));
        let warmup = parse_warmup(
            a.warmup.as_deref(),
            all_vus,
            "requests",
            iterations.map(|n| (n, "--iterations")),
            super::run_span(stages.as_ref(), duration),
        )?;
        let per_vu: Vec<u64> = match (iterations, &instance) {
            (Some(n), Some(i)) => i.shares(n, vus),
            (Some(n), None) => split_rows(n, vus),
            (None, _) => vec![u64::MAX; vus as usize],
        };
        let iterations = iterations.map(|_| per_vu.iter().sum());
        let checks = a.checks.iter().map(|c| Check::parse(c)).collect::<Result<Vec<_>>>()?;

        let body_source = match template {
            Some(t) => BodySource::Template(t),
            None => BodySource::Fixed { label },
        };
        Ok(HttpConfig {
            request: RequestSpec {
                method,
                endpoint,
                headers,
                body,
                has_body,
                keepalive: !a.no_keepalive,
                insecure: a.insecure,
                timeout: a.timeout,
                checks,
            },
            body: body_source,
            vus,
            per_vu,
            iterations,
            sleep: a.sleep.filter(|s| !s.is_zero()),
            load: Load {
                duration,
                rate,
                stages,
                warmup,
                seed: a.seed,
                first_worker: instance.as_ref().map_or(0, |i| i.first_worker(vus)),
                reconnect: false,
                skip_late: None,
            },
            threads: super::worker_threads(a.threads)?,
            observe: a.observe.as_deref().map(|url| super::resolve_observed(url, env)).transpose()?,
            output,
        })
    }

    /// The headers as reports show them: secret values replaced by `***`.
    pub fn shown_headers(&self) -> Vec<String> {
        self.request.headers.iter().map(|(n, v)| redact::header(&format!("{n}: {v}"))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn resolve(args: &str) -> Result<HttpConfig> {
        resolve_with(args, &|_| None)
    }

    fn resolve_with(args: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<HttpConfig> {
        let cli = Cli::try_parse_from(format!("dbload http {args}").split_whitespace()).unwrap();
        let Command::Http(a) = cli.command else { unreachable!() };
        HttpConfig::resolve(a, env)
    }

    /// Issue 29, item 6: `-H 'X-Api-Key S3cr3t'` (no colon) was refused
    /// with the value in the message, and kept whole in the command line.
    #[test]
    fn a_header_without_a_colon_is_refused_without_its_value() {
        let argv = ["dbload", "http", "http://h/x", "-H", "X-Api-Key S3cr3t"];
        let Command::Http(a) = Cli::try_parse_from(argv).unwrap().command else { unreachable!() };
        let e = HttpConfig::resolve(a, &|_| None).unwrap_err().to_string();
        assert!(e.starts_with("--header \"X-Api-Key ***\": give `Name: value`"), "{e}");
        let line = crate::redact::command_line(argv.map(String::from));
        assert_eq!(line, "dbload http http://h/x -H 'X-Api-Key ***'");
    }

    /// Issue 29, item 6: `-u user:pass` shows in `ps`; `DBLOAD_HTTP_USER`
    /// gives it from the environment. A `-u` or the URL's user info wins.
    #[test]
    fn basic_auth_comes_from_the_environment() {
        let env = |k: &str| (k == "DBLOAD_HTTP_USER").then(|| "app:hunter2".to_string());
        let basic = |args: &str| {
            let c = resolve_with(args, &env).unwrap();
            c.request.headers.iter().find(|(n, _)| n == "Authorization").map(|(_, v)| v.clone())
        };
        assert_eq!(basic("http://h/x").as_deref(), Some("Basic YXBwOmh1bnRlcjI="));
        assert_eq!(basic("http://h/x -u me:pw").as_deref(), Some("Basic bWU6cHc="));
        assert_eq!(basic("http://me:pw@h/x").as_deref(), Some("Basic bWU6cHc="));
    }

    fn err(args: &str) -> String {
        let e = resolve(args).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2, "{e}");
        e.to_string()
    }

    #[test]
    fn defaults() {
        let c = resolve("http://h/x").unwrap();
        assert_eq!((c.request.method.as_str(), c.vus, c.load.duration), ("GET", 1, Some(DEFAULT_DURATION)));
        assert!(c.request.keepalive && !c.request.has_body);
        let c = resolve("-d {} http://h/x --rate 500").unwrap();
        assert_eq!((c.request.method.as_str(), c.vus), ("POST", 100));
        assert!(c.shown_headers().contains(&"Content-Type: application/json".to_string()));
        let c = resolve("put http://h/x --iterations 10 --vus 3 --no-keepalive").unwrap();
        assert_eq!((c.request.method.as_str(), c.per_vu.clone(), c.load.duration), ("PUT", vec![4, 3, 3], None));
        assert!(!c.request.keepalive);
    }

    /// Issue 29, item 8: `-H Authorization` with `user:password@` in the URL
    /// (or a bearer token in the environment) sent two Authorization
    /// headers; the header given wins, as in curl.
    #[test]
    fn an_authorization_header_wins_over_userinfo() {
        let auths =
            |c: &HttpConfig| c.request.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case("authorization")).count();
        let c = resolve("http://app:hunter2@h/x -H Authorization:Token.t").unwrap();
        assert_eq!((auths(&c), c.shown_headers()), (1, vec!["Authorization: ***".to_string()]));
        assert!(c.request.headers.contains(&("Authorization".into(), "Token.t".into())));
        let env = |k: &str| (k == "DBLOAD_BEARER_TOKEN").then(|| "fr0m-env".to_string());
        let c = resolve_with("http://h/x -H authorization:Token.t", &env).unwrap();
        assert!(c.request.headers.iter().all(|(_, v)| !v.contains("fr0m-env")) && auths(&c) == 1);
    }

    #[test]
    fn auth_is_sent_and_never_shown() {
        let c = resolve("http://app:hunter2@h/x").unwrap();
        let (_, v) = c.request.headers.iter().find(|(n, _)| n == "Authorization").unwrap();
        assert_eq!(v, "Basic YXBwOmh1bnRlcjI=");
        assert_eq!(c.shown_headers(), vec!["Authorization: ***"]);
        assert_eq!(c.request.endpoint.redacted, "http://app:***@h/x");
        let c = resolve("http://h/x --bearer s3cret -H X-Api-Key:abc").unwrap();
        assert!(c.request.headers.contains(&("Authorization".into(), "Bearer s3cret".into())));
        assert!(!c.shown_headers().join(" ").contains("s3cret") && !c.shown_headers().join(" ").contains("abc"));
    }

    /// Issue 14 item 3: `--body-file /dev/zero` grew to 22.8 GB; a body over
    /// the limit is refused after reading at most one byte more than it.
    #[test]
    fn body_file_is_read_up_to_its_limit() {
        let e = err("http://h --body-file /dev/zero");
        assert!(e.contains("--body-file /dev/zero") && e.contains("64 MiB"), "{e}");
        // A template too (it was read whole, without a limit).
        let e = err("http://h --body-template /dev/zero");
        assert!(e.contains("--body-template /dev/zero") && e.contains("64 MiB"), "{e}");
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "{\"a\": 1}").unwrap();
        let c = resolve(&format!("http://h --body-file {}", file.path().display())).unwrap();
        assert_eq!(c.request.body, b"{\"a\": 1}");
        assert_eq!(c.request.method, "POST");
    }

    #[test]
    fn bad_values_name_the_option() {
        assert!(err("http://h --vus 0").contains("--vus"));
        assert!(err("http://h --vus 4294967295").contains("at most 100000"));
        assert!(err("http://h --threads 0").contains("--threads 0"));
        assert!(err("http://h --threads 1000000").contains("--threads 1000000: give 1 to 1024"));
        assert!(err("http://h --rate=-3").contains("--rate"));
        assert!(err("http://h --iterations 0").contains("--iterations"));
        assert!(err("http://h --duration 0s").contains("--duration"));
        assert!(err("http://h --timeout 0s").contains("--timeout"));
        assert!(err("http://h --body-file /no/such/file").contains("--body-file"));
        assert!(err("http://h --body-template /no/such.j2").contains("--body-template"));
        assert!(err("http://h -H nocolon").contains("--header"));
        assert!(err("http://h -H Host:x").contains("--header Host"));
        assert!(err("http://h --check status=abc").contains("--check"));
        assert!(err("ftp://h").contains("URL"));
        assert!(err("GE/T http://h").contains("method"));
        assert!(err("http://u:p@h --bearer t").contains("--bearer"));
        assert!(err("http://h --warmup soon").contains("--warmup"));
    }

    #[test]
    fn a_timeout_or_rate_beyond_the_clock_is_refused() {
        let e = err("http://h --timeout 500000000000y");
        assert!(e.contains("--timeout 500000000000years") && e.contains("up to 1h"), "{e}");
        resolve("http://h --timeout 1h").unwrap();
        let e = err("http://h --rate 1e-300 --duration 5s");
        assert!(e.contains("--rate 1e-300") && e.contains("0.001 or more"), "{e}");
        resolve("http://h --rate 0.001 --duration 5s").unwrap();
    }

    /// Issue 29, item 7, for HTTP: `--duration` past the clock panicked in
    /// the workers; a warm-up as long as the run measured nothing.
    #[test]
    fn a_duration_or_warmup_a_run_cannot_keep_is_refused() {
        let e = err("http://h --duration 500000000000y");
        assert!(e.contains("--duration 500000000000years") && e.contains("at most 100years"), "{e}");
        let e = err("http://h --duration 3s --warmup 1m");
        assert!(e.contains("--warmup 1m") && e.contains("the run lasts 3s (--duration)"), "{e}");
        let e = err("http://h --rate 1e10");
        assert!(e.contains("--rate 10000000000.0") && e.contains("1000000000 or less"), "{e}");
    }
}
