//! `InitConfig`: `dbload init`'s flags checked once.

use anyhow::Result;

use super::{resolve_target, ProgressDisplay, TargetChoice};
use crate::cli::InitArgs;
use crate::dialect::pgbench::MAX_SCALE;
use crate::error::usage;

/// Most connections `init` opens by default.
const MAX_DEFAULT_WORKERS: u32 = 8;

#[derive(Debug)]
pub struct InitConfig {
    pub target: TargetChoice,
    pub scale: i64,
    pub workers: u32,
    /// `--quiet`: none; else the bar (or a line now and then in a log).
    pub progress: ProgressDisplay,
}

impl InitConfig {
    pub fn resolve(a: InitArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<InitConfig> {
        if !(1..=MAX_SCALE).contains(&a.scale) {
            return Err(usage(format!(
                "--scale {}: give a scale factor from 1 to {MAX_SCALE} (pgbench makes account ids bigint beyond, \
                 which dbload's init does not)",
                a.scale
            )));
        }
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let workers = match a.workers {
            Some(n) => super::connections("--workers", n, "connection")?,
            None => cpus.min(MAX_DEFAULT_WORKERS),
        };
        let progress = if a.quiet { ProgressDisplay::Hidden } else { ProgressDisplay::Auto };
        Ok(InitConfig { target: resolve_target(&a.target, workers + 1, env)?, scale: a.scale, workers, progress })
    }
}
