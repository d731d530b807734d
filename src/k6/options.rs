//! A script's `export const options`: what of k6's options dbload reads
//! (`vus`, `duration`, `iterations`, `stages`, `thresholds`, and one of
//! `scenarios` of a closed-loop executor, read as those), checked once
//! before the run. The command line wins over them, as in k6.

use std::time::Duration;

use anyhow::Result;
use serde::Deserialize;

use super::thresholds::Threshold;
use crate::error::usage;

/// The options as a script writes them.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Raw {
    vus: Option<u32>,
    duration: Option<String>,
    iterations: Option<u64>,
    #[serde(default)]
    stages: Vec<RawStage>,
    #[serde(default)]
    thresholds: serde_json::Map<String, serde_json::Value>,
    scenarios: Option<serde_json::Map<String, serde_json::Value>>,
}

/// One of `options.scenarios`, as a script writes it: the fields of the
/// executors dbload runs (any other field is refused, not ignored).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawScenario {
    executor: String,
    vus: Option<u32>,
    duration: Option<String>,
    iterations: Option<u64>,
    max_duration: Option<String>,
    #[serde(rename = "startVUs")]
    start_vus: Option<u32>,
    #[serde(default)]
    stages: Vec<RawStage>,
    /// Accepted and not applied: iterations in flight at the end get the
    /// worker loop's own grace (5 s).
    #[serde(rename = "gracefulStop")]
    _graceful_stop: Option<String>,
    #[serde(rename = "gracefulRampDown")]
    _graceful_ramp_down: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawStage {
    duration: String,
    target: u32,
}

/// The options dbload runs with.
#[derive(Debug, Default, Clone)]
pub struct Options {
    pub vus: Option<u32>,
    pub duration: Option<Duration>,
    pub iterations: Option<u64>,
    /// As `-s` writes them: `30s:10`.
    pub stages: Vec<String>,
    /// `iterations` is each VU's (`per-vu-iterations`), not the run's.
    pub iterations_each: bool,
    pub thresholds: Vec<Threshold>,
}

/// A k6 duration: `30s`, `1m30s`, `500ms`, or a number of ms.
fn duration(what: &str, s: &str) -> Result<Duration> {
    humantime::parse_duration(s.trim()).map_err(|e| {
        usage(format!("options.{what} {s:?}: {e}; give a time as k6 writes it, such as \"30s\" or \"1m30s\""))
    })
}

impl Options {
    /// The options from their JSON (the script's `options`, stringified by
    /// its VU); `script` names it in messages.
    pub fn parse(json: Option<&str>, script: &str) -> Result<Options> {
        let Some(json) = json else { return Ok(Options::default()) };
        let raw: Raw = serde_json::from_str(json).map_err(|e| {
            usage(format!("{script}: export const options: {e}; see k6's options (vus, duration, ...)"))
        })?;
        let mut raw = raw;
        let mut iterations_each = false;
        if let Some(scenarios) = raw.scenarios.take() {
            iterations_each = scenario(&mut raw, scenarios, script)?;
        }
        let mut thresholds = Vec::new();
        for (key, value) in &raw.thresholds {
            let list = match value {
                serde_json::Value::Array(a) => a.clone(),
                one => vec![one.clone()],
            };
            for item in list {
                let (expression, abort) = match &item {
                    serde_json::Value::String(s) => (s.clone(), false),
                    serde_json::Value::Object(o) => (
                        o.get("threshold").and_then(|t| t.as_str()).map(str::to_owned).ok_or_else(|| {
                            usage(format!("options.thresholds {key:?}: an object needs `threshold: 'p(95)<500'`"))
                        })?,
                        o.get("abortOnFail").and_then(|a| a.as_bool()).unwrap_or(false),
                    ),
                    other => {
                        return Err(usage(format!(
                            "options.thresholds {key:?}: {other}: give a string such as 'p(95)<500'"
                        )))
                    }
                };
                thresholds.push(Threshold::parse(key, &expression, abort)?);
            }
        }
        let stages = raw
            .stages
            .iter()
            .map(|s| {
                duration("stages[].duration", &s.duration)?;
                Ok(format!("{}:{}", s.duration.trim(), s.target))
            })
            .collect::<Result<_>>()?;
        Ok(Options {
            vus: raw.vus,
            duration: raw.duration.as_deref().map(|d| duration("duration", d)).transpose()?,
            iterations: raw.iterations,
            stages,
            iterations_each,
            thresholds,
        })
    }
}

