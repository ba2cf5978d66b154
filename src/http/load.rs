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
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Serialize;

use super::tally::{ErrorCounts, LatencySummary, Tally};
use super::url::Target;
use super::worker::{Pacing, WorkerPlan, run_worker};
use crate::engine::{CancelToken, Cancelled};
use crate::sys::affinity;
use crate::sys::workers::{StartAt, try_run_workers_at};

/// How long the check before a run waits for the server to accept.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// File descriptors kept free beyond one per connection.
const SPARE_FDS: u64 = 64;
/// The lowest open-loop rate per connection: one request per hour.
pub const MIN_RATE_PER_CONNECTION: f64 = 1.0 / 3600.0;
/// A generator whose threads were busy at least this share of their time
/// may itself have set the rate: it had no time left to send more. (A
/// thread that keeps up naps and waits for most of a run: measured at
/// 30-40% busy against a saturated server on a 2-vCPU guest.)
pub const GENERATOR_BOUND_BUSY: f64 = 0.9;
/// The highest open-loop rate per connection, requests/s.
pub const MAX_RATE_PER_CONNECTION: f64 = 1e9;

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
    /// A request without a complete response by then is a timeout error;
    /// `None`: no timeout (then a duration is required).
    pub timeout: Option<Duration>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Stop after this many requests (or at the duration, whichever comes
    /// first).
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
        let Some(first) = self.targets.first() else {
            bail!("no URL given");
        };
        if let Some(other) = self
            .targets
            .iter()
            .find(|t| t.bodiless_responses != first.bodiless_responses)
        {
            // Each connection's parser is told once how its answers end.
            let (head, not_head) = if first.bodiless_responses {
                (first, other)
            } else {
                (other, first)
            };
            bail!(
                "one load asks all its URLs with one method: {} is asked with HEAD and {} is not",
                head.url,
                not_head.url
            );
        }
        self.validate_settings()
    }

    /// [`LoadConfig::validate`] without the targets, for a configuration
    /// whose URL is known only once its server runs.
    pub fn validate_settings(&self) -> anyhow::Result<()> {
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
        // A request count alone does not end a run against a server that
        // accepts and never answers.
        if self.duration.is_none() && self.timeout.is_none() {
            bail!(
                "give a duration or a per-request timeout, so that a server that never answers cannot hang the run"
            );
        }
        if self.timeout.is_some_and(|t| t.is_zero()) {
            bail!("the timeout must be more than 0 s (no timeout: leave it unset)");
        }
        if self.duration.is_some_and(|d| d.is_zero()) {
            bail!("the duration must be more than 0 s");
        }
        if let Some(cpus) = &self.cpus {
            if cpus.is_empty() {
                bail!("the list of CPUs to pin the generator to is empty");
            }
            // Checked here: setting a CPU beyond the set aborts the process.
            let limit = libc::CPU_SETSIZE as usize;
            if let Some(cpu) = cpus.iter().find(|&&cpu| cpu >= limit) {
                bail!(
                    "cannot pin the generator to CPU {cpu}: CPUs are numbered 0 to {}",
                    limit - 1
                );
            }
        }
        self.interval()?;
        if self.rate.is_some() && !self.think.is_zero() {
            bail!("think time is for the closed loop; an open loop sets a rate instead");
        }
        Ok(())
    }

    /// The open loop's interval between a connection's requests; an error
    /// names the allowed rates.
    fn interval(&self) -> anyhow::Result<Option<Duration>> {
        let Some(rate) = self.rate else {
            return Ok(None);
        };
        let per_connection = match rate {
            Rate::Total(r) => r / self.connections.max(1) as f64,
            Rate::PerConnection(r) => r,
        };
        let interval =
            if (MIN_RATE_PER_CONNECTION..=MAX_RATE_PER_CONNECTION).contains(&per_connection) {
                Duration::try_from_secs_f64(1.0 / per_connection)
                    .ok()
                    .filter(|i| !i.is_zero())
            } else {
                None
            };
        let Some(interval) = interval else {
            let given = match rate {
                Rate::Total(r) => format!(
                    "got {r} requests/s in total over {} connection(s), {per_connection} each",
                    self.connections
                ),
                Rate::PerConnection(r) => format!("got {r}"),
            };
            bail!(
                "the rate per connection must be from {MIN_RATE_PER_CONNECTION:.6} (one request per hour) to {MAX_RATE_PER_CONNECTION:e} requests/s; {given}"
            );
        };
        Ok(Some(interval))
    }

    fn pacing(&self) -> anyhow::Result<Pacing> {
        Ok(match self.interval()? {
            None => Pacing::Closed { think: self.think },
            Some(interval) => Pacing::Open { interval },
        })
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
    /// Requests still waiting for their response when the run ended:
    /// `sent` is `responses` + `errors.without_response()` + this.
    pub unanswered: u64,
    /// Open loop: requests sent more than one interval after they were due.
    pub late: u64,
    /// Open loop: requests dropped because they were older than the timeout
    /// before they could be sent.
    pub dropped: u64,
    /// How busy the generator's threads were, as a share of their running
    /// time (CPU time over wall time); `None` where it cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generator_busy: Option<f64>,
    /// Whether the generator was busy enough ([`GENERATOR_BOUND_BUSY`]) to
    /// have set the rate itself: then the figures describe the generator
    /// as much as the server.
    pub generator_bound: bool,
    /// The merged counters and histograms, for callers that store them.
    #[serde(skip)]
    pub tally: Tally,
}

