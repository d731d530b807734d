//! `dbload k6 run` against the loopback HTTP server of `http.rs` (a real
//! hyper server that counts what it received): k6 scripts run as the
//! binary runs them, from a file and from stdin, and what the report says
//! compared with what the server saw.

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::http::Server;
use crate::support::{ensure, follows, json, Ctx};
use crate::Phase::{Parallel, Quiet};
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        (
            "k6::a_notify_script_runs_from_a_file_and_from_stdin",
            a_notify_script_runs_from_a_file_and_from_stdin,
            Parallel,
        ),
        ("k6::the_script_api_does_what_k6_does", the_script_api_does_what_k6_does, Parallel),
        ("k6::a_shared_array_is_made_once_for_every_vu", a_shared_array_is_made_once_for_every_vu, Parallel),
        ("k6::a_failing_threshold_exits_99", a_failing_threshold_exits_99, Parallel),
        ("k6::res_json_takes_a_selector", res_json_takes_a_selector, Parallel),
        ("k6::a_request_changed_in_place_goes_out_changed", a_request_changed_in_place_goes_out_changed, Parallel),
        ("k6::response_type_and_discarded_bodies", response_type_and_discarded_bodies, Parallel),
        ("k6::http_batch_makes_its_requests_at_once", http_batch_makes_its_requests_at_once, Parallel),
        ("k6::a_threshold_with_abort_on_fail_stops_the_run", a_threshold_with_abort_on_fail_stops_the_run, Parallel),
        ("k6::handle_summary_writes_its_files_and_stdout", handle_summary_writes_its_files_and_stdout, Parallel),
        (
            "k6::a_handle_summary_that_throws_leaves_the_default_summary",
            a_handle_summary_that_throws_leaves_the_default_summary,
            Parallel,
        ),
        ("k6::a_syntax_error_exits_2_at_its_place", a_syntax_error_exits_2_at_its_place, Parallel),
        ("k6::an_unsupported_import_exits_2_at_its_place", an_unsupported_import_exits_2_at_its_place, Parallel),
        ("k6::a_vu_that_throws_is_counted_and_goes_on", a_vu_that_throws_is_counted_and_goes_on, Parallel),
        ("k6::init_code_that_never_returns_ends_on_ctrl_c", init_code_that_never_returns_ends_on_ctrl_c, Parallel),
        ("k6::a_vu_costs_under_1_mib", a_vu_costs_under_1_mib, Quiet),
        ("k6::endless_recursion_is_a_range_error", endless_recursion_is_a_range_error, Parallel),
        ("k6::sleeping_vus_take_no_threads", sleeping_vus_take_no_threads, Parallel),
        ("k6::iterations_go_to_whichever_vu_is_free", iterations_go_to_whichever_vu_is_free, Parallel),
        ("k6::a_constant_vus_scenario_runs", a_constant_vus_scenario_runs, Parallel),
        ("k6::a_per_vu_iterations_scenario_runs", a_per_vu_iterations_scenario_runs, Parallel),
        ("k6::a_shared_iterations_scenario_runs", a_shared_iterations_scenario_runs, Parallel),
        ("k6::a_ramping_vus_scenario_runs", a_ramping_vus_scenario_runs, Parallel),
        ("k6::two_scenarios_are_refused", two_scenarios_are_refused, Parallel),
        (
            "k6::a_constant_arrival_rate_scenario_holds_its_rate",
            a_constant_arrival_rate_scenario_holds_its_rate,
            Parallel,
        ),
        ("k6::too_few_vus_drop_iterations_and_say_so", too_few_vus_drop_iterations_and_say_so, Parallel),
        ("k6::a_ramping_arrival_rate_scenario_ramps", a_ramping_arrival_rate_scenario_ramps, Parallel),
        (
            "k6::an_iteration_cut_at_the_deadline_is_not_counted",
            an_iteration_cut_at_the_deadline_is_not_counted,
            Parallel,
        ),
    ]
}