/// The one scenario of `scenarios`, read into `raw`'s own `vus`,
/// `duration`, `iterations` and `stages` (which it replaces, as k6 does);
/// whether its iterations are each VU's. Several scenarios, an
/// arrival-rate executor or an unknown field are refused with what to do.
fn scenario(raw: &mut Raw, scenarios: serde_json::Map<String, serde_json::Value>, script: &str) -> Result<bool> {
    let mut all = scenarios.into_iter();
    let (Some((name, value)), None) = (all.next(), all.next()) else {
        return Err(usage(format!(
            "{script}: options.scenarios: dbload k6 run runs one scenario per run; give one (run each of the others \
             in a run of its own)"
        )));
    };
    let at = format!("{script}: options.scenarios.{name}");
    let s: RawScenario = serde_json::from_value(value).map_err(|e| {
        usage(format!(
            "{at}: {e}; dbload reads executor, vus, duration, iterations, maxDuration, startVUs, stages, gracefulStop \
             and gracefulRampDown"
        ))
    })?;
    let misplaced = |field: &str| usage(format!("{at}: {field} is not a field of the {} executor", s.executor));
    if s.max_duration.is_some() && !matches!(s.executor.as_str(), "per-vu-iterations" | "shared-iterations") {
        return Err(misplaced("maxDuration"));
    }
    let each = match s.executor.as_str() {
        "constant-vus" => {
            if s.iterations.is_some() || s.start_vus.is_some() || !s.stages.is_empty() {
                return Err(misplaced("iterations, startVUs or stages"));
            }
            if s.duration.is_none() {
                return Err(usage(format!("{at}: constant-vus needs a duration, such as duration: '30s'")));
            }
            (raw.vus, raw.duration) = (s.vus.or(Some(1)), s.duration);
            false
        }
        "per-vu-iterations" | "shared-iterations" => {
            if s.duration.is_some() || s.start_vus.is_some() || !s.stages.is_empty() {
                return Err(misplaced("duration, startVUs or stages"));
            }
            (raw.vus, raw.iterations, raw.duration) = (s.vus.or(Some(1)), s.iterations.or(Some(1)), s.max_duration);
            s.executor == "per-vu-iterations"
        }
        "ramping-vus" => {
            if s.vus.is_some() || s.duration.is_some() || s.iterations.is_some() {
                return Err(misplaced("vus, duration or iterations"));
            }
            if s.stages.is_empty() {
                return Err(usage(format!(
                    "{at}: ramping-vus needs stages, such as [{{ duration: '30s', target: 10 }}]"
                )));
            }
            (raw.vus, raw.stages) = (s.start_vus.or(Some(1)), s.stages);
            false
        }
        "constant-arrival-rate" | "ramping-arrival-rate" | "externally-controlled" => {
            return Err(usage(format!(
                "{at}: dbload k6 run does not run the {} executor yet; give constant-vus, ramping-vus, \
                 per-vu-iterations or shared-iterations (or run the request at a rate with dbload http --rate)",
                s.executor
            )))
        }
        other => {
            return Err(usage(format!(
                "{at}: executor {other:?} is not one of k6's; give constant-vus, ramping-vus, per-vu-iterations or \
                 shared-iterations"
            )))
        }
    };
    Ok(each)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k6_options_are_read() {
        let json = r#"{"vus":30,"duration":"1m30s","stages":[{"duration":"10s","target":5}],
            "thresholds":{"http_req_duration{group:::notify}":["p(95)<500"],"checks":[{"threshold":"rate>0.99","abortOnFail":true}]}}"#;
        let o = Options::parse(Some(json), "s.js").unwrap();
        assert_eq!((o.vus, o.duration), (Some(30), Some(Duration::from_secs(90))));
        assert_eq!(o.stages, vec!["10s:5".to_string()]);
        assert_eq!(o.thresholds.len(), 2);
        assert!(o.thresholds[0].abort_on_fail);
        assert_eq!(o.thresholds[1].tags, vec![("group".to_string(), "::notify".to_string())]);
    }

    #[test]
    fn a_scenario_is_read_as_the_options_it_stands_for() {
        let one = |executor: &str| format!(r#"{{"vus":9,"scenarios":{{"s":{executor}}}}}"#);
        let o = Options::parse(Some(&one(r#"{"executor":"per-vu-iterations","vus":2,"iterations":3}"#)), "s.js");
        let o = o.unwrap();
        assert_eq!((o.vus, o.iterations, o.iterations_each, o.duration), (Some(2), Some(3), true, None));
        let o =
            Options::parse(Some(&one(r#"{"executor":"ramping-vus","stages":[{"duration":"1s","target":4}]}"#)), "s");
        let o = o.unwrap();
        assert_eq!((o.vus, o.stages, o.iterations_each), (Some(1), vec!["1s:4".to_string()], false));
        for refused in [
            r#"{"executor":"constant-arrival-rate","rate":10}"#,
            r#"{"executor":"constant-vus","vus":2}"#,
            r#"{"executor":"shared-iterations","exec":"other"}"#,
            r#"{"executor":"constant-vus","duration":"1s","iterations":2}"#,
        ] {
            let err = Options::parse(Some(&one(refused)), "s.js").unwrap_err();
            assert_eq!(crate::error::exit_code(&err), 2, "{refused}: {err}");
            assert!(err.to_string().contains("options.scenarios.s"), "{refused}: {err}");
        }
    }

    #[test]
    fn scenarios_and_bad_durations_are_refused() {
        for json in [r#"{"scenarios":{}}"#, r#"{"duration":"soon"}"#, r#"{"vus":"x"}"#] {
            let err = Options::parse(Some(json), "s.js").unwrap_err();
            assert_eq!(crate::error::exit_code(&err), 2, "{json}: {err}");
        }
    }
}
