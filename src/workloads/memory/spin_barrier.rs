//! A barrier that spins before it sleeps.
//!
//! STREAM times each kernel from before OpenMP forks its threads to after
//! they join, and OpenMP's threads wait for each other by spinning. A
//! futex-based barrier (`std::sync::Barrier`) adds tens of microseconds of
//! wake-up per kernel in a VM, which shows up with small arrays; this one
//! costs a cache-line round trip. After a while it yields, so that more
//! threads than CPUs still make progress.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Spins before yielding: about 10-50 µs on current CPUs.
const SPINS_BEFORE_YIELD: u32 = 1 << 14;

/// A reusable barrier for a fixed number of threads.
pub struct SpinBarrier {
    threads: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    /// A barrier for `threads` threads (at least one).
    pub fn new(threads: usize) -> Self {
        SpinBarrier {
            threads: threads.max(1),
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
        }
    }

    /// Returns once all threads have called `wait` for this generation.
    pub fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0;
        while self.generation.load(Ordering::Acquire) == generation {
            if spins < SPINS_BEFORE_YIELD {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn no_thread_passes_before_all_arrive() {
        let barrier = SpinBarrier::new(3);
        let counter = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for round in 1..=100u64 {
                        counter.fetch_add(1, Ordering::SeqCst);
                        barrier.wait();
                        assert!(counter.load(Ordering::SeqCst) >= round * 3);
                        barrier.wait();
                    }
                });
            }
        });
        assert_eq!(counter.load(Ordering::SeqCst), 300);
    }
}
