//! Each command's HTML page (`--html`), rendered from a real run against
//! the harness's PostgreSQL (and, for `dbload http`, a loopback HTTP
//! server): the header with its verdict, the setup as labelled rows (no
//! JSON keys, no `None`/`False`/`null`), the charts, and nothing that a
//! browser would fetch (issue 17, item 6). Small runs: a few thousand
//! rows, two seconds.

use anyhow::{Context, Result};

use crate::http::Server;
use crate::support::{dbload_bin, ensure, private_tmp, write_file, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("html::ingest_page", ingest_page, Parallel),
        ("html::timeit_page", timeit_page, Parallel),
        ("html::workload_page", workload_page, Parallel),
        ("html::http_page", http_page, Parallel),
        ("html::run_page_opens_with_under_load_vs_alone", run_page_opens_with_under_load_vs_alone, Parallel),
        ("html::data_pages", data_pages, Parallel),
        ("html::compare_and_sweep_pages", compare_and_sweep_pages, Parallel),
    ]
}

/// Runs `dbload COMMAND --html FILE ARGS...` and returns the page.
fn page(args: &[&str], expect_exit: i32) -> Result<String> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("page.html");
    let file = file.to_str().context("a temporary path")?;
    let argv: Vec<&str> = args[..1].iter().copied().chain(["--html", file]).chain(args[1..].iter().copied()).collect();
    let (code, out, err) = dbload_bin(&argv, &[]);
    ensure(code == expect_exit, || format!("dbload {argv:?}: exit {code}\n{out}\n{err}"))?;
    std::fs::read_to_string(file).with_context(|| format!("the page of {argv:?}"))
}

