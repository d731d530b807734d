//! One `dbload http` run: resolve the endpoint, open one connection per VU
//! (an unreachable target fails here, exit 3, not as a run of errors), then
//! one task per VU through the shared worker loop with the HTTP executor,
//! and merge what the VUs recorded. Measured like every command, by
//! `run::measure`: the loop, the pacer, the progress bar and the cost meter
//! are the same.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use super::measure::{spawn_sharing, Counted, Measurement};
use super::producer::{self, Feed};
use super::sampler::Sampler;
use super::worker;
use super::{cores, interrupt};
use crate::config::http::{BodySource, HttpConfig};
use crate::driver::http::template::{BodyTemplate, Renderer};
use crate::driver::http::{HttpExecutor, HttpOp, HttpTarget};
use crate::op::Source;
use crate::outcome::HttpOutcome;
use crate::stats::buffered::{lock, Buffered};
use crate::stats::http::HttpStats;
use crate::stats::Recorder;
use crate::target::Target;

/// Runs `cfg` until its iterations are done, its duration is over, or Ctrl-C;
/// `observed` (`--observe`), the database behind the API, is sampled while
/// it runs. `gate` (`--instance`) holds the VUs until the instances start
/// together.
pub async fn http(
    cfg: &HttpConfig,
    observed: Option<&Target>,
    cancel: CancellationToken,
    gate: Option<super::Gate>,
) -> Result<HttpOutcome> {
    let named = cfg.request.endpoint.redacted.clone();
    let target = Arc::new(interrupt::setting_up(&cancel, &named, HttpTarget::resolve(cfg.request.clone())).await?);
    // VUs record into figures shared by the VUs of a worker thread (VU
    // `vu` runs on thread `vu % threads`, so they never wait for one
    // another): histograms of their own would weigh ~0.4 MiB per VU.
    let shards = cores::threads().min(cfg.vus as usize);
    let shared: Vec<_> = (0..shards)
        .map(|_| {
            (Arc::new(Mutex::new(Recorder::default())), Arc::new(Mutex::new(HttpStats::new(cfg.request.checks.len()))))
        })
        .collect();
    let shard = |vu: usize| &shared[vu % shards];
    let each = (0..cfg.vus as usize).map(|vu| (target.clone(), shard(vu).1.clone()));
    let opening = cores::open_each(each, |(target, stats), _| HttpExecutor::open(target, stats));
    let executors = interrupt::setting_up(&cancel, &named, opening).await?;

    // Producers start rendering now, and each VU has its first bodies
    // before the clock starts: producers filling every VU's pool at once
    // would otherwise make the first requests late.
    let mut rendered = Vec::new();
    if let BodySource::Template(t) = &cfg.body {
        // One producer per CPU, as many as the VUs could keep busy before
        // (a thread each); --threads bounds only the VUs' threads.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        rendered = Rendered::start(t, (cfg.load.seed, cfg.load.first_worker), &cfg.per_vu, cpus)?;
        for r in &mut rendered {
            r.prime().await;
        }
    }
    let mut rendered = rendered.into_iter();
    let sampler = match observed {
        Some(db) => Some(observe(db, cfg.output.sample_every, &cancel).await?),
        None => None,
    };
    if let Some(gate) = gate {
        gate.pass().await;
    }

    let header = super::measure::header(&named, None, &super::measure::count(cfg.vus, "VU"), &cfg.load);
    let counted = Counted::units(cfg.iterations, "requests", cfg.output.progress).header(header);
    let counted = match sampler {
        Some(sampler) => counted.sampled_by(sampler),
        None => counted,
    };
    let measurement = Measurement::start(&cfg.load, 1, cancel.clone(), counted);
    let plan = measurement.plan();
    let mut tasks = Vec::with_capacity(executors.len());
    for (vu, executor) in executors.into_iter().enumerate() {
        let recorders = vec![Buffered::new(shard(vu).0.clone())];
        let task = match rendered.next() {
            None => {
                let source = ThinkTime::new(Fixed { left: cfg.per_vu[vu] }, cfg.sleep);
                spawn_sharing(vu, worker::run_into(plan.clone(), source, executor, recorders))
            }
            Some(r) => {
                spawn_sharing(vu, worker::run_into(plan.clone(), ThinkTime::new(r, cfg.sleep), executor, recorders))
            }
        };
        tasks.push(task);
    }
    // A VU records what it holds when it ends, panicking or not (the run
    // stops after a panic, and says so): once they all ended, the shared
    // recorders hold everything.
    let (mut figures, _) = measurement.of_tasks(tasks).await;
    let mut stats = HttpStats::new(cfg.request.checks.len());
    for (r, s) in &shared {
        figures.recorders[0].merge(&lock(r));
        stats.merge(lock(s).clone());
    }
    Ok(HttpOutcome { figures, stats, threads: cores::threads() })
}

