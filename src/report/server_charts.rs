//! The Server section on the HTML page's charts: what the server did
//! (checkpoints, a vacuum, lock waits, temp files, TimescaleDB's chunks
//! created and background jobs, work a CrateDB thread pool rejected) as
//! markers on the
//! throughput and latency charts, and the run's sessions' wait events as
//! a stacked band under the throughput chart, second by second, so that a
//! dip and what coincided with it are seen together. Read from the
//! report's JSON `server` object, as the other charts read theirs.

use anyhow::Result;
use plotters::prelude::*;
use serde_json::Value as Json;

use super::plot::{frame, inline, mesh, tick, Chart, LegendKey, PALETTE, SECONDS, SIZE};

/// Each kind of event, its legend and its colour.
const KINDS: [(&str, &str, RGBColor); 9] = [
    ("checkpoint_requested", "requested checkpoint", RGBColor(190, 18, 60)),
    ("checkpoint_timed", "timed checkpoint", RGBColor(79, 70, 229)),
    ("vacuum", "vacuum of the table", RGBColor(5, 150, 105)),
    ("lock_waits", "lock waits on the table", RGBColor(202, 138, 4)),
    ("temp_files", "temp files", RGBColor(107, 33, 168)),
    ("chunks_created", "chunks created", RGBColor(14, 116, 144)),
    ("jobs_started", "background job started", RGBColor(234, 88, 12)),
    ("jobs_running", "background job running", RGBColor(120, 113, 108)),
    ("rejected", "work a thread pool rejected", RGBColor(146, 64, 14)),
];

/// The band's wait events: the most seen, the rest summed as one.
const BANDS: usize = 6;

/// The server's events as markers (second, colour), and their legend keys.
pub(super) fn event_marks(part: &Json) -> (Vec<(f64, RGBColor)>, Vec<LegendKey>) {
    let events = part["server"]["events"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut marks = Vec::new();
    let mut keys: Vec<LegendKey> = Vec::new();
    for e in events {
        let Some((second, (_, label, color))) =
            e["second"].as_f64().zip(KINDS.iter().find(|(kind, ..)| e["kind"] == *kind))
        else {
            continue;
        };
        marks.push((second, *color));
        if !keys.iter().any(|k| k.label == *label) {
            keys.push(LegendKey::new(label, *color));
        }
    }
    (marks, keys)
}

/// The stacked band of the run's sessions' wait events per second, on
/// the line charts' time axis, which ends at `x_max` (their last whole
/// second, or the span a `dbload run` page shares); none when the server
/// was not sampled. Each second's stack is centred on its second, under
/// the throughput's point for that second.
pub(super) fn wait_band(part: &Json, x_max: f64) -> Result<Option<Chart>> {
    let server = &part["server"];
    let (Some(waits), Some(sampled)) = (server["waits"].as_array(), server["seconds"].as_array()) else {
        return Ok(None);
    };
    if waits.is_empty() || x_max < 1.0 {
        return Ok(None);
    }
    let named: Vec<&str> = waits.iter().filter_map(|w| w["wait"].as_str()).take(BANDS - 1).collect();
    let rest = waits.len() > named.len();
    let layers = named.len() + usize::from(rest);
    // Each second's sessions by layer: the named waits, then the rest.
    let stacks: Vec<(f64, Vec<f64>)> = sampled
        .iter()
        .filter_map(|entry| {
            let second = entry["second"].as_f64().filter(|s| *s <= x_max)?;
            let own = entry["own_waits"].as_object()?;
            let mut layer = vec![0.0; layers];
            for (wait, n) in own {
                let i = named.iter().position(|w| w == wait).unwrap_or(layers - 1);
                layer[i] += n.as_f64().unwrap_or(0.0);
            }
            Some((second, layer))
        })
        .collect();
    let y_max = stacks.iter().map(|(_, l)| l.iter().sum::<f64>()).fold(1.0, f64::max) * 1.1;
    let color = |i: usize| PALETTE[i % PALETTE.len()];
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = frame(&root).build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
        mesh(&mut chart)
            .x_labels((x_max as usize + 1).min(12))
            .x_label_formatter(&SECONDS.label)
            .y_label_formatter(&tick)
            .x_desc(SECONDS.desc)
            .y_desc("sessions")
            .draw()?;
        for (second, layer) in &stacks {
            let mut bottom = 0.0;
            for (i, n) in layer.iter().enumerate().filter(|(_, n)| **n > 0.0) {
                let top = bottom + n;
                let (left, right) = ((second - 0.5).max(0.0), (second + 0.5).min(x_max));
                chart.draw_series([Rectangle::new([(left, bottom), (right, top)], color(i).filled())])?;
                bottom = top;
            }
        }
        root.present()?;
    }
    let mut legend: Vec<LegendKey> = named.iter().enumerate().map(|(i, w)| LegendKey::new(w, color(i))).collect();
    if rest {
        legend.push(LegendKey::new("other waits", color(layers - 1)));
    }
    Ok(Some(Chart {
        title: "Server: the run's sessions' wait events per second".into(),
        caption: "the run's active sessions in each second's sample of pg_stat_activity, stacked by wait event \
                  (\"no wait event\": on CPU or not instrumented)"
            .into(),
        legend,
        svg: inline(svg),
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sampled() -> Json {
        json!({"server": {
            "waits": [{"wait": "Lock:relation", "samples": 4, "share": 0.5}, {"wait": "IO:WALWrite", "samples": 4, "share": 0.5}],
            "events": [{"second": 1, "kind": "checkpoint_requested", "what": "a requested checkpoint"},
                       {"second": 2, "kind": "lock_waits", "what": "2 lock waits on the table"}],
            "seconds": [{"second": 0, "own_waits": {"IO:WALWrite": 2}},
                         {"second": 1, "own_waits": {"IO:WALWrite": 2, "Lock:relation": 1}},
                         {"second": 2, "own_waits": {"Lock:relation": 3}}]
        }})
    }

    #[test]
    fn events_are_marked_in_their_colour_with_one_key_per_kind() {
        let (marks, keys) = event_marks(&sampled());
        assert_eq!(marks.len(), 2);
        assert_eq!((marks[0].0, marks[1].0), (1.0, 2.0));
        let labels: Vec<&str> = keys.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(labels, ["requested checkpoint", "lock waits on the table"]);
        assert_eq!(event_marks(&json!({"server": null})).0, vec![]);
    }

    #[test]
    fn the_band_stacks_the_waits_of_each_second() {
        let chart = wait_band(&sampled(), 2.0).unwrap().expect("a band");
        assert!(chart.title.contains("wait events"), "{}", chart.title);
        let labels: Vec<&str> = chart.legend.iter().map(|k| k.label.as_str()).collect();
        assert_eq!(labels, ["Lock:relation", "IO:WALWrite"]);
        assert!(chart.svg.starts_with("<svg"));
        assert!(wait_band(&json!({"server": null}), 2.0).unwrap().is_none());
    }
}