impl LoadReport {
    /// The report of `tally`, counted over `seconds` by a generator run
    /// with `config`.
    pub fn from_tally(config: &LoadConfig, tally: Tally, seconds: f64) -> LoadReport {
        let seconds = seconds.max(1e-9);
        let open = config.rate.is_some();
        LoadReport {
            mode: if open { "open" } else { "closed" },
            connections: config.connections,
            threads: config.threads,
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
            unanswered: tally.unanswered,
            late: tally.late,
            dropped: tally.dropped,
            generator_busy: tally.busy_share(),
            generator_bound: tally
                .busy_share()
                .is_some_and(|busy| busy >= GENERATOR_BOUND_BUSY),
            tally,
        }
    }
}

/// Runs the load described by `config` until its duration or request count
/// is reached, or `cancel` is set (then `Err(Cancelled)`: a trial cut short
/// is not a trial).
pub fn run(config: &LoadConfig, cancel: &CancelToken) -> anyhow::Result<LoadReport> {
    match run_until_cancelled(config, cancel)? {
        (_, true) => Err(Cancelled.into()),
        (report, false) => Ok(report),
    }
}

/// Like [`run`], but a cancelled run still returns what it measured up to
/// the cancel, with `true`: wrk and ab print their figures after Ctrl-C too.
pub fn run_until_cancelled(
    config: &LoadConfig,
    cancel: &CancelToken,
) -> anyhow::Result<(LoadReport, bool)> {
    run_from(config, None, cancel).map(|(report, cancelled, _)| (report, cancelled))
}

/// Like [`run_until_cancelled`], but the load starts at `start` (or at
/// once if that has passed by the time every thread is ready): the agents
/// of a load from several hosts start together this way. The server is
/// probed and the threads made ready before it, so the start is not late
/// by those. Also returns how late after `start` the load started.
pub fn run_starting_at(
    config: &LoadConfig,
    start: Instant,
    cancel: &CancelToken,
) -> anyhow::Result<(LoadReport, bool, Duration)> {
    run_from(config, Some(start), cancel).map(|(report, cancelled, started)| {
        (report, cancelled, started.saturating_duration_since(start))
    })
}

/// The load, and when it started.
fn run_from(
    config: &LoadConfig,
    start_at: Option<Instant>,
    cancel: &CancelToken,
) -> anyhow::Result<(LoadReport, bool, Instant)> {
    config.validate()?;
    crate::sys::fd_limit::ensure_open_files(config.connections as u64 + SPARE_FDS)?;
    probe(&config.targets[0])?;
    let pacing = config.pacing()?;
    let threads = config.threads;
    // Thread `t`'s share of the connections and of the request count,
    // and the index of its first connection.
    let share = |t: usize| {
        let connections =
            |t: usize| config.connections / threads + usize::from(t < config.connections % threads);
        let quota = config
            .requests
            .map(|n| n / threads as u64 + u64::from((t as u64) < n % threads as u64));
        (
            connections(t),
            quota,
            (0..t).map(connections).sum::<usize>(),
        )
    };
    // Every thread pins itself (when asked) before the common start; one
    // that cannot calls the start off for all (see `sys::workers`). A
    // cancel while waiting for a distant start starts at once, to end.
    let stop_waiting = || cancel.is_cancelled();
    let at = start_at.map(|at| StartAt {
        at,
        stop_waiting: &stop_waiting,
    });
    let ran = try_run_workers_at(
        threads,
        at,
        |t| {
            if let Some(cpus) = &config.cpus {
                let cpu = cpus[t % cpus.len()];
                affinity::set_affinity(&[cpu])
                    .with_context(|| format!("pinning generator thread {t} to CPU {cpu}"))?;
            }
            Ok(t)
        },
        |t, start| {
            let (connections, quota, first_connection) = share(t);
            let plan = WorkerPlan {
                targets: &config.targets,
                connections,
                first_connection,
                thread: t,
                threads,
                keep_alive: config.keep_alive,
                pacing,
                timeout: config.timeout,
                quota,
                start,
                end: config.duration.map(|d| start + d),
                cancel,
                seed: 0x5EED + t as u64,
            };
            run_worker(&plan)
                .map(|(tally, _finished)| tally)
                .context("generator thread")
        },
    )
    .context("cannot run the generator threads")?;
    let tallies = ran
        .results
        .into_iter()
        .collect::<anyhow::Result<Vec<_>>>()?;
    let cancelled = cancel.is_cancelled();
    let mut tally = Tally::default();
    for t in &tallies {
        tally.merge(t);
    }
    let seconds = ran.seconds.max(1e-9);
    let report = LoadReport::from_tally(config, tally, seconds);
    Ok((report, cancelled, ran.start.unwrap_or_else(Instant::now)))
}

/// One blocking connect before the run, so that a wrong port or a dead
/// server is one clear error instead of a run full of refusals.
pub(crate) fn probe(target: &Target) -> anyhow::Result<()> {
    StdTcpStream::connect_timeout(&target.addr, PROBE_TIMEOUT)
        .map(drop)
        .with_context(|| {
            format!(
                "cannot connect to {} ({})",
                crate::secrets::redact(&target.url),
                target.addr
            )
        })
}
