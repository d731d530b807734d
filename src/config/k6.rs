//! `K6Config`: `dbload k6 run`'s flags and the script's `options` resolved
//! once, the flags winning as in k6. The script is loaded here, once, on a
//! VU of its own (k6 too runs the init code once for the options): a
//! syntax error, a refused import or a malformed option stops the command
//! before anything runs (exit 2, naming the file, line and column), and a
//! stop signal during init code that never returns ends it (exit 130).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::fail_if::Contract;
use super::load::Load;
use super::OutputConfig;
use crate::cli::{K6RunArgs, StagesArgs};
use crate::error::{interrupted, usage};
use crate::k6::options::{Arrival, Options};
use crate::k6::script::Script;
use crate::k6::shared::SharedArrays;
use crate::k6::thresholds::Threshold;
use crate::k6::vu::{Loaded, Vu, VuSpec};
use crate::k6::Handout;
use crate::op::Warmup;
use crate::stats::k6::Metrics;

/// How often the wait for the init code looks for a stop signal.
const INIT_POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Clone)]
pub struct K6Config {
    pub script: Script,
    /// `__ENV`: the process's environment, then `-e`.
    pub env: Vec<(String, String)>,
    pub vus: u32,
    /// How the iterations are handed to the VUs.
    pub handout: Handout,
    /// The iterations in all (none: the duration or stages end the run).
    pub iterations: Option<u64>,
    /// Duration, and stages (`ramping-vus`) or a rate (`constant-arrival-rate`)
    /// or rate stages (`ramping-arrival-rate`): the iterations are the
    /// worker loop's operations, the VUs its workers.
    pub load: Load,
    /// Judged at the end (none with `--no-thresholds`).
    pub thresholds: Vec<Threshold>,
    pub summary_export: Option<PathBuf>,
    /// The script exports `handleSummary(data)`: called with k6's summary
    /// data once the run ends (`k6::summary`).
    pub handle_summary: bool,
    pub insecure: bool,
    pub threads: Option<usize>,
    pub output: OutputConfig,
    /// The `SharedArray`s the script's init code made while its options
    /// were read: the run's VUs find them made, so each is made once.
    pub shared: Arc<SharedArrays>,
}

impl K6Config {
    /// `env`: the process's environment as k6 reads it (every variable);
    /// `signalled`: whether a stop signal came (the script's init code is
    /// interrupted on it).
    pub fn resolve(
        a: K6RunArgs,
        env: Vec<(String, String)>,
        stdin: &mut dyn std::io::Read,
        signalled: &dyn Fn() -> bool,
    ) -> Result<K6Config> {
        let script = Script::read(&a.script, stdin)?;
        let mut env = env;
        for pair in &a.env {
            let (k, v) = pair
                .split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| usage(format!("--env {pair:?}: give NAME=VALUE")))?;
            env.retain(|(name, _)| name != k);
            env.push((k.to_owned(), v.to_owned()));
        }
        let output = OutputConfig::resolve(a.output, Contract::K6)?;
        if let Some(path) = &a.summary_export {
            super::check_writable("--summary-export", path)?;
        }
        let shared = Arc::new(SharedArrays::default());
        let loaded = load_options(&script, &env, &shared, signalled)?;
        let options = Options::parse(loaded.options.as_deref(), &script.name)?;
        for t in &options.thresholds {
            let kind = crate::stats::k6::BUILTIN.iter().find(|b| b.0 == t.metric).map(|b| b.1);
            if let Some(kind) = kind {
                t.fits(kind)?;
            }
        }

