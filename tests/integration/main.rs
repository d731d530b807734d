//! Integration tests against a real PostgreSQL that the harness starts with
//! dbload's own throwaway-server code (`throwaway::LocalPostgres`), shared by
//! all tests of this binary and stopped when they end. Each test writes its
//! own table. libtest-mimic gives the usual filtering and summary lines.

mod caps;
mod charts;
mod cli;
mod commit;
mod data;
mod docs;
mod engines;
mod fake_cratedb;
mod hang;
mod html;
mod http;
mod image;
mod ingest;
mod k6;
mod lost;
mod metrics;
mod node_ingest;
mod pacing;
mod parity;
mod peers;
mod pgbench;
mod pipeline;
mod queries;
mod reconnect;
mod repeat;
mod report;
mod results;
mod scale;
mod server;
mod server_cost;
mod stages;
mod stop;
mod support;
mod sweep;
mod transfer;
mod tsbs;
mod wire;

use libtest_mimic::{Arguments, Failed, Trial};

use dbload::throwaway::{LocalOptions, LocalPostgres};
use support::Ctx;

type Test = fn(&Ctx) -> anyhow::Result<()>;

/// How a test runs: beside the others, or after them, one at a time
/// (`Quiet`): a test whose assertion is a timing (schedule lag, a rate
/// held) measures dbload's pacing, and on two cores the other tests' load
/// would be in it. The phase is part of the test's registration, so a
/// renamed test keeps it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Phase {
    Parallel,
    Quiet,
}

/// A test as a module registers it: its name, its function, its phase.
pub type Registered = (&'static str, Test, Phase);

/// A test against a server of another engine (TimescaleDB, Citus,
/// CrateDB), named by the URLs in these environment variables. Without
/// them it shows as ignored, not as passed; `--include-ignored` runs it
/// anyway, and then it fails naming the variable.
type EngineTest = (&'static str, &'static [&'static str], Test);

fn main() -> std::process::ExitCode {
    let args = Arguments::from_args();
    // No test keeps its runs in the real user's data directory: every run,
    // in process or of the binary (which inherits it), finds its default
    // results store under this directory, removed when the tests end. Set
    // before any thread starts; a test that checks a store gives its own
    // (`--results DIR`, or `XDG_DATA_HOME` in `dbload_bin`'s environment).
    let data_home = tempfile::tempdir().expect("a temporary XDG_DATA_HOME");
    std::env::set_var("XDG_DATA_HOME", data_home.path());
    let tests: Vec<Registered> = [
        results::tests(),
        caps::tests(),
        ingest::tests(),
        engines::tests(),
        cli::tests(),
        commit::tests(),
        queries::tests(),
        pgbench::tests(),
        pipeline::tests(),
        parity::tests(),
        stop::tests(),
        http::tests(),
        image::tests(),
        k6::tests(),
        hang::tests(),
        html::tests(),
        data::tests(),
        docs::tests(),
        transfer::tests(),
        reconnect::tests(),
        lost::tests(),
        report::tests(),
        pacing::tests(),
        repeat::tests(),
        server::tests(),
        server_cost::tests(),
        stages::tests(),
        sweep::tests(),
        tsbs::tests(),
        peers::tests(),
        node_ingest::tests(),
        scale::tests(),
        charts::tests(),
        wire::tests(),
        metrics::tests(),
    ]
    .concat();
    let (timed, tests): (Vec<_>, Vec<_>) = tests.into_iter().partition(|(_, _, phase)| *phase == Phase::Quiet);
    // Started on the main thread, which outlives every test (see local.rs).
    let server = LocalPostgres::start(&LocalOptions { max_connections: 200, ..Default::default() })
        .expect("starting the test PostgreSQL");
    let ctx: &'static Ctx = Box::leak(Box::new(Ctx::new(&server)));
    let unset = |var: &&str| std::env::var(var).map_or(true, |url| url.is_empty());
    let engine_tests = [
        engines::engine_tests(),
        transfer::engine_tests(),
        tsbs::engine_tests(),
        server_cost::engine_tests(),
        server::engine_tests(),
        wire::engine_tests(),
    ]
    .concat();
    let mut missing: Vec<&str> =
        engine_tests.iter().flat_map(|(_, vars, _)| vars.iter().copied()).filter(unset).collect();
    missing.sort();
    missing.dedup();
    if !missing.is_empty() {
        eprintln!("engine tests without their server are ignored: set {} to run them", missing.join(", "));
    }
    let trial = |name: &'static str, test: Test| {
        Trial::test(name, move || test(ctx).map_err(|e| Failed::from(format!("{e:?}"))))
    };
    let trials = tests
        .into_iter()
        .map(|(name, test, _)| trial(name, test))
        .chain(
            engine_tests
                .into_iter()
                .map(|(name, vars, test)| trial(name, test).with_ignored_flag(vars.iter().any(&unset))),
        )
        .collect();
    let timed = timed.into_iter().map(|(name, test, _)| trial(name, test)).collect();
    let conclusion = libtest_mimic::run(&args, trials);
    let quiet = libtest_mimic::run(&Arguments { test_threads: Some(1), ..args }, timed);
    drop(server);
    drop(data_home);
    if conclusion.has_failed() {
        conclusion.exit_code()
    } else {
        quiet.exit_code()
    }
}
