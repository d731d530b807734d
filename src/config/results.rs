//! Where a run is kept (`--results DIR`, `--no-results`, `--results-url`)
//! and which store `dbload results` reads, resolved before anything runs:
//! a `--results-url` that is not a URL costs no run.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;

use crate::cli::{ResultsArgs, StoreArgs};
use crate::driver::PgTarget;

/// Where a finished run goes.
#[derive(Debug, Clone)]
pub struct ResultsConfig {
    /// The results directory, or why there is none (`--no-results`, or no
    /// data directory to default to).
    pub dir: Result<PathBuf, String>,
    /// `--results-url`: the database that also gets the run.
    pub url: Option<Box<PgTarget>>,
    /// `--tag KEY=VALUE`: what the user names the run by, kept in its
    /// `run.tags`.
    pub tags: BTreeMap<String, String>,
}

impl ResultsConfig {
    /// `env`: the process environment (`XDG_DATA_HOME`, `HOME`, and the
    /// `PG*` variables libpq would read for `--results-url`).
    pub fn resolve(a: ResultsArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<ResultsConfig> {
        let url = a.results_url.map(|u| PgTarget::from_url(&u, "--results-url", env).map(Box::new)).transpose()?;
        let dir = match (a.no_results, a.results) {
            (true, _) => Err("--no-results".to_string()),
            (false, Some(dir)) => Ok(dir),
            (false, None) => {
                default_dir(env).ok_or_else(|| "neither XDG_DATA_HOME nor HOME is set; give --results DIR".into())
            }
        };
        Ok(ResultsConfig { dir, url, tags: tags(&a.tag)? })
    }
}

/// `--tag KEY=VALUE`, each: a key that is not empty, given once; the value
/// may be empty and may hold `=` (`--tag point=batch-size=500`).
pub fn tags(given: &[String]) -> Result<BTreeMap<String, String>> {
    let mut tags = BTreeMap::new();
    for t in given {
        let Some((key, value)) = t.split_once('=').filter(|(k, _)| !k.trim().is_empty()) else {
            return Err(crate::error::usage(format!("--tag {t}: write KEY=VALUE, e.g. --tag setup=replica")));
        };
        if tags.insert(key.trim().to_string(), value.to_string()).is_some() {
            return Err(crate::error::usage(format!(
                "--tag {t}: the key `{}` is tagged twice; give it once",
                key.trim()
            )));
        }
    }
    Ok(tags)
}

/// The store `dbload results list|show` reads.
#[derive(Debug, Clone)]
pub enum Store {
    Dir(PathBuf),
    Db(Box<PgTarget>),
}

impl Store {
    pub fn resolve(a: StoreArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Store> {
        if let Some(url) = a.results_url {
            return Ok(Store::Db(Box::new(PgTarget::from_url(&url, "--results-url", env)?)));
        }
        match a.results.or_else(|| default_dir(env)) {
            Some(dir) => Ok(Store::Dir(dir)),
            None => Err(crate::error::usage(
                "no results directory: neither XDG_DATA_HOME nor HOME is set; give --results DIR or --results-url URL",
            )),
        }
    }
}

/// `$XDG_DATA_HOME/dbload/results`, or `$HOME/.local/share/dbload/results`
/// (the XDG base directory rule: a relative `XDG_DATA_HOME` is ignored).
pub fn default_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let xdg = env("XDG_DATA_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    let data = xdg.or_else(|| env("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(data.join("dbload").join("results"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_directory_follows_the_xdg_rule() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let dir = |vars| default_dir(&env(vars));
        assert_eq!(dir(&[("XDG_DATA_HOME", "/d"), ("HOME", "/h")]), Some("/d/dbload/results".into()));
        assert_eq!(dir(&[("XDG_DATA_HOME", "rel"), ("HOME", "/h")]), Some("/h/.local/share/dbload/results".into()));
        assert_eq!(dir(&[("HOME", "/h")]), Some("/h/.local/share/dbload/results".into()));
        assert_eq!(dir(&[]), None);
    }

    #[test]
    fn tags_are_key_value_pairs_given_once() {
        let given = |t: &[&str]| tags(&t.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let t = given(&["setup=replica", "point=batch-size=500,workers=2", "note="]).unwrap();
        assert_eq!(t["point"], "batch-size=500,workers=2");
        assert_eq!(t["note"], "");
        for (bad, named) in [(&["replica"][..], "--tag replica"), (&["=x"], "--tag =x"), (&["a=1", "a=2"], "`a`")] {
            let e = given(bad).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), crate::error::exit::USAGE);
            assert!(e.to_string().contains(named), "{e}");
        }
    }
}