/// `--observe`: the database behind the API, asked what it runs (an
/// unreachable one fails here, exit 3, before any request), and its
/// sampler's connection opened before the clock starts.
async fn observe(db: &Target, every: Duration, cancel: &CancellationToken) -> Result<Result<Sampler, String>> {
    let named = db.redacted();
    let (_admin, info, _) = interrupt::setting_up(cancel, &named, super::setup::connect(db))
        .await
        .with_context(|| format!("--observe {named}"))?;
    Ok(Sampler::open(db, info.engine, None, every).await)
}

/// The fixed body: the source only counts.
struct Fixed {
    left: u64,
}

impl Source for Fixed {
    type Op = HttpOp;

    async fn next(&mut self) -> Option<HttpOp> {
        self.left = self.left.checked_sub(1)?;
        Some(HttpOp::Fixed)
    }
}

/// Rendered bodies travel from the producer thread in batches, so the
/// channel hand-off costs once per batch, not once per request.
#[derive(Default)]
struct Bodies {
    /// In reverse order: the next body is the last.
    items: Vec<Vec<u8>>,
    /// Rendering failed after these bodies.
    error: Option<String>,
}

/// Bodies a batch holds at most (fewer when they are large).
const BATCH: usize = 32;
/// What the rendered bodies of one batch may weigh, roughly: a VU holds
/// [`producer::POOL`] batches, and there may be thousands of VUs.
const BATCH_BYTES: usize = 8 * 1024;

/// A VU's templated bodies, rendered on a producer thread that it shares
/// with other VUs (one thread per VU would cost each ~0.1 MiB of stack,
/// allocator cache and thread bookkeeping).
struct Rendered {
    feed: Feed<Bodies>,
    ready: Bodies,
    /// Sent bodies, collected to go back for refilling with the next batch.
    spent: Bodies,
}

impl Rendered {
    /// The bodies of VUs `0..per_vu.len()` (`per_vu[vu]` each; their random
    /// streams from the seed and their number after `first_vu`), rendered by
    /// at most `threads` producer threads; VU `vu` on thread `vu % threads`,
    /// from its own renderer (its random stream and iteration count), so the
    /// bodies are the same whichever thread renders them.
    fn start(
        template: &BodyTemplate,
        (seed, first_vu): (u64, u32),
        per_vu: &[u64],
        threads: usize,
    ) -> Result<Vec<Rendered>> {
        let mut probe = Vec::new();
        // The template rendered once at startup; size the batches by it.
        template.renderer(seed, 0).and_then(|mut r| r.render(&mut probe)).context("rendering the body template")?;
        let batch = (BATCH_BYTES / probe.len().max(1)).clamp(1, BATCH);
        let threads = threads.clamp(1, per_vu.len().max(1));
        let mut feeds: Vec<Option<Feed<Bodies>>> = per_vu.iter().map(|_| None).collect();
        for thread in 0..threads {
            let vus: Vec<usize> = (thread..per_vu.len()).step_by(threads).collect();
            // The VUs of a thread share its compiled template.
            let mut renderers: Vec<Renderer> = Vec::with_capacity(vus.len());
            for &vu in &vus {
                let renderer = match renderers.first() {
                    Some(first) => first.for_vu(seed, first_vu + vu as u32),
                    None => template.renderer(seed, first_vu + vu as u32).context("preparing the body template")?,
                };
                renderers.push(renderer);
            }
            let mut left: Vec<u64> = vus.iter().map(|&vu| per_vu[vu]).collect();
            let pools = vus.iter().map(|_| (0..producer::POOL).map(|_| Bodies::default()).collect()).collect();
            let started = producer::spawn_each(pools, move |i, b: &mut Bodies| {
                let n = (batch as u64).min(left[i]) as usize;
                if n == 0 {
                    return false;
                }
                b.items.resize_with(n, Vec::new);
                for j in (0..n).rev() {
                    if let Err(e) = renderers[i].render(&mut b.items[j]) {
                        b.error = Some(format!("--body-template: {e}"));
                        // Keep what rendered; the VU stops after sending it.
                        b.items.drain(..=j);
                        left[i] = 0;
                        return true;
                    }
                }
                left[i] -= n as u64;
                true
            });
            for (vu, feed) in vus.into_iter().zip(started.context("starting a producer thread")?) {
                feeds[vu] = Some(feed);
            }
        }
        let rendered = |feed: Option<_>| Rendered {
            feed: feed.expect("every VU has a thread"),
            ready: Bodies::default(),
            spent: Bodies::default(),
        };
        Ok(feeds.into_iter().map(rendered).collect())
    }

