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
use std::time::{Duration, Instant};

use anyhow::anyhow;
use hdrhistogram::Histogram;

use super::rng::Xoroshiro128Plus;
use super::sysbench_accounting::{SharedLogHistogram, SpinTimer};
use crate::engine::{CancelToken, Cancelled};
use crate::stats::latency_histogram;
use crate::sys::workers::run_workers;

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
    /// Stop after this many events in total (0: no limit), like sysbench's
    /// `--events`: one shared counter.
    pub max_events: u64,
    /// Stop each thread after this many events (0: no limit), like
    /// sysbench memory's per-thread share of `--memory-total-size`.
    pub events_per_thread: u64,
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
/// by `make_event(i)` (untimed) until a limit is reached or the user
/// cancels. All threads start together (see `workers`).
pub fn run_events<F, E>(
    limits: &EventLimits,
    cancel: &CancelToken,
    make_event: F,
) -> anyhow::Result<EventTotals>
where
    F: Fn(usize) -> E + Sync,
    E: FnMut(),
{
    let issued = AtomicU64::new(0);
    let shared_histogram =
        (limits.accounting == Accounting::Sysbench).then(SharedLogHistogram::default);
    let run = run_workers(
        limits.threads,
        |thread| (thread, make_event(thread)),
        |(thread, mut event), start| {
            let bounds = Bounds {
                end: start + limits.time,
                max_events: limits.max_events,
                events_per_thread: limits.events_per_thread,
                issued: &issued,
                cancel,
            };
            worker(
                &mut event,
                &bounds,
                shared_histogram.as_ref(),
                thread as u64,
            )
        },
    )?;
    if cancel.is_cancelled() {
        return Err(Cancelled.into());
    }
    let mut events = 0;
    let mut latency_ns = latency_histogram();
    for (count, histogram) in run.results {
        events += count;
        latency_ns
            .add(&histogram)
            .map_err(|e| anyhow!("merging latency histograms: {e:?}"))?;
    }
    Ok(EventTotals {
        events,
        seconds: run.seconds,
        latency_ns,
    })
}

/// The limits one worker checks before each event.
struct Bounds<'a> {
    end: Instant,
    max_events: u64,
    events_per_thread: u64,
    issued: &'a AtomicU64,
    cancel: &'a CancelToken,
}

/// One worker's loop. With `shared` (sysbench accounting) each event is
/// wrapped as sysbench wraps it: its own clock read for the time check, a
/// spinlocked timer at start and stop, and the shared log histogram.
/// Without, the clock read that ends an event also serves the next time
/// check. Either way the cancel flag (one relaxed load) is read before
/// every event, so a cancellation takes effect within one event.
fn worker<E: FnMut()>(
    event: &mut E,
    bounds: &Bounds,
    shared: Option<&SharedLogHistogram>,
    seed: u64,
) -> (u64, Histogram<u64>) {
    let mut histogram = latency_histogram();
    let timer = SpinTimer::default();
    let mut rng = Xoroshiro128Plus::seeded(seed ^ 0x5EED);
    let mut count: u64 = 0;
    let mut now = Instant::now();
    loop {
        if shared.is_some() {
            now = Instant::now();
        }
        // The limit checks, in sysbench's order: time, then events.
        if now >= bounds.end {
            break;
        }
        if bounds.events_per_thread > 0 && count >= bounds.events_per_thread {
            break;
        }
        if bounds.max_events > 0
            && bounds.issued.fetch_add(1, Ordering::Relaxed) >= bounds.max_events
        {
            break;
        }
        if bounds.cancel.is_cancelled() {
            break;
        }
        let ns = match shared {
            Some(shared) => {
                let started = timer.start();
                event();
                let ns = timer.stop(started);
                shared.update(ns as f64 / 1e6, &mut rng);
                ns
            }
            None => {
                let started = Instant::now();
                event();
                now = Instant::now();
                now.duration_since(started).as_nanos() as u64
            }
        };
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
            events_per_thread: 0,
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
            events_per_thread: 0,
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
            events_per_thread: 0,
        };
        let err = run_events(&limits, &cancel, |_| || {}).unwrap_err();
        assert!(err.is::<Cancelled>());
    }

    #[test]
    fn a_cancellation_mid_trial_ends_it_within_an_event() {
        let cancel = CancelToken::new();
        let limits = EventLimits {
            accounting: Accounting::Sysbench,
            threads: 2,
            time: Duration::from_secs(60),
            max_events: 0,
            events_per_thread: 0,
        };
        let started = Instant::now();
        let result = std::thread::scope(|s| {
            let canceller = cancel.clone();
            s.spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                canceller.cancel();
            });
            run_events(&limits, &cancel, |_| {
                || std::thread::sleep(Duration::from_millis(1))
            })
        });
        assert!(result.unwrap_err().is::<Cancelled>());
        // Far below the 60 s time limit: the loop saw the flag.
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn per_thread_event_quotas_are_exact() {
        let limits = EventLimits {
            accounting: Accounting::Lean,
            threads: 3,
            time: Duration::from_secs(30),
            max_events: 0,
            events_per_thread: 7,
        };
        let totals = run_events(&limits, &CancelToken::new(), |_| || {}).unwrap();
        assert_eq!(totals.events, 21);
    }
}