/// What every page has: a header naming the command with its verdict and
/// when it ran, charts, nothing fetched from outside.
fn is_whole(html: &str, title: &str, verdict: &str, charts: usize) -> Result<()> {
    ensure(html.starts_with("<!doctype html>") && html.trim_end().ends_with("</html>"), || "not a whole page".into())?;
    let h1 = format!(r#"<h1>{title} <span class="verdict {verdict}</span></h1>"#);
    ensure(html.contains(&h1), || format!("no header {h1}: {}", head(html)))?;
    ensure(html.contains("<dt>What</dt>"), || format!("no command line in the header: {}", head(html)))?;
    let svgs = html.matches("<svg").count();
    ensure(svgs >= charts, || format!("{svgs} charts, {charts} expected"))?;
    is_offline(html)
}

/// The page loads nothing: no script, stylesheet, image or font, and no
/// URL inside a tag (a URL shown as text, like `dbload http`'s target, is
/// the report's data).
fn is_offline(html: &str) -> Result<()> {
    for needle in ["<script", "<link", "<img", "<iframe", "@import", "url("] {
        ensure(!html.contains(needle), || format!("the page holds {needle:?}"))?;
    }
    for tag in html.split('<').skip(1).filter_map(|t| t.split_once('>').map(|(tag, _)| tag)) {
        ensure(!tag.contains("http://") && !tag.contains("https://"), || format!("a URL in the tag <{tag}>"))?;
        ensure(!tag.contains("src=") && !tag.contains("href="), || format!("a resource in the tag <{tag}>"))?;
    }
    Ok(())
}

/// The setup's labelled rows (`<dt>label</dt><dd>value</dd>`), checked to
/// read as words: no JSON key, no `None`/`False`/`null`, no empty value.
fn setup_rows(html: &str) -> Result<Vec<(String, String)>> {
    let section = html.split(r#"<section class="setup">"#).nth(1).context("no setup section")?;
    let section = section.split("</section>").next().unwrap_or_default();
    let mut rows = Vec::new();
    for cell in section.split("<dt>").skip(1) {
        let (label, rest) = cell.split_once("</dt><dd>").context("a <dt> without its <dd>")?;
        let value = rest.split("</dd>").next().unwrap_or_default();
        ensure(!label.contains('_') && label.chars().next().is_some_and(char::is_uppercase), || {
            format!("a setup label that is a key: {label:?}")
        })?;
        ensure(
            !value.trim().is_empty() && !["None", "False", "null", "false", "–", "-"].contains(&value.trim()),
            || format!("setup row {label:?} shows {value:?}"),
        )?;
        rows.push((label.to_string(), value.to_string()));
    }
    for bad in [">None<", ">False<", ">null<"] {
        ensure(!html.contains(bad), || format!("the page shows {bad}"))?;
    }
    Ok(rows)
}

/// The labels `want` are among the setup's rows.
fn has_rows(html: &str, want: &[&str]) -> Result<()> {
    let rows = setup_rows(html)?;
    let labels: Vec<&str> = rows.iter().map(|(l, _)| l.as_str()).collect();
    ensure(want.iter().all(|w| labels.contains(w)), || format!("setup rows {labels:?}, {want:?} expected"))
}

fn head(html: &str) -> &str {
    let end = html.find("</header>").unwrap_or(html.len().min(2000));
    &html[..end]
}

fn ingest_page(ctx: &Ctx) -> Result<()> {
    let url = ctx.url.as_str();
    // Nearly 3 s: two whole seconds to chart (the partial last one is left out).
    let args = ["ingest", "--url", url, "--rows", "8500", "--rate", "3000", "--batch-size", "500", "--workers", "2"];
    let html = page(&[&args[..], &["--table", "html_ingest", "--drop-table", "--quiet", "--no-results"]].concat(), 0)?;
    is_whole(&html, "dbload ingest", r#"ok">ok · exit 0"#, 3)?;
    has_rows(&html, &["Model", "Method", "Workers", "Batch size", "Rate", "Rows"])?;
    // The harness's server runs with fsync=off: the page says what that means.
    ensure(html.contains("The figures are not comparable with a durable server"), || "no durability warning".into())?;
    ensure(html.contains("<h2>Server settings</h2>") && html.contains("<h3>DDL</h3>"), || {
        "server settings, DDL".into()
    })?;
    // Units chosen for the reader: a latency table in µs/ms/s, never raw ms with 3 decimals.
    let latency = html.split("<h3>Latency</h3>").nth(1).context("no latency table")?;
    let latency = latency.split("</table>").next().unwrap_or_default();
    ensure(latency.contains(" ms</td>") || latency.contains(" µs</td>") || latency.contains(" s</td>"), || {
        latency.to_string()
    })
}

fn timeit_page(ctx: &Ctx) -> Result<()> {
    let args = [
        "timeit",
        "--url",
        &ctx.url,
        "-s",
        "select 1",
        "--duration",
        "2s",
        "--concurrency",
        "2",
        "--quiet",
        "--no-results",
    ];
    let html = page(&args, 0)?;
    is_whole(&html, "dbload timeit", r#"ok">ok · exit 0"#, 3)?;
    has_rows(&html, &["Concurrency", "Duration", "Protocol"])
}

fn workload_page(ctx: &Ctx) -> Result<()> {
    let dir = private_tmp()?;
    let file =
        write_file(&dir, "q.yml", "- name: one\n  query: select 1\n  ratio: 0.5\n- query: select 2\n  ratio: 0.5\n")?;
    let args = ["workload", &file, "--url", &ctx.url, "--duration", "2s", "--rate", "100", "--quiet", "--no-results"];
    let html = page(&args, 0)?;
    is_whole(&html, "dbload workload", r#"ok">ok · exit 0"#, 3)?;
    has_rows(&html, &["Rate", "Duration"])?;
    ensure(html.contains("<h3>Queries</h3>") && html.contains("<b>one</b>"), || "the queries' table".into())
}

fn http_page(_: &Ctx) -> Result<()> {
    let server = Server::start(false)?;
    let url = format!("{}/flaky", server.url);
    // Every 4th answer is a 500: the page's verdict is failed operations, exit 1.
    let args =
        ["http", "GET", &url, "--vus", "2", "--duration", "2s", "--check", "status=200", "--quiet", "--no-results"];
    let html = page(&args, 1)?;
    is_whole(&html, "dbload http", r#"failed">failed operations · exit 1"#, 3)?;
    has_rows(&html, &["VUs", "Duration", "Method"])?;
    ensure(html.contains("<h3>Checks</h3>"), || "the checks' table".into())
}

fn run_page_opens_with_under_load_vs_alone(ctx: &Ctx) -> Result<()> {
    let dir = private_tmp()?;
    write_file(&dir, "q.yml", "- name: count\n  query: select count(*) from html_mixed\n  ratio: 1\n")?;
    let mixed = "duration: 2s\ningest:\n  table: html_mixed\n  drop-table: true\n  rate: 2000\n\
                 workloads:\n  - name: counts\n    file: q.yml\n    concurrency: 2\n";
    let file = write_file(&dir, "mixed.yml", mixed)?;
    let html = page(&["run", &file, "--url", &ctx.url, "--baseline", "--quiet", "--no-results"], 0)?;
    is_whole(&html, "dbload run", r#"ok">ok · exit 0"#, 2)?;
    has_rows(&html, &["Model", "Workers", "Concurrency"])?;
    // The comparison comes first, the parts after it; the setup once.
    let first = |needle: &str| html.find(needle).with_context(|| format!("no {needle:?}"));
    let (setup, table, parts) =
        (first("<h2>Setup</h2>")?, first("<h2>Under load vs alone</h2>")?, first("<h2>Ingest, ")?);
    ensure(setup < table && table < parts, || format!("setup at {setup}, table at {table}, parts at {parts}"))?;
    ensure(html.matches("<h2>Setup</h2>").count() == 1, || "the setup repeated".into())?;
    ensure(html.contains("<h3>Workload counts</h3>") && html.contains("<h3>Ingest</h3>"), || "setup per part".into())?;
    let table = &html[table..parts];
    ensure(table.contains("alone, before") && table.contains("alone, after"), || table.to_string())?;
    ensure(table.contains("× slower") || table.contains("× faster") || table.contains("same"), || table.to_string())
}

/// insert-fake-data, export and insert-json, which move rows of a table.
fn data_pages(ctx: &Ctx) -> Result<()> {
    let url = ctx.url.as_str();
    ctx.query(
        "DROP TABLE IF EXISTS html_fake, html_copy; \
         CREATE TABLE html_fake (id bigserial PRIMARY KEY, name text, score float8, seen timestamptz); \
         CREATE TABLE html_copy (LIKE html_fake)",
    )?;
    let html = page(
        &["insert-fake-data", "--url", url, "--table", "html_fake", "--num-records", "5000", "--quiet", "--no-results"],
        0,
    )?;
    is_whole(&html, "dbload insert-fake-data", r#"ok">ok · exit 0"#, 1)?;
    has_rows(&html, &["Method", "Table", "Batch size", "Workers"])?;
    let dir = private_tmp()?;
    let out = dir.path().to_str().context("a temporary path")?;
    let html = page(&["export", "--url", url, "--table", "html_fake", "--out", out, "--quiet", "--no-results"], 0)?;
    is_whole(&html, "dbload export", r#"ok">ok · exit 0"#, 0)?;
    has_rows(&html, &["Table", "Format", "Workers"])?;
    let files: Vec<String> = crate::support::entries(dir.path())?
        .into_iter()
        .filter(|f| f.ends_with(".json"))
        .map(|f| format!("{out}/{f}"))
        .collect();
    let args = ["insert-json", "--url", url, "--table", "html_copy", "--quiet", "--no-results"];
    let html = page(&[&args[..], &files.iter().map(String::as_str).collect::<Vec<_>>()].concat(), 0)?;
    is_whole(&html, "dbload insert-json", r#"ok">ok · exit 0"#, 1)?;
    has_rows(&html, &["Method", "Table"])
}

fn compare_and_sweep_pages(ctx: &Ctx) -> Result<()> {
    let dir = private_tmp()?;
    let mut reports = Vec::new();
    for batch in ["500", "2000"] {
        let report = dir.path().join(format!("b{batch}.json")).to_str().context("a temporary path")?.to_string();
        let args = ["ingest", "--url", &ctx.url, "--rows", "4000", "--batch-size", batch, "--table", "html_cmp"];
        let (code, out, err) =
            dbload_bin(&[&args[..], &["--drop-table", "--quiet", "--no-results", "--report", &report]].concat(), &[]);
        ensure(code == 0, || format!("{out}\n{err}"))?;
        reports.push(report);
    }
    let html = page(&["compare", &reports[0], &reports[1]], 0)?;
    is_whole(&html, "dbload compare", r#"ok">ok · exit 0"#, 1)?;
    // The table the terminal printed, as cells (`/` escaped as `&#x2f;`).
    ensure(html.contains("<th>figure</th>") && html.contains("<tr><td>rows&#x2f;s</td>"), || html.clone())?;
    let sweep = ["sweep", "--vary", "batch-size=500,2000", "--no-results", "--", "ingest", "--url", &ctx.url];
    let html = page(&[&sweep[..], &["--rows", "4000", "--table", "html_sweep"]].concat(), 0)?;
    is_whole(&html, "dbload sweep of ingest", r#"ok">ok · exit 0"#, 2)?;
    ensure(html.contains("<th>batch-size</th>") && html.contains("<tr class=\"best\"><td>*</td>"), || html.clone())
}
