//! `dbload http`: its flags, with k6's names (`--vus`, `--iterations`,
//! `--duration`, `--sleep`) and curl's (`-H`, `-u`, `-k`) where they mean
//! the same, so a k6 script or a curl line translates option by option.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::values::{count, seconds_or_duration};
use super::OutputArgs;

pub(super) const HTTP_EXAMPLES: &str = "\
Examples:
  # QuantumLeap's notify load test (as k6 runs it): 30 VUs for 60 s, every
  # response must be 200
  dbload http POST http://ql:8668/v2/notify --body-file notify.json \\
      --vus 30 --duration 60s --check status=200

  # Open loop at 500 requests/s for 5 minutes, a new body for every request
  dbload http POST http://ql:8668/v2/notify --body-template notify.j2 \\
      --rate 500 --duration 5m

  # The connection-reuse question: a new connection for every request
  dbload http POST http://ql:8668/v2/notify --body-file notify.json \\
      --vus 30 --no-keepalive

  # Headers, a bearer token from the environment, a check on the JSON answer
  DBLOAD_BEARER_TOKEN=... dbload http GET https://ql:8668/v2/entities?limit=10 \\
      -H 'Fiware-Service: demo' --check 'json:$[0].type=Room' --iterations 1000

  # For scripts: JSON on stdout, exit 1 if a request failed or a check did not
  # hold
  dbload http POST http://127.0.0.1:8080/ingest --body-file rows.json \\
      --duration 30s --output json --quiet

Body templates (--body-template) are MiniJinja (Jinja2) templates rendered for every request, off the send path, with these values and functions (random ones seeded per VU by --seed):
  vu, iteration            this VU's number (0-based) and its request number
  randint(a, b)            an integer in [a, b]
  uniform(a, b)            a float in [a, b)
  choice(list)             one item of a list
  entity(prefix, n)        prefix, id in 1..=n: entity('Room:', 9) -> Room:7
  walk(name, start, step)  a random walk per name and VU: start, then ± step
  now(), now_ms()          the render time: RFC 3339 UTC (to the ms), Unix ms
  uuid()                   a random UUID (version 4)
  value|tojson             a value as JSON (quotes and escapes strings)
See docs/http.md.";

/// The flags `dbload http -h` shows; `--help` shows them all.
pub(super) const HTTP_MOST_USED: &[&str] =
    &["header", "body-file", "body-template", "vus", "duration", "rate", "check", "output"];

#[derive(Debug, Args)]
pub struct HttpArgs {
    /// The HTTP method (default: POST with a body, GET without) and the URL
    /// (http:// or https://; user:password@ in it is sent as basic auth).
    #[arg(value_name = "[METHOD] URL", num_args = 1..=2, required = true)]
    pub request: Vec<String>,

    /// A request header, `Name: value` (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE", help_heading = "Request")]
    pub headers: Vec<String>,

    /// Basic auth, `USER:PASSWORD` (as curl's -u); or DBLOAD_HTTP_USER=USER:PASSWORD, which `ps` does
    /// not show (the URL's user:password@ wins over it). Never printed.
    #[arg(short = 'u', long, value_name = "USER:PASSWORD", help_heading = "Request")]
    pub user: Option<String>,

    /// Bearer token for `Authorization: Bearer ...`. Never printed.
    #[arg(long, value_name = "TOKEN", env = "DBLOAD_BEARER_TOKEN", hide_env_values = true, help_heading = "Request")]
    pub bearer: Option<String>,

    /// Do not verify the server's TLS certificate (the traffic is still encrypted; the report
    /// says the server was not authenticated).
    #[arg(short = 'k', long, help_heading = "Request")]
    pub insecure: bool,

    /// Give up on a request after this long (connect included): it counts as failed, class
    /// `timeout`. At most 1h, the longest latency recorded.
    #[arg(long, value_name = "TIME", value_parser = humantime::parse_duration, default_value = "60s", help_heading = "Request")]
    pub timeout: Duration,

