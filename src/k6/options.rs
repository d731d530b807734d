//! A script's `export const options`: what of k6's options dbload reads
//! (`vus`, `duration`, `iterations`, `stages`, `thresholds`, and one of
//! `scenarios`: a closed-loop executor read as those, an arrival-rate one
//! as the open loop's rate or rate stages), checked once before the run.
//! The command line wins over them, as in k6.

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
    rate: Option<f64>,
    start_rate: Option<f64>,
    time_unit: Option<String>,
    #[serde(rename = "preAllocatedVUs")]
    pre_allocated_vus: Option<u32>,
    #[serde(rename = "maxVUs")]
    max_vus: Option<u32>,
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
    /// VUs (whole) for `ramping-vus`, iterations per `timeUnit` for `ramping-arrival-rate`.
    target: f64,
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
    /// An arrival-rate executor's schedule: the run is an open loop.
    pub arrival: Option<Arrival>,
}

/// What `constant-arrival-rate` and `ramping-arrival-rate` ask for, in
/// iterations per second (`timeUnit` applied): the worker loop's `--rate`
/// or `--rate-stages`.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrival {
    Constant(f64),
    /// From `startRate` (per second), then the stages as `-s` writes them
    /// (`30s:20`, per second).
    Ramping {
        start: f64,
        stages: Vec<String>,
    },
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
        let (mut iterations_each, mut arrival) = (false, None);
        if let Some(scenarios) = raw.scenarios.take() {
            (iterations_each, arrival) = scenario(&mut raw, scenarios, script)?;
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
                if s.target < 0.0 || s.target.fract() != 0.0 {
                    return Err(usage(format!(
                        "{script}: options.stages: target {}: give a whole number of VUs",
                        s.target
                    )));
                }
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
            arrival,
        })
    }
}

/// The one scenario of `scenarios`, read into `raw`'s own `vus`,
/// `duration`, `iterations` and `stages` (which it replaces, as k6 does);
/// whether its iterations are each VU's, and an arrival-rate executor's
/// schedule (its VUs: `maxVUs`, or `preAllocatedVUs` without, all started
/// at once). Several scenarios or an unknown field are refused with what
/// to do.
fn scenario(
    raw: &mut Raw,
    scenarios: serde_json::Map<String, serde_json::Value>,
    script: &str,
) -> Result<(bool, Option<Arrival>)> {
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
            "{at}: {e}; dbload reads executor, vus, duration, iterations, maxDuration, startVUs, stages, rate, \
             startRate, timeUnit, preAllocatedVUs, maxVUs, gracefulStop and gracefulRampDown (one scenario, run by \
             the default function: exec, startTime, env and tags are not read)"
        ))
    })?;
    let misplaced = |field: &str| usage(format!("{at}: {field} is not a field of the {} executor", s.executor));
    if s.max_duration.is_some() && !matches!(s.executor.as_str(), "per-vu-iterations" | "shared-iterations") {
        return Err(misplaced("maxDuration"));
    }
    let arriving = matches!(s.executor.as_str(), "constant-arrival-rate" | "ramping-arrival-rate");
    let arrival_fields = s.rate.is_some()
        || s.start_rate.is_some()
        || s.time_unit.is_some()
        || s.pre_allocated_vus.is_some()
        || s.max_vus.is_some();
    if arrival_fields && !arriving {
        return Err(misplaced("rate, startRate, timeUnit, preAllocatedVUs or maxVUs"));
    }
    if s.executor != "ramping-vus" && s.executor != "ramping-arrival-rate" && !s.stages.is_empty() {
        return Err(misplaced("stages"));
    }
    if s.executor == "ramping-vus" {
        if let Some(t) = s.stages.iter().find(|t| t.target < 0.0 || t.target.fract() != 0.0) {
            return Err(usage(format!("{at}: stages target {}: give a whole number of VUs", t.target)));
        }
    }
    if arriving {
        return arrival(raw, s, &at).map(|a| (false, Some(a)));
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
        "externally-controlled" => {
            return Err(usage(format!(
                "{at}: dbload k6 run does not run the externally-controlled executor (its VUs are set over k6's REST \
                 API); give constant-vus, ramping-vus, per-vu-iterations, shared-iterations, constant-arrival-rate \
                 or ramping-arrival-rate"
            )))
        }
        other => {
            return Err(usage(format!(
                "{at}: executor {other:?} is not one of k6's; give constant-vus, ramping-vus, per-vu-iterations, \
                 shared-iterations, constant-arrival-rate or ramping-arrival-rate"
            )))
        }
    };
    Ok((each, None))
}