/// The binary with `args`, `stdin` written to its standard input; exit
/// code, stdout, stderr.
fn k6(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Result<(i32, String, String)> {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(["k6", "run", "--quiet"])
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child.stdin.take().context("stdin")?.write_all(stdin.as_bytes())?;
    let out = child.wait_with_output()?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// QuantumLeap's notify load test, in its shape: NGSI notifications built
/// in JavaScript, posted in a loop, each checked, then a sleep (the one
/// copy, which bench/k6.sh's memory part runs too).
const NOTIFY: &str = include_str!("../fixtures/k6/notify.js");

/// The seed's notify script (30 VUs × 60 s there; 3 VUs × 4 iterations
/// here): the requests the report counts are the ones the server got,
/// each a JSON notification, every check passed; from a file and from `-`.
fn a_notify_script_runs_from_a_file_and_from_stdin(_: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("notify-load-test.js");
    std::fs::write(&file, NOTIFY)?;
    for from_stdin in [false, true] {
        let server = Server::start(false)?;
        let url = format!("QL_URL={}", server.url);
        let script = if from_stdin { "-".to_owned() } else { file.display().to_string() };
        let stdin = if from_stdin { NOTIFY } else { "" };
        let (code, stdout, stderr) = k6(&["-u", "3", "-i", "12", "-e", &url, "--output", "json", &script], stdin, &[])?;
        ensure(code == 0, || format!("{script}: exit {code}: {stderr}"))?;
        let r = json(&stdout)?;
        follows(include_str!("../../schema/k6-report.schema.json"), &r)?;
        let seen = server.seen.requests();
        ensure(seen == 60 && r["http_reqs"] == 60 && r["metrics"]["http_reqs"]["count"] == 60.0, || {
            format!("{script}: the server saw {seen}: {stdout}")
        })?;
        ensure(r["iterations"] == 12 && r["checks"][0]["passes"] == 60 && r["checks"][0]["fails"] == 0, || {
            stdout.clone()
        })?;
        ensure(r["setup"]["script"] == if from_stdin { "stdin" } else { script.as_str() }, || stdout.clone())?;
        for body in server.seen.bodies() {
            let v: serde_json::Value = serde_json::from_slice(&body)?;
            ensure(v["data"][0]["type"] == "Room", || format!("{v}"))?;
        }
        let sent = r["data_sent_bytes"].as_f64().unwrap_or(0.0);
        ensure(sent > 0.0 && r["metrics"]["data_sent"]["count"] == sent, || format!("data_sent: {stdout}"))?;
        let trend = &r["metrics"]["http_req_duration"];
        ensure(["avg", "min", "med", "max", "p(90)", "p(95)"].iter().all(|k| trend[k].is_number()), || {
            trend.to_string()
        })?;
    }
    Ok(())
}

/// Each part of k6's API that dbload has, exercised by a script that
/// checks what it got: every check must pass, and the report and the
/// server must agree with the script.
fn the_script_api_does_what_k6_does(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("rooms.json"), r#"["Room:1","Room:2"]"#)?;
    std::fs::write(dir.path().join("lib.js"), "export function twice(x) { return 2 * x; }\n")?;
    let script = r#"
import http from 'k6/http';
import { check, group, sleep, fail } from 'k6';
import { Counter, Gauge, Rate, Trend } from 'k6/metrics';
import { SharedArray } from 'k6/data';
import { twice } from './lib.js';

const rooms = JSON.parse(open('./rooms.json'));
const shared = new SharedArray('rooms', () => rooms);
const sent = new Counter('sent');
const last = new Gauge('last_status');
const good = new Rate('good');
const took = new Trend('took', true);
export const options = { vus: 2, iterations: 4 };

export function setup() {
  const r = http.get(__ENV.BASE + '/setup');
  return { token: 'tok', status: r.status };
}

export default function (data) {
  check(data, { 'setup data reaches default': (d) => d.token === 'tok' && d.status === 200 });
  check(__VU, { '__VU is 1-based': (v) => v >= 1 && v <= 2 });
  check(__ITER, { '__ITER counts from 0': (i) => i >= 0 && i < 4 });
  check(__ENV, { '__ENV has -e and the environment': (e) => e.FROM_FLAG === 'yes' && e.FROM_PROCESS === 'too' });
  check(shared, { 'open() and SharedArray': (s) => s.length === 2 && s[1] === 'Room:2' && twice(2) === 4 });
  group('api', function () {
    const res = http.get(__ENV.BASE + '/x', { headers: { 'X-Test': '1' }, tags: { name: 'getx' } });
    check(res, {
      'status and json()': (r) => r.status === 200 && r.json().ok === true,
      'timings': (r) => r.timings.duration >= 0 && r.timings.waiting >= 0 && r.error === '',
      'request, and all in JSON': (r) => r.request.method === 'GET'
        && JSON.parse(JSON.stringify(r)).headers['Content-Type'] === 'application/json',
      'headers, by their canonical names': (r) => r.headers['Content-Type'] === 'application/json',
    });
    sent.add(1);
    last.add(res.status);
    good.add(res.status === 200);
    took.add(res.timings.duration);
  });
  for (const [method, f] of [['PUT', http.put], ['PATCH', http.patch], ['DELETE', http.del]]) {
    const r = f(__ENV.BASE + '/' + method.toLowerCase(), 'body');
    check(r, { ['status of ' + method]: (x) => x.status === 200 });
  }
  const e = http.request('POST', __ENV.BASE + '/status/503', JSON.stringify({ a: 1 }));
  check(e, { '503 is a response, not an exception': (r) => r.status === 503 });
  const t = http.get('http://127.0.0.1:1/', { timeout: '2s' });
  check(t, { 'a refused connection is status 0 with an error': (r) => r.status === 0 && r.error !== '' });
  let failed = false;
  try { fail('on purpose'); } catch (err) { failed = String(err).includes('on purpose'); }
  check(failed, { 'fail() throws': (f) => f });
  sleep(0.01);
}

export function teardown(data) {
  http.post(__ENV.BASE + '/teardown', data.token);
}
"#;
    let file = dir.path().join("api.js");
    std::fs::write(&file, script)?;
    let base = format!("BASE={}", server.url);
    let file_arg = file.display().to_string();
    let args = ["-e", &base, "-e", "FROM_FLAG=yes", "--output", "json", &file_arg];
    let (code, stdout, stderr) = k6(&args, "", &[("FROM_PROCESS", "too")])?;
    ensure(code == 0, || format!("exit {code}: {stderr}\n{stdout}"))?;
    let r = json(&stdout)?;
    let checks = r["checks"].as_array().context("checks")?;
    let failing: Vec<&serde_json::Value> = checks.iter().filter(|c| c["fails"] != 0).collect();
    ensure(failing.is_empty() && checks.len() == 15, || format!("checks: {checks:#?}\n{stderr}"))?;
    let m = &r["metrics"];
    ensure(m["sent"]["count"] == 4.0 && m["good"]["rate"] == 1.0 && m["last_status"]["value"] == 200.0, || {
        m.to_string()
    })?;
    ensure(m["took"]["avg"].is_number() && r["iterations"] == 4, || m.to_string())?;
    let log = server.seen.log.lock().unwrap().clone();
    let count = |method: &str, path: &str| log.iter().filter(|l| l.0 == method && l.1 == path).count();
    ensure(count("GET", "/setup") == 1 && count("POST", "/teardown") == 1, || format!("{log:?}"))?;
    ensure(log.iter().any(|l| l.1 == "/teardown" && l.3 == b"tok"), || "teardown(data) got no data".into())?;
    for (method, path) in [("GET", "/x"), ("PUT", "/put"), ("PATCH", "/patch"), ("DELETE", "/delete")] {
        ensure(count(method, path) == 4, || format!("{method} {path}: {log:?}"))?;
    }
    // Every request but the refused ones reached the server: setup, 4 × 5, teardown.
    ensure(r["http_reqs"] == 4 * 6 + 2 && server.seen.requests() == 4 * 5 + 2, || stdout.clone())?;
    Ok(())
}

/// Runs `script` (its checks must all pass) against `server`, with
/// `BASE` its URL: the report.
fn all_checks_pass(server: &Server, script: &str) -> Result<serde_json::Value> {
    let base = format!("BASE={}", server.url);
    let (code, stdout, stderr) = k6(&["-e", &base, "-i", "1", "--output", "json", "-"], script, &[])?;
    ensure(code == 0, || format!("exit {code}: {stderr}\n{stdout}"))?;
    let r = json(&stdout)?;
    let checks = r["checks"].as_array().context("checks")?;
    ensure(!checks.is_empty() && checks.iter().all(|c| c["fails"] == 0), || format!("checks: {checks:#?}\n{stderr}"))?;
    Ok(r)
}

/// k6's `SharedArray`: its function runs once for the whole run (not once
/// per VU), every VU reads the same elements (by index, `length`, for-of,
/// array methods), an element is a fresh copy (as JSON), the array is
/// read-only, and one made outside the init context is refused.
fn a_shared_array_is_made_once_for_every_vu(_: &Ctx) -> Result<()> {
    let script = r#"
import { check } from 'k6';
import { SharedArray } from 'k6/data';
const rooms = new SharedArray('rooms', () => {
  console.log('making the rooms');
  return [{ id: 'Room:1', n: 1 }, { id: 'Room:2', n: 2 }, undefined];
});
export const options = { vus: 4, iterations: 8 };
export default function () {
  let sum = 0;
  for (const r of rooms) sum += r ? r.n : 0;
  const ids = rooms.filter((r) => r).map((r) => r.id).join();
  let readOnly = false;
  try { rooms[0] = 1; } catch (e) { readOnly = e instanceof TypeError; }
  rooms[1].n = 99;
  let initOnly = '';
  try { new SharedArray('late', () => [1]); } catch (e) { initOnly = String(e); }
  check(rooms, {
    'indexes and length': (s) => s.length === 3 && s[1].id === 'Room:2' && s[2] === null && s[3] === undefined,
    'for-of and array methods': () => sum === 3 && ids === 'Room:1,Room:2' && Array.isArray(rooms) && 1 in rooms,
    'read-only, fresh copies': (s) => readOnly && s[1].n === 2,
    'init context only': () => initOnly.includes('init context'),
  });
}
"#;
    let (code, stdout, stderr) = k6(&["--output", "json", "-"], script, &[])?;
    ensure(code == 0, || format!("exit {code}: {stderr}\n{stdout}"))?;
    let r = json(&stdout)?;
    let checks = r["checks"].as_array().context("checks")?;
    ensure(checks.len() == 4 && checks.iter().all(|c| c["fails"] == 0 && c["passes"] == 8), || {
        format!("checks: {checks:#?}\n{stderr}")
    })?;
    let made = stderr.matches("making the rooms").count();
    ensure(made == 1, || format!("the SharedArray's function ran {made} times:\n{stderr}"))
}

/// `res.json(selector)` reads k6's (gjson's) path into the body: fields,
/// array elements, `#` for a length and for each element, `\.` for a dot
/// in a name, undefined for what is not there.
fn res_json_takes_a_selector(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let script = r#"
import http from 'k6/http';
import { check } from 'k6';

export default function () {
  const body = JSON.stringify({ a: { b: [10, 20] }, 'x.y': 1, list: [{ k: 1 }, { k: 2 }, { j: 3 }] });
  const r = http.post(__ENV.BASE + '/echo', body);
  check(r, {
    'a field in a field': (r) => JSON.stringify(r.json('a.b')) === '[10,20]',
    'an array element': (r) => r.json('a.b.1') === 20,
    'an array length': (r) => r.json('a.b.#') === 2,
    'a field of each element': (r) => JSON.stringify(r.json('list.#.k')) === '[1,2]',
    'an escaped dot': (r) => r.json('x\\.y') === 1,
    'nothing there': (r) => r.json('a.nope.c') === undefined && r.json('a.b.5') === undefined,
    'no selector': (r) => r.json().a.b[0] === 10,
  });
}
"#;
    all_checks_pass(&server, script)?;
    Ok(())
}

/// A script that sends one params object over and over and changes it in
/// place (a header's value, then its headers, the URL, the method) sends
/// each request as it was when made: the client keeps the last request's
/// encoded head, and the VU its converted headers, only while they are
/// the same.
fn a_request_changed_in_place_goes_out_changed(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let script = r#"
import http from 'k6/http';
import { check } from 'k6';

const params = { headers: { Authorization: 'Bearer 0' } };

export default function () {
  for (let i = 0; i < 3; i++) {
    params.headers.Authorization = 'Bearer ' + i;
    http.post(__ENV.BASE + '/same', 'b' + i, params);
  }
  params.headers = { Authorization: 'Basic x' };
  http.post(__ENV.BASE + '/other', 'c', params);
  http.post(__ENV.BASE + '/same', 'd');
  check(http.put(__ENV.BASE + '/same', 'e'), { 'answered': (r) => r.status === 200 });
}
"#;
    all_checks_pass(&server, script)?;
    let log = server.seen.log.lock().unwrap().clone();
    let seen: Vec<(&str, &str, Option<&str>, &[u8])> =
        log.iter().map(|l| (l.0.as_str(), l.1.as_str(), l.2.as_deref(), l.3.as_slice())).collect();
    let expected: Vec<(&str, &str, Option<&str>, &[u8])> = vec![
        ("POST", "/same", Some("Bearer 0"), b"b0"),
        ("POST", "/same", Some("Bearer 1"), b"b1"),
        ("POST", "/same", Some("Bearer 2"), b"b2"),
        ("POST", "/other", Some("Basic x"), b"c"),
        ("POST", "/same", None, b"d"),
        ("PUT", "/same", None, b"e"),
    ];
    ensure(seen == expected, || format!("the server saw {seen:?}"))
}

/// `params.responseType` makes a response's body a string (`text`, the
/// default), an ArrayBuffer (`binary`) or null (`none`);
/// `options.discardResponseBodies` makes `none` the default. Another
/// responseType is the script's error, naming it.
fn response_type_and_discarded_bodies(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    for (discard, default_body) in [(false, "(r) => r.body === 'xxxxx'"), (true, "(r) => r.body === null")] {
        let script = format!(
            r#"
import http from 'k6/http';
import {{ check }} from 'k6';

export const options = {{ discardResponseBodies: {discard} }};

export default function () {{
  const url = __ENV.BASE + '/bytes/5';
  check(http.get(url), {{ 'the default': {default_body} }});
  check(http.get(url, {{ responseType: 'text' }}), {{ 'text': (r) => r.body === 'xxxxx' }});
  check(http.get(url, {{ responseType: 'binary' }}), {{
    'binary': (r) => r.body instanceof ArrayBuffer && new Uint8Array(r.body)[4] === 120 && r.body.byteLength === 5,
  }});
  check(http.get(url, {{ responseType: 'none' }}), {{ 'none': (r) => r.body === null && r.status === 200 }});
  let thrown = '';
  try {{ http.get(url, {{ responseType: 'blob' }}); }} catch (e) {{ thrown = String(e); }}
  check(thrown, {{ 'another is refused, named': (t) => t.includes('responseType') && t.includes('blob') }});
}}
"#
        );
        all_checks_pass(&server, &script).with_context(|| format!("discardResponseBodies: {discard}"))?;
    }
    Ok(())
}

/// `http.batch` takes a list (URLs, `[method, url, body, params]`,
/// `{ method, url, ... }`) and answers in order, or an object and answers
/// under its names; its requests are made at once (three of 400 ms take
/// well under 1.2 s), each counted.
fn http_batch_makes_its_requests_at_once(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let script = r#"
import http from 'k6/http';
import { check } from 'k6';

export default function () {
  const base = __ENV.BASE;
  const list = http.batch([
    base + '/x',
    ['POST', base + '/echo', '{"a":1}', { tags: { name: 'echo' } }],
    { method: 'GET', url: base + '/status/503' },
    ['GET', base + '/bytes/3', null, { responseType: 'binary' }],
  ]);
  check(list, {
    'a list in order': (l) => l.length === 4 && l[0].json('ok') === true && l[1].json('a') === 1 &&
      l[2].status === 503 && l[3].body.byteLength === 3,
  });
  const started = Date.now();
  const named = http.batch({ one: base + '/delay/400', two: base + '/delay/400', three: base + '/delay/400' });
  const took = Date.now() - started;
  check(named, {
    'an object by name': (n) => Object.keys(n).join() === 'one,two,three' && n.three.status === 200,
  });
  check(took, { 'at once': (t) => t < 1000 });
}
"#;
    let r = all_checks_pass(&server, script)?;
    ensure(r["http_reqs"] == 7 && server.seen.requests() == 7, || format!("{r}"))?;
    Ok(())
}

/// A threshold with `abortOnFail` that fails stops the run then, not at
/// its 30 s, and exits 99 as k6 does, saying which threshold stopped it;
/// one without it lets the run go on.
fn a_threshold_with_abort_on_fail_stops_the_run(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let script = r#"
import http from 'k6/http';
import { sleep } from 'k6';

export const options = {
  vus: 1,
  duration: '30s',
  thresholds: {
    http_reqs: [{ threshold: 'count<5', abortOnFail: true }],
    http_req_duration: ['max<60000'],
  },
};

export default function () {
  http.get(__ENV.BASE + '/x');
  sleep(0.05);
}
"#;
    let base = format!("BASE={}", server.url);
    let started = Instant::now();
    let (code, stdout, stderr) = k6(&["-e", &base, "--output", "json", "-"], script, &[])?;
    let took = started.elapsed();
    ensure(code == 99 && took < Duration::from_secs(15), || format!("exit {code} after {took:?}: {stderr}\n{stdout}"))?;
    let r = json(&stdout)?;
    let said = format!("{stdout}{stderr}");
    ensure(said.contains("abortOnFail") && said.contains("count<5"), || said.clone())?;
    ensure(r["http_reqs"].as_u64().is_some_and(|n| n >= 5), || stdout.clone())?;
    Ok(())
}

/// A threshold that fails exits 99, as k6 does, and says so with ✗; with
/// `--no-thresholds` the same run exits 0. `--summary-export` writes
/// k6's shape, each threshold under its metric.
fn a_failing_threshold_exits_99(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let script = r#"
import http from 'k6/http';
import { group } from 'k6';
export const options = {
  iterations: 3,
  thresholds: {
    http_reqs: ['count>2'],
    'http_req_duration{group:::notify}': ['p(95)<60000'],
    http_req_failed: [{ threshold: 'rate<0.01', abortOnFail: false }],
  },
};
export default function () {
  group('notify', () => http.get(__ENV.BASE + '/status/500'));
}
"#;
    let dir = tempfile::tempdir()?;
    let export = dir.path().join("summary.json");
    let base = format!("BASE={}", server.url);
    let export_arg = export.display().to_string();
    let (code, stdout, stderr) = k6(&["-e", &base, "--summary-export", &export_arg, "-"], script, &[])?;
    ensure(code == 99, || format!("exit {code}: {stderr}\n{stdout}"))?;
    ensure(stdout.contains("✗ http_req_failed") && stdout.contains("✓ http_reqs"), || stdout.clone())?;
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&export)?)?;
    let m = &summary["metrics"];
    ensure(m["http_req_failed"]["thresholds"]["rate<0.01"] == true, || summary.to_string())?;
    ensure(m["http_reqs"]["thresholds"]["count>2"] == false && m["http_reqs"]["count"] == 3.0, || summary.to_string())?;
    ensure(m["http_req_duration{group:::notify}"]["thresholds"]["p(95)<60000"] == false, || summary.to_string())?;
    let (code, stdout, stderr) = k6(&["-e", &base, "--no-thresholds", "-"], script, &[])?;
    ensure(code == 0 && !stdout.contains("Thresholds:"), || format!("--no-thresholds: exit {code}: {stderr}\n{stdout}"))
}

