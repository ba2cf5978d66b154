//! `cpu.mutex`: sysbench 1.0.20's mutex test.
//!
//! Every thread runs exactly one event: `locks` times, pick a random mutex
//! of `mutex_num`, spin `loops` empty iterations (a compiler barrier each,
//! so the loop is not optimised away), lock, increment a shared counter,
//! unlock. The metric is the total time until every thread is done.

use std::cell::UnsafeCell;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use anyhow::anyhow;

use crate::engine::{
    Cancelled, Case, CaseEnv, Metric, ParamKind, ParamSet, ParamSpec, TrialContext, TrialOutput,
    Workload,
};
use crate::workloads::common::params;
use crate::workloads::common::pthread_mutex::PthreadMutex;
use crate::workloads::common::rng::Xoroshiro128Plus;

/// The `cpu.mutex` workload.
pub struct Mutex;

impl Workload for Mutex {
    fn id(&self) -> &'static str {
        "cpu.mutex"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "random mutex lock/unlock with busy loops between; compatible with `sysbench mutex`"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "mutex_num",
                help: "mutexes in the array (sysbench's --mutex-num)",
                kind: ParamKind::Int {
                    min: 1,
                    max: 100_000_000,
                },
                default: "4096",
            },
            ParamSpec {
                name: "locks",
                help: "lock operations per thread (sysbench's --mutex-locks)",
                kind: ParamKind::Int {
                    min: 1,
                    max: 1_000_000_000,
                },
                default: "50000",
            },
            ParamSpec {
                name: "loops",
                help: "empty loop iterations before each lock (sysbench's --mutex-loops)",
                kind: ParamKind::Int {
                    min: 0,
                    max: 1_000_000_000,
                },
                default: "10000",
            },
            params::threads("1"),
        ]
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        Ok(Box::new(MutexCase {
            locks_per_thread: p.u64("locks"),
            loops: p.u64("loops"),
            threads: p.u64("threads") as usize,
            state: Arc::new(Shared {
                mutexes: (0..p.u64("mutex_num"))
                    .map(|_| PaddedMutex::default())
                    .collect(),
                counter: UnsafeCell::new(0),
            }),
        }))
    }
}

/// sysbench pads each mutex with 256 bytes so that neighbours do not share
/// a cache line; so do we.
#[repr(C)]
struct PaddedMutex {
    mutex: PthreadMutex,
    _pad: [u8; 256],
}

impl Default for PaddedMutex {
    fn default() -> Self {
        PaddedMutex {
            mutex: PthreadMutex::default(),
            _pad: [0; 256],
        }
    }
}

struct Shared {
    mutexes: Vec<PaddedMutex>,
    /// sysbench's `global_var`: incremented under whichever mutex was
    /// picked, so it is racy by design; only the locking cost matters.
    counter: UnsafeCell<u64>,
}

// SAFETY: the counter is only touched with a mutex held (racy across
// different mutexes by design, as in sysbench; a lost update is harmless
// because nothing reads it for a result).
unsafe impl Sync for Shared {}

struct MutexCase {
    locks_per_thread: u64,
    loops: u64,
    threads: usize,
    state: Arc<Shared>,
}

/// Look at the cancel flag every this many locks.
const CANCEL_CHECK_EVERY: u64 = 256;

impl Case for MutexCase {
    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let barrier = Barrier::new(self.threads + 1);
        let (start, joined) = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.threads)
                .map(|thread| {
                    let state = &self.state;
                    let barrier = &barrier;
                    let (locks, loops) = (self.locks_per_thread, self.loops);
                    let cancel = &ctx.cancel;
                    scope.spawn(move || {
                        let mut rng = Xoroshiro128Plus::seeded(thread as u64 + 1);
                        barrier.wait();
                        let n = state.mutexes.len() as u64;
                        for i in 0..locks {
                            if i % CANCEL_CHECK_EVERY == 0 && cancel.is_cancelled() {
                                return;
                            }
                            let k = rng.below(n) as usize;
                            for _ in 0..loops {
                                compiler_barrier();
                            }
                            let m = &state.mutexes[k].mutex;
                            m.lock();
                            // SAFETY: see `Shared`.
                            unsafe { *state.counter.get() += 1 };
                            m.unlock();
                        }
                    })
                })
                .collect();
            // The clock starts as the barrier opens (the workers are all
            // waiting at it), so the total covers all their work.
            let start = Instant::now();
            barrier.wait();
            let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
            (start, joined)
        });
        let seconds = start.elapsed().as_secs_f64();
        if joined.iter().any(|r| r.is_err()) {
            return Err(anyhow!("a worker thread panicked"));
        }
        ctx.check_cancelled().map_err(|_: Cancelled| Cancelled)?;
        let total_locks = self.locks_per_thread * self.threads as u64;
        Ok(TrialOutput {
            metrics: vec![
                Metric::lower("total_time", "s", seconds),
                Metric::higher("locks_per_sec", "locks/s", total_locks as f64 / seconds),
            ],
            latency_ns: None,
        })
    }
}

/// An empty statement the compiler must assume touches memory, like
/// ConcurrencyKit's `ck_pr_barrier()`: it keeps the spin loop in the binary
/// without adding any instruction to it.
#[inline(always)]
fn compiler_barrier() {
    // SAFETY: an empty asm block does nothing at run time.
    unsafe { std::arch::asm!("", options(nostack, preserves_flags)) };
}
