//! The event loop of the sysbench-compatible workloads.
//!
//! sysbench's driver runs N threads; each repeatedly checks the time and
//! event limits, takes a timestamp, executes one event, takes another and
//! records the event's latency. Its events/s figure therefore includes that
//! per-event bookkeeping, which matters when an event is short (a 1 KiB
//! memory block takes tens of nanoseconds). This loop does the same work
//! per event (a limit check, two clock reads, a histogram update) so that
//! the numbers agree with sysbench's; see `bench/cpu.sh`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use hdrhistogram::Histogram;

use super::rng::Xoroshiro128Plus;
use super::sysbench_accounting::{SharedLogHistogram, SpinTimer};
use crate::engine::{CancelToken, Cancelled};

/// Latency histograms record nanoseconds from 1 ns to one hour with three
/// significant digits, the resolution wrk and HdrHistogram's docs use.
pub const LATENCY_MAX_NS: u64 = 3_600_000_000_000;
/// Significant digits of latency histograms.
pub const LATENCY_SIGFIG: u8 = 3;

/// A fresh latency histogram with the common bounds, so that every
/// histogram of a case can be merged.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_MAX_NS, LATENCY_SIGFIG)
        .expect("constant histogram bounds are valid")
}

/// How much bookkeeping surrounds each event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accounting {
    /// What sysbench 1.0.20 does per event (see `sysbench_accounting`), so
    /// that rates agree with sysbench even for very short events.
    Sysbench,
    /// Only a limit check, two clock reads and the latency record.
    Lean,
}

/// Limits of one run of the loop.
#[derive(Debug, Clone)]
pub struct EventLimits {
    /// Per-event bookkeeping.
    pub accounting: Accounting,
    /// Worker threads.
    pub threads: usize,
    /// Stop starting events after this long.
    pub time: Duration,
    /// Stop after this many events in total (0: no limit).
    pub max_events: u64,
}

/// What one run of the loop measured.
#[derive(Debug)]
pub struct EventTotals {
    /// Events executed by all threads.
    pub events: u64,
    /// Wall time from the common start until the last thread stopped.
    pub seconds: f64,
    /// Per-event latency, nanoseconds, all threads merged.
    pub latency_ns: Histogram<u64>,
}

impl EventTotals {
    /// Events per second of wall time.
    pub fn events_per_sec(&self) -> f64 {
        self.events as f64 / self.seconds
    }
}

/// Runs `limits.threads` threads; thread `i` calls the event function made
/// by `make_event(i)` until a limit is reached or the user cancels. All
/// threads start together behind a barrier; the clock starts as the
/// barrier opens.
pub fn run_events<F, E>(
    limits: &EventLimits,
    cancel: &CancelToken,
    make_event: F,
) -> anyhow::Result<EventTotals>
where
    F: Fn(usize) -> E + Sync,
    E: FnMut(),
{
    let barrier = Arc::new(Barrier::new(limits.threads + 1));
    let issued = AtomicU64::new(0);
    let shared_histogram =
        (limits.accounting == Accounting::Sysbench).then(SharedLogHistogram::default);
    // The common start is taken just before the barrier opens, and every
    // worker's deadline counts from it, so the total time covers all the
    // work and a worker that woke late does not run past the others.
    let start = OnceLock::new();
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..limits.threads)
            .map(|thread| {
                let barrier = barrier.clone();
                let issued = &issued;
                let make_event = &make_event;
                let start = &start;
                let shared_histogram = shared_histogram.as_ref();
                scope.spawn(move || {
                    let mut event = make_event(thread);
                    barrier.wait();
                    let end = *start.get().expect("set before the barrier opens") + limits.time;
                    match shared_histogram {
                        Some(shared) => sysbench_worker(
                            &mut event,
                            end,
                            limits.max_events,
                            issued,
                            cancel,
                            shared,
                            thread as u64,
                        ),
                        None => worker(&mut event, end, limits.max_events, issued, cancel),
                    }
                })
            })
            .collect();
        start.get_or_init(Instant::now);
        barrier.wait();
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    let seconds = start.get().map_or(0.0, |s| s.elapsed().as_secs_f64());
    if cancel.is_cancelled() {
        return Err(Cancelled.into());
    }
    let mut events = 0;
    let mut latency_ns = latency_histogram();
    for result in results {
        let (count, histogram) = result.map_err(|_| anyhow!("a worker thread panicked"))?;
        events += count;
        latency_ns
            .add(&histogram)
            .map_err(|e| anyhow!("merging latency histograms: {e:?}"))?;
    }
    Ok(EventTotals {
        events,
        seconds,
        latency_ns,
    })
}