/// A script that exports `handleSummary(data)` (k6's end-of-test hook):
/// it gets k6's summary data (`metrics.NAME` with `type`, `contains`,
/// `values` and `thresholds`, `root_group.checks`, `state`, `options`);
/// what it returns is written where its keys say (a file path, `stdout`
/// in place of the k6 summary, `stderr`); `textSummary` from k6's jslib
/// URL (both versions) is built in and gives the summary dbload prints.
fn handle_summary_writes_its_files_and_stdout(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let dir = tempfile::tempdir()?;
    let summary = dir.path().join("summary.json");
    let binary = dir.path().join("bytes.bin");
    for version in ["0.0.2", "0.1.0"] {
        let script = format!(
            r#"
import http from 'k6/http';
import {{ check }} from 'k6';
import {{ textSummary }} from 'https://jslib.k6.io/k6-summary/{version}/index.js';

export const options = {{ thresholds: {{ http_req_duration: ['p(95)<60000'] }} }};

export default function () {{
  const res = http.get(__ENV.BASE + '/x');
  check(res, {{ 'status was 200': (r) => r.status === 200 }});
}}

export function handleSummary(data) {{
  return {{
    stdout: 'FROM handleSummary\n' + textSummary(data, {{ indent: ' ', enableColors: false }}),
    stderr: 'TO stderr\n',
    [__ENV.SUMMARY]: JSON.stringify(data),
    [__ENV.BINARY]: new Uint8Array([1, 2, 3]).buffer,
  }};
}}
"#
        );
        let (base, summary_env, binary_env) = (
            format!("BASE={}", server.url),
            format!("SUMMARY={}", summary.display()),
            format!("BINARY={}", binary.display()),
        );
        let args = ["-e", &base, "-e", &summary_env, "-e", &binary_env, "-u", "2", "-i", "6", "-"];
        let (code, stdout, stderr) = k6(&args, &script, &[])?;
        ensure(code == 0, || format!("{version}: exit {code}: {stderr}\n{stdout}"))?;
        ensure(stderr.contains("TO stderr") && !stdout.contains("TO stderr"), || format!("{version}: {stderr}"))?;
        // handleSummary's stdout takes the k6 summary's place; dbload's own lines follow.
        let at = stdout.find("FROM handleSummary").with_context(|| format!("{version}: {stdout}"))?;
        ensure(stdout.matches("http_reqs").count() == 1 && stdout.contains(" ✓ status was 200"), || stdout.clone())?;
        ensure(stdout.find("Connections opened").is_some_and(|c| c > at), || stdout.clone())?;
        let data: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&summary)?)?;
        let m = &data["metrics"];
        ensure(m["http_reqs"]["type"] == "counter" && m["http_reqs"]["values"]["count"] == 6.0, || data.to_string())?;
        let d = &m["http_req_duration"];
        ensure(d["type"] == "trend" && d["contains"] == "time" && d["values"]["p(95)"].is_number(), || d.to_string())?;
        ensure(d["thresholds"]["p(95)<60000"]["ok"] == true, || d.to_string())?;
        ensure(m["data_sent"]["contains"] == "data" && m["checks"]["values"]["passes"] == 6.0, || m.to_string())?;
        let checks = &data["root_group"]["checks"];
        ensure(checks[0]["name"] == "status was 200" && checks[0]["passes"] == 6, || data.to_string())?;
        ensure(data["state"]["testRunDurationMs"].as_f64().is_some_and(|ms| ms > 0.0), || data.to_string())?;
        ensure(data["options"]["summaryTrendStats"].is_array(), || data.to_string())?;
        ensure(std::fs::read(&binary)? == [1, 2, 3], || format!("{version}: {}", binary.display()))?;
    }
    Ok(())
}