        // An arrival-rate scenario is an open loop, unless flags give the
        // run's time (-d, -i, -s), which replace the options as a whole.
        let flags_time = a.duration.is_some() || a.iterations.is_some();
        let arrival = options.arrival.clone().filter(|_| !flags_time && a.stages.is_empty());
        let stage_text = if a.stages.is_empty() { options.stages.clone() } else { a.stages.clone() };
        let stages_args = StagesArgs {
            stages: (!stage_text.is_empty() && arrival.is_none() && (!a.stages.is_empty() || !flags_time))
                .then(|| stage_text.join(",")),
            rate_stages: match &arrival {
                Some(Arrival::Ramping { stages, .. }) => Some(stages.join(",")),
                _ => None,
            },
        };
        // The run's rate is the whole run's: with --instance this one takes its share.
        let rate = match &arrival {
            Some(Arrival::Constant(r)) => super::check_rate(Some(*r), "iterations")
                .map_err(|e| usage(format!("{}: options.scenarios: {e}", script.name)))?
                .map(|r| output.instance.as_ref().map_or(r, |i| i.rate(r))),
            _ => None,
        };
        let scheduled = stages_args.stages.is_some() || stages_args.rate_stages.is_some();
        let duration = a.duration.or(if scheduled { None } else { options.duration });
        let vus_given = a.vus.or(options.vus);
        let mut stages = super::resolve_stages(&stages_args, duration, rate, ("--vus", vus_given))?;
        if let (Some(s), Some(Arrival::Ramping { start, .. })) = (stages.as_mut(), &arrival) {
            s.start = *start;
        }
        let vus = match (super::stage_workers(stages.as_ref()), vus_given) {
            (Some(n), _) => n,
            (None, Some(n)) => super::connections("--vus", n, "virtual user")?,
            (None, None) => 1,
        };
        let given = stages.as_ref().map(crate::op::Stages::duration).or(super::check_duration(duration)?);
        let iterations = a.iterations.or(if a.duration.is_some() { None } else { options.iterations });
        let (iterations, duration) = match (iterations, given) {
            (Some(0), _) => return Err(usage("--iterations 0: give at least 1 iteration")),
            // k6's default: one iteration of one VU.
            (None, None) => (Some(1), None),
            (i, d) => (i, d),
        };
        // -i is k6's shared-iterations, as its scenario is; with --instance
        // the count is the whole run's: this instance takes its share.
        let handout = match (iterations, &output.instance) {
            (None, _) => Handout::Endless,
            (Some(n), _) if options.iterations_each && a.iterations.is_none() => Handout::PerVu(n),
            (Some(n), Some(i)) => Handout::Shared(i.shares(n, vus).iter().sum()),
            (Some(n), None) => Handout::Shared(n),
        };
        let iterations = handout.total(vus);
        let thresholds = if a.no_thresholds { Vec::new() } else { options.thresholds };
        Ok(K6Config {
            script,
            env,
            vus,
            handout,
            iterations,
            load: Load { duration, rate, stages, warmup: Warmup::None, ..Load::default() },
            thresholds,
            summary_export: a.summary_export,
            handle_summary: loaded.handle_summary,
            insecure: a.insecure_skip_tls_verify,
            threads: super::worker_threads(a.threads)?,
            output,
            shared,
        })
    }

    /// The submetrics the thresholds name (`http_req_duration{group:::x}`).
    pub fn submetrics(&self) -> Vec<(String, Vec<(String, String)>)> {
        let mut subs: Vec<(String, Vec<(String, String)>)> = Vec::new();
        for t in self.thresholds.iter().filter(|t| !t.tags.is_empty()) {
            let sub = (t.metric.clone(), t.tags.clone());
            if !subs.contains(&sub) {
                subs.push(sub);
            }
        }
        subs
    }
}

