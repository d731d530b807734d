//! A script's `export const options`: what of k6's options dbload reads
//! (`vus`, `duration`, `iterations`, `stages`, `thresholds`), checked once
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
    scenarios: Option<serde_json::Value>,
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
        if raw.scenarios.is_some() {
            return Err(usage(format!(
                "{script}: options.scenarios: dbload k6 run does not run scenarios yet; give vus with duration or \
                 iterations, or stages (in options or as -u, -d, -i, -s)"
            )));
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
            thresholds,
        })
    }
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
    fn scenarios_and_bad_durations_are_refused() {
        for json in [r#"{"scenarios":{}}"#, r#"{"duration":"soon"}"#, r#"{"vus":"x"}"#] {
            let err = Options::parse(Some(json), "s.js").unwrap_err();
            assert_eq!(crate::error::exit_code(&err), 2, "{json}: {err}");
        }
    }
}
