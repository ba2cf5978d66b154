//! Replays the file-server script with N clients and measures it as dbench
//! does: every client loops over the script; payload bytes (what reads
//! returned plus what writes wrote) and per-operation latencies count only
//! for operations that
//! start after the warm-up; throughput is those bytes over the measured
//! window, in MB/s of 10^6 bytes, dbench's unit.
//!
//! Clients are threads (dbench forks processes); each has its own tree or
//! connection, so they share nothing but the system under test.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use hdrhistogram::Histogram;

use super::fileserver_mix::{Op, OpKind};
use crate::engine::{CancelToken, Cancelled, Metric, TrialOutput};
use crate::stats::latency_histogram;
use crate::sys::workers::try_run_workers;
use crate::workloads::common::event_loop::latency_metrics;

/// Carries out operations for one client.
pub trait Executor {
    /// Performs `op` and returns the payload bytes it moved: what a read
    /// returned, what a write wrote, 0 for the others. An error ends the
    /// trial.
    fn execute(&mut self, op: &Op) -> anyhow::Result<u64>;
}

/// How long and how many.
#[derive(Debug, Clone)]
pub struct LoadLimits {
    /// Concurrent clients.
    pub clients: usize,
    /// Time before measuring starts.
    pub warmup: Duration,
    /// Measured time.
    pub time: Duration,
}

/// One client's tallies (operations started after the warm-up).
struct Tally {
    bytes: u64,
    per_kind: Vec<Histogram<u64>>,
}

/// Runs the clients over `script` and returns the trial's metrics.
pub fn run_load<E, F>(
    limits: &LoadLimits,
    cancel: &CancelToken,
    script: &[Op],
    make_client: F,
) -> anyhow::Result<TrialOutput>
where
    F: Fn(usize) -> anyhow::Result<E> + Sync,
    E: Executor,
{
    let failed = AtomicBool::new(false);
    // Clients connect (or make their tree's handle) before the common
    // start; one that cannot aborts the start, so none is left waiting,
    // and its error is the trial's.
    let run = try_run_workers(limits.clients, &make_client, |mut executor, start| {
        let result = replay(&mut executor, script, start, limits, cancel, &failed);
        if result.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        result
    });
    if cancel.is_cancelled() {
        return Err(Cancelled.into());
    }
    let run = run?;
    let mut bytes = 0;
    let mut per_kind: Vec<Histogram<u64>> =
        OpKind::ALL.iter().map(|_| latency_histogram()).collect();
    for tally in run.results {
        let tally = tally?;
        bytes += tally.bytes;
        for (all, mine) in per_kind.iter_mut().zip(&tally.per_kind) {
            all.add(mine)
                .map_err(|e| anyhow!("merging latency histograms: {e:?}"))?;
        }
    }
    // From the end of the warm-up to the last client's end.
    let seconds = (run.seconds - limits.warmup.as_secs_f64()).max(1e-9);
    let mut all = latency_histogram();
    for h in &per_kind {
        all.add(h)
            .map_err(|e| anyhow!("merging latency histograms: {e:?}"))?;
    }
    if all.is_empty() {
        anyhow::bail!("no operation completed after the warm-up; lengthen time");
    }
    let mut metrics = vec![
        Metric::higher("mb_per_sec", "MB/s", bytes as f64 / 1e6 / seconds),
        Metric::higher("ops_per_sec", "ops/s", all.len() as f64 / seconds),
    ];
    metrics.extend(latency_metrics(&all));
    for (kind, h) in OpKind::ALL.iter().zip(&per_kind) {
        if h.is_empty() {
            continue;
        }
        metrics.push(Metric::lower(
            format!("{}_latency_avg", kind.name()),
            "µs",
            h.mean() / 1e3,
        ));
        metrics.push(Metric::lower(
            format!("{}_latency_max", kind.name()),
            "µs",
            h.max() as f64 / 1e3,
        ));
    }
    Ok(TrialOutput {
        metrics,
        latency_ns: Some(all),
    })
}

fn replay<E: Executor>(
    executor: &mut E,
    script: &[Op],
    start: Instant,
    limits: &LoadLimits,
    cancel: &CancelToken,
    failed: &AtomicBool,
) -> anyhow::Result<Tally> {
    let measure_from = start + limits.warmup;
    let end = measure_from + limits.time;
    let mut tally = Tally {
        bytes: 0,
        per_kind: OpKind::ALL.iter().map(|_| latency_histogram()).collect(),
    };
    'outer: loop {
        for op in script {
            let started = Instant::now();
            if started >= end || cancel.is_cancelled() || failed.load(Ordering::Relaxed) {
                break 'outer;
            }
            let moved = executor.execute(op)?;
            if started >= measure_from {
                let ns = started.elapsed().as_nanos() as u64;
                tally.per_kind[op.kind().index()].saturating_record(ns.max(1));
                tally.bytes += moved;
            }
        }
    }
    Ok(tally)
}