/// Runs the script's init code on a VU of its own for its options, on a
/// thread of its own (its coroutine stays there) while this one watches
/// for a stop signal (noted from the command's start), which interrupts it.
fn load_options(
    script: &Script,
    env: &[(String, String)],
    shared: &Arc<SharedArrays>,
    signalled: &dyn Fn() -> bool,
) -> Result<Loaded> {
    let stop = CancellationToken::new();
    let spec = VuSpec {
        id: 0,
        script: script.clone(),
        env: env.to_vec(),
        stop: stop.clone(),
        metrics: Arc::new(Mutex::new(Metrics::new(&[]))),
        data: None,
        text_summary: None,
        shared: shared.clone(),
    };
    let loading = std::thread::Builder::new()
        .name("k6 options".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
            rt.block_on(async { Vu::start(spec).await.map(|(_, loaded)| loaded) })
        })
        .map_err(|e| anyhow::anyhow!("starting the thread that loads {}: {e}", script.name))?;
    loop {
        if loading.is_finished() {
            return loading
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("the VU loading {} ended without a word", script.name)));
        }
        if signalled() {
            stop.cancel();
            return Err(interrupted(format!(
                "interrupted while running the init code of {}: nothing was run",
                script.name
            )));
        }
        std::thread::sleep(INIT_POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command, K6Command};
    use crate::op::Ramps;
    use clap::Parser;

    fn resolve(args: &str, script: &str) -> Result<K6Config> {
        let cli = Cli::try_parse_from(format!("dbload k6 run {args} -").split_whitespace()).unwrap();
        let Command::K6(crate::cli::K6Args { command: K6Command::Run(a) }) = cli.command else { unreachable!() };
        K6Config::resolve(a, Vec::new(), &mut script.as_bytes(), &|| false)
    }

    const OPTIONS: &str = "export const options = { vus: 4, duration: '1m', iterations: 40 };\n\
                           export default function () {}\n";

    #[test]
    fn flags_win_over_the_scripts_options() {
        let c = resolve("", OPTIONS).unwrap();
        assert_eq!((c.vus, c.iterations, c.load.duration), (4, Some(40), Some(Duration::from_secs(60))));
        // -d replaces options.iterations, as k6's flags replace its options.
        let c = resolve("-u 2 -d 5s", OPTIONS).unwrap();
        assert_eq!((c.vus, c.iterations, c.load.duration), (2, None, Some(Duration::from_secs(5))));
        // k6's default: one iteration of one VU.
        let c = resolve("", "export default function () {}").unwrap();
        assert_eq!((c.vus, c.handout.clone()), (1, Handout::Shared(1)));
        // Stages start from options.vus (k6's startVUs), so 4 VUs are started.
        let c = resolve("-s 2s:3 -s 1s:0", OPTIONS).unwrap();
        assert_eq!((c.vus, c.load.duration), (4, Some(Duration::from_secs(3))));
        let c = resolve("-s 2s:3 -s 1s:0", "export default function () {}").unwrap();
        assert_eq!(c.vus, 3);
    }

    #[test]
    fn an_arrival_rate_scenario_is_the_open_loop_unless_flags_give_the_time() {
        let constant = "export const options = { scenarios: { s: { executor: 'constant-arrival-rate', rate: 50, \
                        duration: '2s', preAllocatedVUs: 4, maxVUs: 6 } } };\nexport default function () {}\n";
        let c = resolve("", constant).unwrap();
        assert_eq!((c.vus, c.load.rate, c.load.duration), (6, Some(50.0), Some(Duration::from_secs(2))));
        assert_eq!((c.handout.clone(), c.iterations), (Handout::Endless, None));
        // -d replaces the scenario, as k6's flags replace its options: a closed loop.
        let c = resolve("-d 1s", constant).unwrap();
        assert_eq!((c.vus, c.load.rate, c.load.duration), (6, None, Some(Duration::from_secs(1))));
        let ramping = "export const options = { scenarios: { s: { executor: 'ramping-arrival-rate', startRate: 10, \
                       preAllocatedVUs: 3, stages: [{ duration: '2s', target: 30 }] } } };\n\
                       export default function () {}\n";
        let c = resolve("", ramping).unwrap();
        let stages = c.load.stages.clone().unwrap();
        assert_eq!(
            (c.vus, stages.ramps, stages.start, c.load.duration),
            (3, Ramps::Rate, 10.0, Some(Duration::from_secs(2)))
        );
    }

    #[test]
    fn an_instance_runs_its_share_of_the_iterations() {
        let c = resolve("-u 2 -i 10 --instance 1/2 --run-id r --start-at 2100-01-01T00:00:00Z", OPTIONS).unwrap();
        // Instance 0 takes 6 of the 10 iterations (3 per VU), instance 1 the other 4.
        assert_eq!((c.handout.clone(), c.iterations), (Handout::Shared(4), Some(4)));
    }

    #[test]
    fn bad_env_and_options_exit_2() {
        for (args, script) in [("-e NOPE", OPTIONS), ("", "export const options = { scenarios: {} };")] {
            let err = resolve(args, script).unwrap_err();
            assert_eq!(crate::error::exit_code(&err), 2, "{args}: {err}");
        }
    }
}