    /// Waits for the first batch of bodies. (A producer that panicked is
    /// found again by the VU's task, which fails the run and names it.)
    async fn prime(&mut self) {
        if self.ready.items.is_empty() {
            if let Ok(Some(first)) = self.feed.try_recv().await {
                self.ready = first;
            }
        }
    }
}

impl Source for Rendered {
    type Op = HttpOp;

    async fn next(&mut self) -> Option<HttpOp> {
        loop {
            if let Some(body) = self.ready.items.pop() {
                return Some(HttpOp::Rendered(body));
            }
            if let Some(e) = self.ready.error.take() {
                return Some(HttpOp::RenderFailed(e));
            }
            let spent = std::mem::replace(&mut self.spent, std::mem::take(&mut self.ready));
            self.feed.give_back(spent);
            self.ready = self.feed.recv().await?;
        }
    }

    fn recycle(&mut self, op: HttpOp) {
        if let HttpOp::Rendered(body) = op {
            self.spent.items.push(body);
        }
    }
}

/// k6's `sleep()` between iterations: the VU pauses before each request
/// but the first. The pause is the user's think time, not the server's, so
/// it happens before the request's intended start and is in no latency.
struct ThinkTime<S> {
    inner: S,
    sleep: Option<Duration>,
    first: bool,
}

impl<S> ThinkTime<S> {
    fn new(inner: S, sleep: Option<Duration>) -> Self {
        ThinkTime { inner, sleep, first: true }
    }
}

impl<S: Source + Send> Source for ThinkTime<S> {
    type Op = S::Op;

    async fn next(&mut self) -> Option<S::Op> {
        match self.sleep {
            Some(d) if !self.first => tokio::time::sleep(d).await,
            _ => self.first = false,
        }
        self.inner.next().await
    }

    fn recycle(&mut self, op: S::Op) {
        self.inner.recycle(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendered_bodies_arrive_in_order_and_are_reused() {
        let t = BodyTemplate::from_source("{{ iteration }}", "t.j2").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let mut src = Rendered::start(&t, (1, 0), &[100], 1).unwrap().remove(0);
            let mut seen = Vec::new();
            while let Some(op) = src.next().await {
                let HttpOp::Rendered(b) = &op else { panic!("{op:?}") };
                seen.push(String::from_utf8(b.clone()).unwrap().parse::<u64>().unwrap());
                src.recycle(op);
            }
            assert_eq!(seen, (0..100).collect::<Vec<_>>());
        });
    }

    /// Templated VUs share a few producer threads (a thread each cost
    /// ~0.1 MiB per VU), and still each get their own bodies, in order.
    #[test]
    fn templated_vus_share_producer_threads_and_keep_their_own_bodies() {
        let t = BodyTemplate::from_source(
            "{{ vu }}-{{ iteration }}-{{ randint(0, 1000000) }}-{{ walk('w', 0, 1) }}",
            "t.j2",
        )
        .unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let mut vus = Rendered::start(&t, (7, 0), &[50; 100], 2).unwrap();
            let mut producers: Vec<&Feed<Bodies>> = Vec::new();
            for r in &vus {
                if !producers.iter().any(|p| p.same_producer(&r.feed)) {
                    producers.push(&r.feed);
                }
            }
            assert_eq!(producers.len(), 2, "100 VUs on 2 threads");
            for (vu, src) in vus.iter_mut().enumerate().rev() {
                let mut own = t.renderer(7, vu as u32).unwrap();
                let mut expected = Vec::new();
                for _ in 0..50 {
                    let op = src.next().await.unwrap();
                    let HttpOp::Rendered(b) = &op else { panic!("{op:?}") };
                    own.render(&mut expected).unwrap();
                    assert_eq!(b, &expected, "VU {vu}");
                    src.recycle(op);
                }
                assert!(src.next().await.is_none());
            }
        });
    }

    #[test]
    fn think_time_pauses_between_requests() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        rt.block_on(async {
            let mut src = ThinkTime::new(Fixed { left: 3 }, Some(Duration::from_millis(50)));
            let t = std::time::Instant::now();
            let mut n = 0;
            while src.next().await.is_some() {
                n += 1;
            }
            assert_eq!(n, 3);
            // Two pauses between three requests, and one before the end is found.
            assert!(t.elapsed() >= Duration::from_millis(100), "{:?}", t.elapsed());
        });
    }
}