/// A `handleSummary` that throws is reported, and the default summary is
/// printed in its place, as k6 does; the run's exit code stays its own.
fn a_handle_summary_that_throws_leaves_the_default_summary(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let script = r#"
import http from 'k6/http';
export default function () { http.get(__ENV.BASE + '/x'); }
export function handleSummary(data) { throw new Error('no summary today'); }
"#;
    let base = format!("BASE={}", server.url);
    let (code, stdout, stderr) = k6(&["-e", &base, "-i", "2", "-"], script, &[])?;
    ensure(code == 0, || format!("exit {code}: {stderr}\n{stdout}"))?;
    ensure(stderr.contains("handleSummary") && stderr.contains("no summary today"), || stderr.clone())?;
    ensure(stdout.contains("http_reqs") && stdout.contains("iterations"), || stdout.clone())
}

/// A syntax error stops the command before anything runs: exit 2, the
/// file, line and column.
fn a_syntax_error_exits_2_at_its_place(_: &Ctx) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("broken.js");
    std::fs::write(&file, "import http from 'k6/http';\nexport default function () {\n  let x = ;\n}\n")?;
    let (code, stdout, stderr) = k6(&[&file.display().to_string()], "", &[])?;
    let at = format!("{}:3:", file.display());
    ensure(code == 2 && stdout.is_empty() && stderr.contains(&at), || format!("exit {code}: {stderr}"))
}