/// How many events pass between two looks at the cancel flag; the flag is
/// an atomic load, cheap, but it need not be read for every 20 ns event.
const CANCEL_CHECK_EVERY: u64 = 64;

fn worker<E: FnMut()>(
    event: &mut E,
    end: Instant,
    max_events: u64,
    issued: &AtomicU64,
    cancel: &CancelToken,
) -> (u64, Histogram<u64>) {
    let mut histogram = latency_histogram();
    let mut count: u64 = 0;
    let mut now = Instant::now();
    loop {
        // The limit checks: time (the clock read that ended the previous
        // event), then events.
        if now >= end {
            break;
        }
        if max_events > 0 && issued.fetch_add(1, Ordering::Relaxed) >= max_events {
            break;
        }
        if count % CANCEL_CHECK_EVERY == 0 && cancel.is_cancelled() {
            break;
        }
        let started = Instant::now();
        event();
        now = Instant::now();
        let ns = now.duration_since(started).as_nanos() as u64;
        histogram.saturating_record(ns.max(1));
        count += 1;
    }
    (count, histogram)
}

/// The same loop with sysbench's bookkeeping around each event: a
/// spinlocked timer read at start and stop, and the shared log histogram.
#[allow(clippy::too_many_arguments)]
fn sysbench_worker<E: FnMut()>(
    event: &mut E,
    end: Instant,
    max_events: u64,
    issued: &AtomicU64,
    cancel: &CancelToken,
    shared: &SharedLogHistogram,
    seed: u64,
) -> (u64, Histogram<u64>) {
    let mut histogram = latency_histogram();
    let timer = SpinTimer::default();
    let mut rng = Xoroshiro128Plus::seeded(seed ^ 0x5EED);
    let mut count: u64 = 0;
    loop {
        if Instant::now() >= end {
            break;
        }
        if max_events > 0 && issued.fetch_add(1, Ordering::Relaxed) >= max_events {
            break;
        }
        if count % CANCEL_CHECK_EVERY == 0 && cancel.is_cancelled() {
            break;
        }
        let started = timer.start();
        event();
        let ns = timer.stop(started);
        shared.update(ns as f64 / 1e6, &mut rng);
        histogram.saturating_record(ns.max(1));
        count += 1;
    }
    (count, histogram)
}

/// Latency metrics in microseconds: min, avg, 95th percentile, max (the
/// figures sysbench prints, in ms there; µs reads better for events that
/// take nanoseconds to milliseconds).
pub fn latency_metrics(histogram: &Histogram<u64>) -> Vec<crate::engine::Metric> {
    use crate::engine::Metric;
    const NS_PER_US: f64 = 1e3;
    vec![
        Metric::lower("latency_min", "µs", histogram.min() as f64 / NS_PER_US),
        Metric::lower("latency_avg", "µs", histogram.mean() / NS_PER_US),
        Metric::lower(
            "latency_p95",
            "µs",
            histogram.value_at_quantile(0.95) as f64 / NS_PER_US,
        ),
        Metric::lower("latency_max", "µs", histogram.max() as f64 / NS_PER_US),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_limit_is_exact_across_threads() {
        let limits = EventLimits {
            accounting: Accounting::Sysbench,
            threads: 3,
            time: Duration::from_secs(30),
            max_events: 1000,
        };
        let totals = run_events(&limits, &CancelToken::new(), |_| {
            || {
                std::hint::black_box(1 + 1);
            }
        })
        .unwrap();
        assert_eq!(totals.events, 1000);
        assert_eq!(totals.latency_ns.len(), 1000);
    }

    #[test]
    fn the_time_limit_stops_the_loop() {
        let limits = EventLimits {
            accounting: Accounting::Sysbench,
            threads: 2,
            time: Duration::from_millis(100),
            max_events: 0,
        };
        let totals = run_events(&limits, &CancelToken::new(), |_| {
            || std::thread::sleep(Duration::from_millis(1))
        })
        .unwrap();
        assert!(
            totals.seconds >= 0.1 && totals.seconds < 5.0,
            "{}",
            totals.seconds
        );
        assert!(totals.events > 10);
    }

    #[test]
    fn cancellation_ends_the_loop_with_an_error() {
        let cancel = CancelToken::new();
        cancel.cancel();
        let limits = EventLimits {
            accounting: Accounting::Sysbench,
            threads: 1,
            time: Duration::from_secs(30),
            max_events: 0,
        };
        let err = run_events(&limits, &cancel, |_| || {}).unwrap_err();
        assert!(err.is::<Cancelled>());
    }
}
