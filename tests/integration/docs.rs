//! The guides as a user meets them: every relative link of README.md and
//! docs/ leads somewhere, and the examples marked runnable (a code block
//! tagged `sh example`) run against the harness's PostgreSQL. A guide whose
//! link or example went stale fails here, not in a user's terminal. The
//! HTTP and k6 examples load the HTTP tests' server, named by `API_URL`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use crate::support::{ensure, Ctx};
use crate::Phase::Parallel;
use crate::Registered;

pub fn tests() -> Vec<Registered> {
    vec![
        ("docs::every_relative_link_leads_to_a_file_and_heading", links_resolve, Parallel),
        ("docs::runnable_examples_run", examples_run, Parallel),
        ("docs::guides_say_what_is_not_what_was_planned", no_planning_words, Parallel),
    ]
}

/// The info string of a runnable example: a shell block to GitHub, which
/// reads only the first word.
const RUNNABLE: &str = "sh example";

/// README.md and every Markdown file under docs/, relative to the repository.
fn guides() -> Result<Vec<PathBuf>> {
    let root = repo();
    let mut found = vec![PathBuf::from("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path.strip_prefix(root)?.to_path_buf());
            }
        }
    }
    found.sort();
    Ok(found)
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(guide: &Path) -> Result<String> {
    std::fs::read_to_string(repo().join(guide)).with_context(|| format!("reading {}", guide.display()))
}

/// The anchors GitHub gives a file's headings: lower case, letters, digits,
/// `-` and `_` kept, spaces made `-`, the rest dropped; a repeated heading
/// gets `-1`, `-2` ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut anchors = BTreeSet::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let text = heading.take().unwrap_or_default().to_lowercase();
                let slug: String = text
                    .chars()
                    .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
                    .map(|c| if c == ' ' { '-' } else { c })
                    .collect();
                let n = seen.entry(slug.clone()).or_default();
                anchors.insert(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
                *n += 1;
            }
            _ => {}
        }
    }
    anchors
}

fn links_resolve(_: &Ctx) -> Result<()> {
    let mut broken = Vec::new();
    for guide in guides()? {
        let text = read(&guide)?;
        for event in Parser::new(&text) {
            let (Event::Start(Tag::Link { dest_url, .. }) | Event::Start(Tag::Image { dest_url, .. })) = event else {
                continue;
            };
            if dest_url.contains("://") || dest_url.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = dest_url.split_once('#').unwrap_or((&dest_url, ""));
            let target =
                if path.is_empty() { guide.clone() } else { guide.parent().unwrap_or(Path::new("")).join(path) };
            let is_guide = target.extension().is_some_and(|e| e == "md");
            if !repo().join(&target).exists() {
                broken.push(format!("{}: {dest_url}: no file {}", guide.display(), target.display()));
            } else if !anchor.is_empty() && is_guide && !anchors(&read(&target)?).contains(anchor) {
                let (guide, target) = (guide.display(), target.display());
                broken.push(format!("{guide}: {dest_url}: no heading #{anchor} in {target}"));
            }
        }
    }
    ensure(broken.is_empty(), || format!("links that lead nowhere:\n{}", broken.join("\n")))
}

/// Words of the project's planning, which a user cannot look up: what is
/// supported is said as it is, and what is not as not supported.
const PLANNING: &[&str] = &["not yet", "next step", "seed 00", "issue 1", "issue 2", "issue 3", "wave"];

/// The guides a user reads; docs/architecture.md is the developers' map.
fn no_planning_words(_: &Ctx) -> Result<()> {
    let mut found = Vec::new();
    for guide in guides()?.into_iter().filter(|g| !g.ends_with("architecture.md")) {
        for (n, line) in read(&guide)?.lines().enumerate() {
            let lower = line.to_lowercase();
            for word in PLANNING.iter().filter(|w| lower.contains(*w)) {
                found.push(format!("{}:{}: \"{word}\": {line}", guide.display(), n + 1));
            }
        }
    }
    ensure(found.is_empty(), || format!("planning words in the guides:\n{}", found.join("\n")))
}

/// A runnable example: where it is, and its text.
struct Example {
    guide: PathBuf,
    line: usize,
    script: String,
}