/// An import of a k6 module dbload does not have, or of a remote module,
/// is refused where it is written, with what to do: exit 2.
fn an_unsupported_import_exits_2_at_its_place(_: &Ctx) -> Result<()> {
    for (import, advice) in [("k6/ws", "k6 itself"), ("https://jslib.k6.io/x.js", "download")] {
        let script =
            format!("import http from 'k6/http';\n  import ws from '{import}';\nexport default function () {{}}\n");
        let (code, stdout, stderr) = k6(&["-"], &script, &[])?;
        ensure(code == 2 && stdout.is_empty(), || format!("{import}: exit {code}: {stderr}"))?;
        ensure(stderr.contains("stdin:2:18") && stderr.contains(import) && stderr.contains(advice), || {
            format!("{import}: {stderr}")
        })?;
    }
    Ok(())
}

/// An iteration that throws is counted (its error printed once, with
/// where) and the VU goes on with its next iteration, as in k6; the run
/// has failed operations: exit 1.
fn a_vu_that_throws_is_counted_and_goes_on(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let script = r#"
import http from 'k6/http';
export default function () {
  http.get(__ENV.BASE + '/x');
  if (__ITER % 2 === 1) {
    throw new Error('odd iteration ' + __ITER);
  }
}
"#;
    let base = format!("BASE={}", server.url);
    let (code, stdout, stderr) = k6(&["-e", &base, "-i", "6", "--output", "json", "-"], script, &[])?;
    ensure(code == 1, || format!("exit {code}: {stderr}"))?;
    let r = json(&stdout)?;
    ensure(r["iterations"] == 6 && r["iterations_failed"] == 3 && server.seen.requests() == 6, || stdout.clone())?;
    ensure(stderr.contains("odd iteration 1") && stderr.contains("stdin:6:"), || stderr.clone())?;
    let classes = r["error_classes"].as_array().context("error_classes")?;
    ensure(classes.iter().map(|c| c["count"].as_u64().unwrap_or(0)).sum::<u64>() == 3, || stdout.clone())
}

