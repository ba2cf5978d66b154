//! The load generator: configuration, the threads, the merged report.
//!
//! Closed loop (wrk, ab, siege): `connections` connections each send their
//! next request when the previous response arrived. Open loop (wrk2,
//! httperf): requests are due on a schedule and latency counts from when a
//! request was due, so a stalled server shows in the percentiles instead of
//! silently slowing the load (coordinated omission); latency from when the
//! request was actually sent is kept beside it. Each thread owns its
//! connections and its histograms; they are merged once at the end.

use std::net::TcpStream as StdTcpStream;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use serde::Serialize;

use super::tally::{ErrorCounts, LatencySummary, Tally};
use super::url::Target;
use super::worker::{Pacing, WorkerPlan, run_worker};
use crate::engine::{CancelToken, Cancelled, affinity};

/// How long the check before a run waits for the server to accept.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// File descriptors kept free beyond one per connection.
const SPARE_FDS: u64 = 64;

/// An open-loop request rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    /// Requests per second over all connections.
    Total(f64),
    /// Requests per second per connection (httperf's clients).
    PerConnection(f64),
}

/// What a load run does.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// The URLs, requested in turn; they share one host and port.
    pub targets: Vec<Target>,
    /// Concurrent connections (clients).
    pub connections: usize,
    /// Generator threads; each owns a share of the connections.
    pub threads: usize,
    /// Keep connections open between requests (otherwise one per request).
    pub keep_alive: bool,
    /// Closed loop only: think time, uniformly random up to this.
    pub think: Duration,
    /// Open loop when set.
    pub rate: Option<Rate>,
    /// A request without a complete response by then is a timeout error.
    pub timeout: Option<Duration>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Stop after this many requests.
    pub requests: Option<u64>,
    /// Pin thread `i` to `cpus[i % len]`.
    pub cpus: Option<Vec<usize>>,
}

impl LoadConfig {
    /// A closed-loop configuration with wrk's defaults for everything else.
    pub fn closed(targets: Vec<Target>, connections: usize) -> Self {
        LoadConfig {
            targets,
            connections,
            threads: 1,
            keep_alive: true,
            think: Duration::ZERO,
            rate: None,
            timeout: None,
            duration: None,
            requests: None,
            cpus: None,
        }
    }

    /// Checks that the settings make sense together (a usage error if not).
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.targets.is_empty() {
            bail!("no URL given");
        }
        if self.connections == 0 {
            bail!("the number of connections must be at least 1");
        }
        if self.threads == 0 || self.threads > self.connections {
            bail!(
                "threads must be from 1 to the number of connections ({}); got {}",
                self.connections,
                self.threads
            );
        }
        if self.duration.is_none() && self.requests.is_none() {
            bail!("give a duration or a number of requests");
        }
        if let Some(Rate::Total(r) | Rate::PerConnection(r)) = self.rate
            && !(r.is_finite() && r > 0.0)
        {
            bail!("the rate must be a positive number of requests per second; got {r}");
        }
        if self.rate.is_some() && !self.think.is_zero() {
            bail!("think time is for the closed loop; an open loop sets a rate instead");
        }
        Ok(())
    }

    fn pacing(&self) -> Pacing {
        match self.rate {
            None => Pacing::Closed { think: self.think },
            Some(rate) => {
                let per_connection = match rate {
                    Rate::Total(r) => r / self.connections as f64,
                    Rate::PerConnection(r) => r,
                };
                Pacing::Open {
                    interval: Duration::from_secs_f64(1.0 / per_connection),
                }
            }
        }
    }

    /// The total requested rate, requests per second, for an open loop.
    pub fn requested_rate(&self) -> Option<f64> {
        self.rate.map(|rate| match rate {
            Rate::Total(r) => r,
            Rate::PerConnection(r) => r * self.connections as f64,
        })
    }
}