fn examples() -> Result<Vec<Example>> {
    let mut found = Vec::new();
    for guide in guides()? {
        let text = read(&guide)?;
        let mut open: Option<(usize, String)> = None;
        for (event, range) in Parser::new(&text).into_offset_iter() {
            match event {
                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) if info.as_ref() == RUNNABLE => {
                    open = Some((text[..range.start].lines().count() + 1, String::new()));
                }
                Event::Text(t) => {
                    if let Some((_, script)) = open.as_mut() {
                        script.push_str(&t);
                    }
                }
                Event::End(TagEnd::CodeBlock) => {
                    if let Some((line, script)) = open.take() {
                        found.push(Example { guide: guide.clone(), line, script });
                    }
                }
                _ => {}
            }
        }
    }
    Ok(found)
}

/// The flags whose value is a time, and the most an example may run.
const TIMES: &[&str] = &["--duration", "-T", "-d", "--pause"];
/// The flags whose value is a count, and the most an example may ask.
const COUNTS: &[(&str, u64)] = &[
    ("--rows", 20_000),
    ("--measurements", 5_000),
    ("--scale", 1),
    ("-s", 1),
    ("--max_rows", 10_000),
    ("--num-records", 10_000),
    ("--repeat", 200),
    ("--max-queries", 200),
    ("--max_queries", 200),
    ("--iterations", 200),
    ("--runs", 2),
];

/// The example as the test runs it: durations cut to 2 s (a warm-up to
/// 1 s, stages to 1 s each) and counts to the caps above, so that the
/// guides can show realistic runs and the suite stays quick.
fn capped(script: &str) -> String {
    script.lines().map(capped_line).collect::<Vec<_>>().join("\n")
}

fn capped_line(line: &str) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let flag = if i > 0 { words[i - 1] } else { "" };
        let value = if TIMES.contains(&flag) {
            "2s".to_string()
        } else if flag == "--warmup" && word.ends_with(|c: char| c.is_ascii_alphabetic()) {
            "1s".to_string()
        } else if flag == "--stages" || flag == "--rate-stages" {
            let stage = |s: &str| s.split_once(':').map_or(s.to_string(), |(_, n)| format!("1s:{n}"));
            word.split(',').map(stage).collect::<Vec<_>>().join(",")
        } else if let Some((_, cap)) = COUNTS.iter().find(|(f, _)| *f == flag) {
            match dbload::cli::values::count::<u64>(word) {
                Ok(n) if n > *cap => cap.to_string(),
                _ => word.to_string(),
            }
        } else {
            word.to_string()
        };
        out.push(value);
    }
    out.join(" ")
}

fn examples_run(ctx: &Ctx) -> Result<()> {
    let examples = examples()?;
    ensure(examples.len() >= 8, || format!("only {} runnable examples found", examples.len()))?;
    // A database of its own: the examples name tables as users do
    // (measurement, cpu), which other tests' tables never collide with.
    let db = format!("docs_examples_{}", std::process::id());
    ctx.query(&format!("drop database if exists {db}"))?;
    ctx.query(&format!("create database {db}"))?;
    let url = ctx.url.replacen("/postgres?", &format!("/{db}?"), 1);
    let bin = Path::new(env!("CARGO_BIN_EXE_dbload")).parent().context("the binary's directory")?;
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    // The HTTP and k6 guides' API: the HTTP tests' server.
    let api = crate::http::Server::start(false)?;
    let mut failed = Vec::new();
    for example in &examples {
        let dir = tempfile::tempdir()?;
        let script = capped(&example.script);
        let out = std::process::Command::new("sh")
            .args(["-e", "-c", &script])
            .current_dir(dir.path())
            .env("DATABASE_URL", &url)
            .env("API_URL", &api.url)
            .env("PATH", &path)
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .output()?;
        if !out.status.success() {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let tail: Vec<&str> = stdout.lines().rev().take(20).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let (guide, line, status) = (example.guide.display(), example.line, out.status);
            failed.push(format!(
                "{guide}:{line}: {status}\n{script}\nstderr: {stderr}\nstdout: ...\n{}",
                tail.join("\n")
            ));
        }
    }
    ctx.query(&format!("drop database {db} with (force)"))?;
    ensure(failed.is_empty(), || format!("examples that fail:\n{}", failed.join("\n\n")))
}