/// Init code that never returns is interrupted by Ctrl-C: exit 130, soon.
fn init_code_that_never_returns_ends_on_ctrl_c(_: &Ctx) -> Result<()> {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(["k6", "run", "--quiet", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    stdin.write_all(b"let n = 0;\nwhile (true) { n++; }\nexport default function () {}\n")?;
    drop(stdin);
    std::thread::sleep(Duration::from_millis(1500));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT)?;
    let t = Instant::now();
    let status = child.wait()?;
    let mut stderr = String::new();
    child.stderr.take().context("stderr")?.read_to_string(&mut stderr)?;
    ensure(t.elapsed() < Duration::from_secs(5), || format!("took {:?} to stop", t.elapsed()))?;
    ensure(status.code() == Some(130) && stderr.contains("init code"), || format!("{status:?}: {stderr}"))
}

/// Issue 33's limit: memory per VU for the notify-shaped script at most
/// 1 MiB, the peak RSS at 1,000 VUs less that at 100, over 900. A VU is a
/// coroutine (its stack's touched pages), a QuickJS runtime and context
/// with the script loaded, and its task in the worker loop; 2,000 against
/// 100 is `make bench`'s measure (bench/k6.sh), 1,000 here keeps the test short.
fn a_vu_costs_under_1_mib(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let url = format!("QL_URL={}", server.url);
    let mut rss = Vec::new();
    for vus in ["100", "1000"] {
        let (code, stdout, stderr) = k6(&["-u", vus, "-d", "3s", "-e", &url, "--output", "json", "-"], NOTIFY, &[])?;
        ensure(code == 0, || format!("{vus} VUs: exit {code}: {stderr}"))?;
        let r = json(&stdout)?;
        rss.push(r["client_peak_rss_mib"].as_f64().context("client_peak_rss_mib")?);
    }
    let per_vu = (rss[1] - rss[0]) / 900.0;
    ensure(per_vu <= 1.0, || {
        format!("{per_vu:.3} MiB per VU (peak RSS {:.1} MiB at 100 VUs, {:.1} at 1,000)", rss[0], rss[1])
    })
}

/// A script that recurses without end gets QuickJS's stack-overflow
/// exception (a RangeError), counted as a failed iteration with its place,
/// and the VU goes on: the JavaScript stack limit fits the stack the VU
/// runs on, so the check fires before the guard page (a crash) is reached.
fn endless_recursion_is_a_range_error(_: &Ctx) -> Result<()> {
    let script = "function down(n) { return down(n + 1) + 1; }\nexport default function () { down(0); }\n";
    let (code, stdout, stderr) = k6(&["-u", "2", "-i", "4", "--output", "json", "-"], script, &[])?;
    ensure(code == 1, || format!("exit {code}: {stderr}"))?;
    let r = json(&stdout)?;
    ensure(r["iterations"] == 4 && r["iterations_failed"] == 4, || stdout.clone())?;
    ensure(stderr.contains("RangeError: Maximum call stack size exceeded") && stderr.contains("stdin:1:"), || {
        stderr.clone()
    })
}

/// Issue 33: a VU that sleeps costs no thread. 300 VUs sleeping in every
/// iteration run on the worker threads: the process has a handful of
/// threads (the runtime's, the worker pool's), not one per VU.
fn sleeping_vus_take_no_threads(_: &Ctx) -> Result<()> {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dbload"))
        .args(["k6", "run", "--quiet", "-u", "300", "-d", "4s", "--threads", "2", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    stdin.write_all(b"import { sleep } from 'k6';\nexport default function () { sleep(0.5); }\n")?;
    drop(stdin);
    std::thread::sleep(Duration::from_millis(2500));
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()))?;
    let threads: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .context("Threads: in /proc/PID/status")?
        .trim()
        .parse()?;
    let out = child.wait_with_output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure(out.status.code() == Some(0), || format!("{:?}: {stderr}", out.status))?;
    ensure(threads < 50, || format!("{threads} threads for 300 sleeping VUs"))
}

/// The requests the server got, by path: `/vu1`, `/vu2`, ...
fn by_path(server: &Server) -> std::collections::BTreeMap<String, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for l in server.seen.log.lock().unwrap().iter() {
        *counts.entry(l.1.clone()).or_insert(0) += 1;
    }
    counts
}