/// The outcome of a load run. Also the `--json` shape of `sledge http`.
#[derive(Debug, Serialize)]
pub struct LoadReport {
    /// `closed` or `open` loop.
    pub mode: &'static str,
    /// Concurrent connections.
    pub connections: usize,
    /// Generator threads.
    pub threads: usize,
    /// Whether connections were kept open between requests.
    pub keep_alive: bool,
    /// Wall time from the start until the last thread stopped, s.
    pub seconds: f64,
    /// Requests started (whether or not they got a response).
    pub sent: u64,
    /// Complete responses, whatever their status.
    pub responses: u64,
    /// Bytes received, response heads included.
    pub bytes: u64,
    /// Complete responses per second.
    pub requests_per_sec: f64,
    /// Bytes received per second.
    pub bytes_per_sec: f64,
    /// Open loop: the rate asked for, requests/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_rate: Option<f64>,
    /// Requests started per second.
    pub achieved_rate: f64,
    /// Latency: from when a request was due (open loop) or sent (closed).
    pub latency: LatencySummary,
    /// Open loop: latency from when each request was actually sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_from_send: Option<LatencySummary>,
    /// Time to establish a connection.
    pub connect: LatencySummary,
    /// Failed requests and error statuses, by kind.
    pub errors: ErrorCounts,
    /// Open loop: requests sent more than one interval after they were due.
    pub late: u64,
    /// Open loop: requests dropped because they were older than the timeout
    /// before they could be sent.
    pub dropped: u64,
    /// The merged counters and histograms, for callers that store them.
    #[serde(skip)]
    pub tally: Tally,
}

/// Runs the load described by `config` until its duration or request count
/// is reached, or `cancel` is set (then `Err(Cancelled)`).
pub fn run(config: &LoadConfig, cancel: &CancelToken) -> anyhow::Result<LoadReport> {
    config.validate()?;
    super::limits::ensure_open_files(config.connections as u64 + SPARE_FDS)?;
    probe(&config.targets[0])?;
    let pacing = config.pacing();
    let threads = config.threads;
    let barrier = Arc::new(Barrier::new(threads + 1));
    let start_cell: OnceLock<Instant> = OnceLock::new();
    let results = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        let mut first = 0;
        for t in 0..threads {
            let connections =
                config.connections / threads + usize::from(t < config.connections % threads);
            let quota = config
                .requests
                .map(|n| n / threads as u64 + u64::from((t as u64) < n % threads as u64));
            let (barrier, start_cell) = (barrier.clone(), &start_cell);
            let cpu = config.cpus.as_ref().map(|c| c[t % c.len()]);
            let first_connection = first;
            first += connections;
            handles.push(scope.spawn(move || {
                if let Some(cpu) = cpu {
                    affinity::set_affinity(&[cpu])?;
                }
                barrier.wait();
                let start = *start_cell.get().expect("set before the barrier opens");
                let plan = WorkerPlan {
                    targets: &config.targets,
                    connections,
                    first_connection,
                    total_connections: config.connections,
                    keep_alive: config.keep_alive,
                    pacing,
                    timeout: config.timeout,
                    quota,
                    start,
                    end: config.duration.map(|d| start + d),
                    cancel,
                    seed: 0x5EED + t as u64,
                };
                run_worker(&plan).context("generator thread")
            }));
        }
        let start = Instant::now();
        start_cell.set(start).expect("set once");
        barrier.wait();
        let results = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow!("a generator thread panicked"))?
            })
            .collect::<anyhow::Result<Vec<_>>>();
        results.map(|r| (start, r))
    });
    let (start, results) = results?;
    if cancel.is_cancelled() {
        return Err(Cancelled.into());
    }
    let mut tally = Tally::default();
    let mut last = start;
    for (t, finished) in &results {
        tally.merge(t);
        last = last.max(*finished);
    }
    let seconds = (last - start).as_secs_f64().max(1e-9);
    let open = config.rate.is_some();
    Ok(LoadReport {
        mode: if open { "open" } else { "closed" },
        connections: config.connections,
        threads,
        keep_alive: config.keep_alive,
        seconds,
        sent: tally.sent,
        responses: tally.responses,
        bytes: tally.bytes,
        requests_per_sec: tally.responses as f64 / seconds,
        bytes_per_sec: tally.bytes as f64 / seconds,
        requested_rate: config.requested_rate(),
        achieved_rate: tally.sent as f64 / seconds,
        latency: LatencySummary::of(&tally.latency),
        latency_from_send: open.then(|| LatencySummary::of(&tally.latency_sent)),
        connect: LatencySummary::of(&tally.connect),
        errors: tally.errors,
        late: tally.late,
        dropped: tally.dropped,
        tally,
    })
}

/// One blocking connect before the run, so that a wrong port or a dead
/// server is one clear error instead of a run full of refusals.
fn probe(target: &Target) -> anyhow::Result<()> {
    StdTcpStream::connect_timeout(&target.addr, PROBE_TIMEOUT)
        .map(drop)
        .with_context(|| format!("cannot connect to {} ({})", target.url, target.addr))
}
