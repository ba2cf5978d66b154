//! The per-event bookkeeping of sysbench 1.0.20, reproduced so that
//! events/s agree with sysbench when events are short.
//!
//! sysbench wraps every event in `sb_event_start` / `sb_event_stop`: a
//! timer guarded by a spinlock (taken twice per event), a clock read for
//! each, and an update of a shared latency histogram (a natural log, a
//! random choice among 128 intermediate slot arrays and an atomic
//! increment). For a 1 KiB `memory` event that bookkeeping costs about three
//! times the event itself (measured with `perf record` on this project's
//! reference machine: 36% of sysbench's time in `sb_histogram_update`, 36%
//! in `sb_event_stop`), so a loop without it reports ~1.7x sysbench's MiB/s.
//! A sysbench-compatible figure must include the same work; the `lean`
//! accounting of `memory.block` leaves it out for those who want the
//! memory's own speed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use super::rng::Xoroshiro128Plus;

/// sysbench's histogram: 1024 log-scaled buckets over 1 µs .. 100 s,
/// 128 intermediate slot arrays (sb_histogram.c).
const BUCKETS: usize = 1024;
const SLOTS: usize = 128;
const RANGE_MIN_MS: f64 = 0.001;
const RANGE_MAX_MS: f64 = 100_000.0;

/// The shared latency histogram sysbench updates once per event.
pub struct SharedLogHistogram {
    counts: Box<[AtomicU64]>,
    range_deduct: f64,
    range_mult: f64,
}

impl Default for SharedLogHistogram {
    fn default() -> Self {
        let range_deduct = RANGE_MIN_MS.ln();
        SharedLogHistogram {
            counts: (0..BUCKETS * SLOTS).map(|_| AtomicU64::new(0)).collect(),
            range_deduct,
            range_mult: (BUCKETS - 1) as f64 / (RANGE_MAX_MS.ln() - range_deduct),
        }
    }
}

impl SharedLogHistogram {
    /// Counts one event of `ms` milliseconds, as `sb_histogram_update`.
    #[inline]
    pub fn update(&self, ms: f64, rng: &mut Xoroshiro128Plus) {
        let slot = (rng.next_u64() % SLOTS as u64) as usize;
        let bucket = ((ms.ln() - self.range_deduct) * self.range_mult + 0.5).floor();
        let bucket = if bucket < 0.0 {
            0
        } else {
            (bucket as usize).min(BUCKETS - 1)
        };
        self.counts[slot * BUCKETS + bucket].fetch_add(1, Ordering::Relaxed);
    }

    /// Events counted so far.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }
}

/// A per-thread event timer guarded by a spinlock, as `sb_timer_t`.
#[derive(Default)]
pub struct SpinTimer {
    lock: AtomicBool,
    events: AtomicU64,
    sum_ns: AtomicU64,
}

impl SpinTimer {
    #[inline]
    fn lock(&self) {
        while self.lock.swap(true, Ordering::Acquire) {
            std::hint::spin_loop();
        }
    }

    #[inline]
    fn unlock(&self) {
        self.lock.store(false, Ordering::Release);
    }

    /// `sb_timer_start`: lock, read the clock, unlock.
    #[inline]
    pub fn start(&self) -> Instant {
        self.lock();
        let now = Instant::now();
        self.unlock();
        now
    }

    /// `sb_timer_stop`: lock, read the clock, account, unlock; returns the
    /// event's duration in nanoseconds.
    #[inline]
    pub fn stop(&self, started: Instant) -> u64 {
        self.lock();
        let ns = started.elapsed().as_nanos() as u64;
        self.events.fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
        self.unlock();
        ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_every_update_in_range() {
        let h = SharedLogHistogram::default();
        let mut rng = Xoroshiro128Plus::seeded(1);
        for ms in [0.0000001, 0.001, 1.0, 1e9] {
            h.update(ms, &mut rng);
        }
        assert_eq!(h.total(), 4);
    }

    #[test]
    fn timer_measures_and_counts() {
        let t = SpinTimer::default();
        let started = t.start();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let ns = t.stop(started);
        assert!(ns >= 2_000_000);
        assert_eq!(t.events.load(Ordering::Relaxed), 1);
    }
}