    /// The request body, as given.
    #[arg(short = 'd', long, value_name = "TEXT", group = "body_source", help_heading = "Body")]
    pub body: Option<String>,

    /// The request body: this file, read once and sent as is (at most 64 MiB).
    #[arg(long, value_name = "FILE", group = "body_source", help_heading = "Body")]
    pub body_file: Option<PathBuf>,

    /// A template rendered for every request (MiniJinja; see below), so every body differs.
    #[arg(long, value_name = "FILE", group = "body_source", help_heading = "Body")]
    pub body_template: Option<PathBuf>,

    /// Seed of the template's random values: the same seed gives the same bodies.
    #[arg(long, value_name = "N", default_value_t = 1, help_heading = "Body")]
    pub seed: u64,

    /// Virtual users: concurrent request loops, each on its own connection (default: 1; with
    /// --rate, one per request/s up to 100, the most requests in flight).
    #[arg(long, visible_alias = "connections", short = 'c', value_name = "N", help_heading = "Run")]
    pub vus: Option<u32>,

    /// Total requests, split across the VUs.
    #[arg(long, short = 'n', value_name = "N", allow_negative_numbers = true, value_parser = count::<u64>, help_heading = "Run")]
    pub iterations: Option<u64>,

    /// Run for this long: seconds (-T 60) or a time (30s, 2m) (default 10s unless --iterations
    /// is given; with both, whichever comes first). The run stops early, exit 1, once its last
    /// 1,000 requests (over 5 s or more) all failed.
    #[arg(short = 'T', long, value_name = "TIME", value_parser = seconds_or_duration, help_heading = "Run")]
    pub duration: Option<Duration>,

    #[command(flatten)]
    pub stages: super::StagesArgs,

    /// Closed loop: each VU pauses this long after each request (k6's sleep()).
    #[arg(long, value_name = "TIME", value_parser = humantime::parse_duration, conflicts_with = "rate", help_heading = "Run")]
    pub sleep: Option<Duration>,

    /// Open loop: start this many requests per second in total, on a fixed schedule; latency
    /// is then measured from each request's intended start, and requests that start late or
    /// never are counted.
    #[arg(short = 'R', long, value_name = "REQ_PER_SEC", help_heading = "Run")]
    pub rate: Option<f64>,

    /// Warm-up excluded from the figures: a time (10s) or a number of requests (1000). Either way
    /// it is the first part of the run, taken out of --duration or --iterations.
    #[arg(long, value_name = "TIME|N", help_heading = "Run")]
    pub warmup: Option<String>,

    /// Threads that run the VUs, 1 to 1024 (default: one per CPU). On a machine shared with the
    /// server under test, fewer leave it more: `bench/http-vs-wrk.sh` runs both tools with 1.
    #[arg(long, value_name = "N", help_heading = "Run")]
    pub threads: Option<usize>,

    /// Reuse each VU's connection for its next request (HTTP/1.1 keep-alive; the default).
    #[arg(long, overrides_with = "no_keepalive", help_heading = "Run")]
    pub keepalive: bool,

    /// Open a new connection for every request (and send `Connection: close`).
    #[arg(long, overrides_with = "keepalive", help_heading = "Run")]
    pub no_keepalive: bool,

    /// The database behind the API, sampled once a second while the run runs (its wait events,
    /// checkpoints, WAL; CrateDB's jobs, operations and thread pools): a postgres:// URL
    /// (PostgreSQL, TimescaleDB, Citus, CrateDB's port 5432) or cratedb://host:4200. The report's
    /// Server section says what coincided with each dip in throughput.
    #[arg(long, value_name = "URL", help_heading = "Run")]
    pub observe: Option<String>,

    /// A condition on every response (repeatable); a request that fails one counts as failed:
    /// `status=200` (or `status=2xx`), `body~TEXT` (the body contains TEXT),
    /// `json:$.path=VALUE` (e.g. `json:$.data[0].id="Room:1"`).
    #[arg(long = "check", value_name = "CHECK", help_heading = "Checks")]
    pub checks: Vec<String>,

    #[command(flatten)]
    pub output: OutputArgs,
}