/// A script whose VU 1 is slow (1.5 s per iteration) and the others fast,
/// each iteration one request to `/vuN`; `options` as given.
fn slow_vu_1(options: &str) -> String {
    format!(
        "import http from 'k6/http';\nimport {{ sleep }} from 'k6';\nexport const options = {options};\n\
         export default function () {{\n  if (__VU === 1) {{ sleep(1.5); }}\n  http.get(__ENV.BASE + '/vu' + __VU);\n}}\n"
    )
}

/// `-i` is k6's shared-iterations: the iterations are taken one by one by
/// whichever VU is free, not split evenly ahead. VU 1 is slow, so VU 2
/// does nearly all of the 10 iterations (split evenly, VU 1 would do 5,
/// 7.5 s of them).
fn iterations_go_to_whichever_vu_is_free(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let base = format!("BASE={}", server.url);
    let (code, stdout, stderr) =
        k6(&["-e", &base, "-u", "2", "-i", "10", "--output", "json", "-"], &slow_vu_1("{}"), &[])?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let r = json(&stdout)?;
    let counts = by_path(&server);
    ensure(r["iterations"] == 10 && server.seen.requests() == 10, || format!("{counts:?}: {stdout}"))?;
    ensure(counts.get("/vu1").copied().unwrap_or(0) <= 2, || format!("{counts:?}"))
}

/// A scenario's run as the server saw it: exit code, report, requests by path.
fn scenario(
    options: &str,
    script: Option<&str>,
) -> Result<(i32, serde_json::Value, std::collections::BTreeMap<String, usize>, String)> {
    let server = Server::start(false)?;
    let base = format!("BASE={}", server.url);
    let script = script.map_or_else(|| slow_vu_1(options), |s| s.replace("OPTIONS", options));
    let (code, stdout, stderr) = k6(&["-e", &base, "--output", "json", "-"], &script, &[])?;
    let report = if code == 2 { serde_json::Value::Null } else { json(&stdout)? };
    Ok((code, report, by_path(&server), stderr))
}

/// `constant-vus`: `vus` VUs for `duration`, each in a loop.
fn a_constant_vus_scenario_runs(_: &Ctx) -> Result<()> {
    let script = "import http from 'k6/http';\nimport { sleep } from 'k6';\nexport const options = OPTIONS;\n\
                  export default function () { http.get(__ENV.BASE + '/vu' + __VU); sleep(0.1); }\n";
    let options = "{ scenarios: { steady: { executor: 'constant-vus', vus: 3, duration: '1s' } } }";
    let (code, r, counts, stderr) = scenario(options, Some(script))?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(counts.len() == 3 && counts.values().all(|&n| (5..=12).contains(&n)), || format!("{counts:?}"))?;
    ensure(r["http_reqs"] == counts.values().sum::<usize>(), || format!("{counts:?}: {r}"))
}

/// `per-vu-iterations`: each VU does its own `iterations`, the slow one too.
fn a_per_vu_iterations_scenario_runs(_: &Ctx) -> Result<()> {
    let options = "{ scenarios: { each: { executor: 'per-vu-iterations', vus: 2, iterations: 2 } } }";
    let (code, r, counts, stderr) = scenario(options, None)?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(counts.get("/vu1") == Some(&2) && counts.get("/vu2") == Some(&2) && r["iterations"] == 4, || {
        format!("{counts:?}: {r}")
    })
}

/// `shared-iterations`: `iterations` in all, taken by whichever VU is free.
fn a_shared_iterations_scenario_runs(_: &Ctx) -> Result<()> {
    let options = "{ scenarios: { all: { executor: 'shared-iterations', vus: 2, iterations: 10 } } }";
    let (code, r, counts, stderr) = scenario(options, None)?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(r["iterations"] == 10 && counts.values().sum::<usize>() == 10, || format!("{counts:?}: {r}"))?;
    ensure(counts.get("/vu1").copied().unwrap_or(0) <= 2, || format!("{counts:?}"))
}

/// `ramping-vus`: the VUs follow `stages` from `startVUs`; 4 at most.
fn a_ramping_vus_scenario_runs(_: &Ctx) -> Result<()> {
    let script = "import http from 'k6/http';\nimport { sleep } from 'k6';\nexport const options = OPTIONS;\n\
                  export default function () { http.get(__ENV.BASE + '/vu' + __VU); sleep(0.1); }\n";
    let options = "{ scenarios: { ramp: { executor: 'ramping-vus', startVUs: 1, \
                   stages: [{ duration: '1s', target: 4 }, { duration: '1s', target: 0 }] } } }";
    let (code, r, counts, stderr) = scenario(options, Some(script))?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    ensure(counts.len() == 4 && counts.keys().all(|k| ["/vu1", "/vu2", "/vu3", "/vu4"].contains(&k.as_str())), || {
        format!("{counts:?}")
    })?;
    ensure(r["http_reqs"] == counts.values().sum::<usize>() && r["setup"]["vus"] == 4, || format!("{counts:?}: {r}"))
}