/// An arrival-rate scenario `s` (`at` names it): its rate per second, its
/// duration into `raw`, and its VUs, which are all started at once (the
/// worker loop's set of workers is fixed for the run).
fn arrival(raw: &mut Raw, s: RawScenario, at: &str) -> Result<Arrival> {
    let misplaced = |field: &str| usage(format!("{at}: {field} is not a field of the {} executor", s.executor));
    if s.vus.is_some() || s.iterations.is_some() || s.start_vus.is_some() {
        return Err(misplaced("vus, iterations or startVUs"));
    }
    let Some(pre_allocated) = s.pre_allocated_vus else {
        return Err(usage(format!(
            "{at}: {} needs preAllocatedVUs, the VUs that run its iterations, such as preAllocatedVUs: 10",
            s.executor
        )));
    };
    if let Some(max) = s.max_vus.filter(|&max| max < pre_allocated) {
        return Err(usage(format!(
            "{at}: maxVUs {max} is below preAllocatedVUs {pre_allocated}; give at least as many"
        )));
    }
    let unit = match &s.time_unit {
        Some(u) => duration("scenarios.timeUnit", u)?.as_secs_f64(),
        None => 1.0,
    };
    if unit == 0.0 {
        return Err(usage(format!("{at}: timeUnit 0: give a time such as '1s' or '1m'")));
    }
    let per_second = |what: &str, n: f64| {
        if n.is_finite() && n >= 0.0 {
            Ok(n / unit)
        } else {
            Err(usage(format!("{at}: {what} {n}: give a number of iterations per timeUnit, 0 or more")))
        }
    };
    raw.vus = Some(s.max_vus.unwrap_or(pre_allocated));
    if s.executor == "constant-arrival-rate" {
        if s.start_rate.is_some() {
            return Err(misplaced("startRate"));
        }
        let (Some(rate), Some(d)) = (s.rate, s.duration) else {
            return Err(usage(format!(
                "{at}: constant-arrival-rate needs a rate and a duration, such as rate: 50, duration: '30s'"
            )));
        };
        raw.duration = Some(d);
        return Ok(Arrival::Constant(per_second("rate", rate)?));
    }
    if s.rate.is_some() || s.duration.is_some() {
        return Err(misplaced("rate or duration"));
    }
    if s.stages.is_empty() {
        return Err(usage(format!(
            "{at}: ramping-arrival-rate needs stages, such as [{{ duration: '30s', target: 100 }}]"
        )));
    }
    let stages = s
        .stages
        .iter()
        .map(|t| Ok(format!("{}:{}", t.duration.trim(), per_second("stages target", t.target)?)))
        .collect::<Result<_>>()?;
    Ok(Arrival::Ramping { start: per_second("startRate", s.start_rate.unwrap_or(0.0))?, stages })
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
            r#"{"executor":"constant-vus","duration":"1s","rate":10}"#,
            r#"{"executor":"ramping-arrival-rate","preAllocatedVUs":2}"#,
            r#"{"executor":"constant-arrival-rate","rate":10,"duration":"1s","preAllocatedVUs":4,"maxVUs":2}"#,
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
    fn an_arrival_rate_scenario_is_a_rate_per_second_on_max_vus() {
        let one = |executor: &str| Options::parse(Some(&format!(r#"{{"scenarios":{{"s":{executor}}}}}"#)), "s.js");
        let o = one(r#"{"executor":"constant-arrival-rate","rate":120,"timeUnit":"1m","duration":"2s",
                       "preAllocatedVUs":3,"maxVUs":8}"#)
        .unwrap();
        assert_eq!(
            (o.arrival, o.vus, o.duration),
            (Some(Arrival::Constant(2.0)), Some(8), Some(Duration::from_secs(2)))
        );
        let o = one(r#"{"executor":"ramping-arrival-rate","startRate":5,"timeUnit":"500ms","preAllocatedVUs":3,
                       "stages":[{"duration":"1s","target":10},{"duration":"2s","target":0}]}"#)
        .unwrap();
        let stages = vec!["1s:20".to_string(), "2s:0".to_string()];
        assert_eq!((o.arrival, o.vus), (Some(Arrival::Ramping { start: 10.0, stages }), Some(3)));
    }

    #[test]
    fn scenarios_and_bad_durations_are_refused() {
        for json in [r#"{"scenarios":{}}"#, r#"{"duration":"soon"}"#, r#"{"vus":"x"}"#] {
            let err = Options::parse(Some(json), "s.js").unwrap_err();
            assert_eq!(crate::error::exit_code(&err), 2, "{json}: {err}");
        }
    }
}
