//! Scale-out flags (`--instance`, `--run-id`, `--start-timeout`,
//! `--start-at`) and `dbload report`, which merges a distributed run's
//! instances into one report.

use std::path::PathBuf;

use clap::Args;

use super::{OutputFormat, StoreArgs};

pub(super) const REPORT_EXAMPLES: &str = "\
Examples:
  # Four instances of one run (each its own part), then their merged report
  for i in 0 1 2 3; do
    dbload ingest --url $URL --instance $i/4 --run-id r1 \\
        --results-url $RESULTS --rows 4000000 &
  done; wait
  dbload report --run-id r1 --results-url $RESULTS --html r1.html

  # For scripts: the merged report as JSON (exit 1 if an instance is missing
  # or failed)
  dbload report --run-id r1 --results-url $RESULTS --output json";

/// One part of a distributed run: every measuring command's flags.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Scale-out (see docs/scale-out.md)")]
pub struct ScaleArgs {
    /// Run part I of N (0-based) of one distributed run: N instances started with the same
    /// options do together what one would (ingest: disjoint devices and seeds, --rows and --rate
    /// split; timeit, workload, http: --rate and the counts split). --workers, --concurrency
    /// and --vus stay per instance. Needs --run-id, and --results-url or --start-at.
    #[arg(long, value_name = "I/N", requires = "run_id")]
    pub instance: Option<String>,

    /// The id the instances of one distributed run share (each run keeps its own run_id);
    /// `dbload report --run-id ID` merges them.
    #[arg(long, value_name = "ID", requires = "instance")]
    pub run_id: Option<String>,

    /// With --instance and --results-url: how long to wait for the other instances to register
    /// (and for instance 0's table) before giving up, exit 3.
    #[arg(long, value_name = "TIME", value_parser = humantime::parse_duration, default_value = "60s", requires = "instance")]
    pub start_timeout: std::time::Duration,

    /// With --instance: start measuring at this time (RFC 3339, this machine's clock) rather than
    /// when every instance has registered in --results-url; for stores that cannot coordinate.
    #[arg(long, value_name = "TIME", requires = "instance")]
    pub start_at: Option<String>,
}

/// `dbload report --run-id ID`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The --run-id the instances were started with.
    #[arg(long, value_name = "ID")]
    pub run_id: String,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Format of the merged report on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// Also write the merged report as an HTML page with charts to this file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    /// docs/scale-out/job.yaml runs a command line that dbload accepts,
    /// once Kubernetes has put each pod's index (and the URLs) in it.
    #[test]
    fn the_kubernetes_job_runs_a_command_dbload_accepts() {
        let job: serde_json::Value = serde_saphyr::from_str(include_str!("../../docs/scale-out/job.yaml")).unwrap();
        assert_eq!(job["spec"]["completionMode"], "Indexed");
        let completions = job["spec"]["completions"].as_u64().unwrap();
        let container = &job["spec"]["template"]["spec"]["containers"][0];
        let argv: Vec<&str> = container["command"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        for index in [0, completions - 1] {
            let argv: Vec<String> = argv
                .iter()
                .map(|a| {
                    a.replace("$(JOB_COMPLETION_INDEX)", &index.to_string())
                        .replace("$(TARGET_URL)", "postgres://bench@db:5432/bench")
                        .replace("$(RESULTS_URL)", "postgres://bench@results-db:5432/bench")
                })
                .collect();
            assert!(argv.iter().all(|a| !a.contains("$(")), "an unexpanded variable: {argv:?}");
            let cli = super::super::Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            let super::super::Command::Ingest(a) = cli.command else { panic!("not ingest: {argv:?}") };
            // Resolved as dbload resolves it before running (which connects to nothing).
            let cfg = crate::config::IngestConfig::resolve(a, &|_| None).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            let instance = cfg.output.instance.expect("--instance");
            assert_eq!((instance.index as u64, instance.count as u64), (index, completions));
            assert!(matches!(instance.start, crate::config::scale::StartRule::Register { .. }));
        }
    }
}