/// Two scenarios in one run are refused before anything runs: exit 2,
/// with what to do.
fn two_scenarios_are_refused(_: &Ctx) -> Result<()> {
    let options = "{ scenarios: { a: { executor: 'constant-vus', vus: 1, duration: '1s' }, \
                   b: { executor: 'constant-vus', vus: 1, duration: '1s' } } }";
    let (code, _, counts, stderr) = scenario(options, None)?;
    ensure(code == 2 && counts.is_empty(), || format!("exit {code}: {stderr}"))?;
    ensure(stderr.contains("options.scenarios") && stderr.contains("one scenario"), || stderr.clone())
}

/// An iteration still sleeping when the deadline's grace ends is cut, as
/// in k6: counted as failed, not in k6's `iterations` nor in
/// `iteration_duration` (once the VUs were coroutines, the cut iterations
/// ended when their VU was dropped and were counted, 6 s each).
fn an_iteration_cut_at_the_deadline_is_not_counted(_: &Ctx) -> Result<()> {
    let script = "import { sleep } from 'k6';\nexport default function () { sleep(10); }\n";
    let (code, stdout, stderr) = k6(&["-u", "3", "-d", "1s", "--output", "json", "-"], script, &[])?;
    ensure(code == 1, || format!("exit {code}: {stderr}"))?;
    let r = json(&stdout)?;
    let m = &r["metrics"];
    ensure(m["iterations"]["count"] == 0.0 && r["iterations"] == 0, || format!("{m}\n{stdout}"))
}

/// One request to `/x` per iteration, after `sleep(SLEEP)` s.
const ARRIVING: &str = "import http from 'k6/http';\nimport { sleep } from 'k6';\nexport const options = OPTIONS;\n\
                        export default function () { sleep(SLEEP); http.get(__ENV.BASE + '/x'); }\n";

/// `constant-arrival-rate`: 50 iterations a second for 2 s with VUs to
/// spare are 100 requests at the server, none dropped.
fn a_constant_arrival_rate_scenario_holds_its_rate(_: &Ctx) -> Result<()> {
    let options = "{ scenarios: { steady: { executor: 'constant-arrival-rate', rate: 50, timeUnit: '1s', \
                   duration: '2s', preAllocatedVUs: 5, maxVUs: 10 } } }";
    let (code, r, counts, stderr) = scenario(options, Some(&ARRIVING.replace("SLEEP", "0")))?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let seen = counts.values().sum::<usize>();
    ensure((97..=103).contains(&seen) && r["http_reqs"] == seen, || format!("the server saw {seen}: {r}"))?;
    ensure(r["metrics"]["dropped_iterations"]["count"] == 0.0 && r["setup"]["vus"] == 10, || format!("{r}"))
}

/// Iterations of 1 s on 2 VUs cannot start 20 a second: the slots that
/// found no VU free are k6's `dropped_iterations`, in the JSON and in the
/// summary's warning, and the latency from the intended start says how late
/// the ones that ran started.
fn too_few_vus_drop_iterations_and_say_so(_: &Ctx) -> Result<()> {
    let options = "{ scenarios: { busy: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', \
                   duration: '2s', preAllocatedVUs: 2 } } }";
    let (code, r, counts, stderr) = scenario(options, Some(&ARRIVING.replace("SLEEP", "1")))?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    follows(include_str!("../../schema/k6-report.schema.json"), &r)?;
    let seen = counts.values().sum::<usize>() as f64;
    let dropped = r["metrics"]["dropped_iterations"]["count"].as_f64().unwrap_or(0.0);
    ensure(seen <= 6.0 && dropped >= 30.0 && dropped + seen <= 42.0, || {
        format!("seen {seen}, dropped {dropped}: {r}")
    })?;
    let warning = r["rate_warning"].as_str().unwrap_or("");
    ensure(warning.contains("never started") && warning.contains("maxVUs"), || format!("{r}"))?;
    let max = |k: &str| r[k]["max"].as_f64().unwrap_or(0.0);
    ensure(max("iteration_duration_ms") < 1500.0 && max("iteration_latency_ms") > 1500.0, || format!("{r}"))
}

/// `ramping-arrival-rate`: from `startRate` 0 up to 60 a second and held:
/// each second of the timeline has more iterations than the one before.
fn a_ramping_arrival_rate_scenario_ramps(_: &Ctx) -> Result<()> {
    let options = "{ scenarios: { up: { executor: 'ramping-arrival-rate', startRate: 0, timeUnit: '1s', \
                   preAllocatedVUs: 10, stages: [{ target: 20, duration: '1s' }, { target: 60, duration: '1s' }, \
                   { target: 60, duration: '1s' }] } } }";
    let (code, r, counts, stderr) = scenario(options, Some(&ARRIVING.replace("SLEEP", "0")))?;
    ensure(code == 0, || format!("exit {code}: {stderr}"))?;
    let seen = counts.values().sum::<usize>();
    // 10 + 40 + 60 iterations are due.
    ensure((105..=115).contains(&seen) && r["http_reqs"] == seen, || format!("the server saw {seen}: {r}"))?;
    let per_second: Vec<u64> =
        r["timeline"].as_array().into_iter().flatten().filter_map(|s| s["batches"].as_u64()).collect();
    ensure(per_second.len() >= 3 && per_second[0] < per_second[1] && per_second[1] < per_second[2], || {
        format!("per second: {per_second:?}")
    })
}
