//! `cpu.mutex`: sysbench 1.0.20's mutex test.
//!
//! Every thread runs exactly one event: `locks` times, pick a random mutex
//! of `mutex_num`, spin `loops` empty iterations (a compiler barrier each,
//! so the loop is not optimised away), lock, increment a shared counter,
//! unlock. The metric is the total time until every thread is done.

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::bail;

use crate::engine::{
    Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params, TrialContext,
    TrialOutput, Workload,
};
use crate::sys::workers::run_workers;
use crate::workloads::common::params;
use crate::workloads::common::pthread_mutex::PthreadMutex;
use crate::workloads::common::rng::Xoroshiro128Plus;

/// What the plan assumes without history: one empty loop iteration (about
/// a cycle at 1-3 GHz) and one uncontended lock and unlock.
const PLAN_LOOP_SECONDS: f64 = 1e-9;
const PLAN_LOCK_SECONDS: f64 = 50e-9;

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
        MutexParams::specs()
    }
    /// Each thread makes `locks` lock operations with `loops` empty
    /// iterations before each, at [`PLAN_LOOP_SECONDS`] an iteration and
    /// [`PLAN_LOCK_SECONDS`] a lock; threads beyond the CPUs wait their
    /// turn.
    fn trial_seconds(&self, p: &ParamSet, env: &CaseEnv) -> Option<f64> {
        let p = MutexParams::from_set(p);
        let per_thread = p.locks as f64 * (p.loops as f64 * PLAN_LOOP_SECONDS + PLAN_LOCK_SECONDS);
        let cpus = env.cpus.len().max(1) as u64;
        Some(per_thread * p.threads.div_ceil(cpus).max(1) as f64)
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = MutexParams::from_set(p);
        let mutex_num = p.mutex_num;
        let bytes = mutex_num.saturating_mul(std::mem::size_of::<PaddedMutex>() as u64);
        if env.memory_bytes > 0 && bytes > env.memory_bytes / 4 {
            bail!(
                "cpu.mutex: mutex_num={mutex_num} needs {bytes} bytes, more than a quarter of this host's memory; allowed here is at most {}",
                env.memory_bytes / 4 / std::mem::size_of::<PaddedMutex>() as u64
            );
        }
        Ok(Box::new(MutexCase {
            locks_per_thread: p.locks,
            loops: p.loops,
            threads: p.threads as usize,
            state: Shared {
                mutexes: (0..mutex_num).map(|_| PaddedMutex::default()).collect(),
                counter: CacheLinePadded(AtomicU64::new(0)),
            },
        }))
    }
}

crate::workload_params! {
    /// The parameters of `cpu.mutex`.
    pub struct MutexParams {
        mutex_num: u64 = ParamSpec {
            name: "mutex_num",
            role: ParamRole::Other,
            help: "mutexes in the array (sysbench's --mutex-num)",
            kind: ParamKind::Int {
                min: 1,
                max: 100_000_000,
            },
            default: "4096",
        },
        locks: u64 = ParamSpec {
            name: "locks",
            role: ParamRole::Other,
            help: "lock operations per thread (sysbench's --mutex-locks)",
            kind: ParamKind::Int {
                min: 1,
                max: 1_000_000_000,
            },
            default: "50000",
        },
        loops: u64 = ParamSpec {
            name: "loops",
            role: ParamRole::Other,
            help: "empty loop iterations before each lock (sysbench's --mutex-loops)",
            kind: ParamKind::Int {
                min: 0,
                max: 1_000_000_000,
            },
            default: "10000",
        },
        threads: u64 = params::threads("1"),
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
    /// picked, so increments under different mutexes may race and lose
    /// updates, by design; only the locking cost matters. A relaxed atomic
    /// load and store keeps that race defined in Rust and compiles to the
    /// same plain load, add and store as sysbench's C. It sits on its own
    /// cache lines (like sysbench's static), so its stores do not evict the
    /// mutex array's pointer that every lock reads.
    counter: CacheLinePadded<AtomicU64>,
}

/// A value alone on its cache lines (128 bytes covers adjacent-line
/// prefetching).
#[repr(align(128))]
struct CacheLinePadded<T>(T);

struct MutexCase {
    locks_per_thread: u64,
    loops: u64,
    threads: usize,
    state: Shared,
}

/// Roughly how many spin iterations pass between two looks at the cancel
/// flag (about a millisecond of spinning).
const SPINS_PER_CANCEL_CHECK: u64 = 1_000_000;

impl Case for MutexCase {
    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let (locks, loops) = (self.locks_per_thread, self.loops);
        let check_every = (SPINS_PER_CANCEL_CHECK / (loops + 1)).max(1);
        let state = &self.state;
        let cancel = &ctx.cancel;
        let run = run_workers(
            self.threads,
            |thread| Xoroshiro128Plus::seeded(thread as u64 + 1),
            |mut rng, _start| {
                let mutexes = state.mutexes.as_slice();
                let n = mutexes.len() as u64;
                for i in 0..locks {
                    if i % check_every == 0 && cancel.is_cancelled() {
                        return;
                    }
                    let k = rng.below(n) as usize;
                    spin(&loops);
                    let _held = mutexes[k].mutex.lock();
                    let v = state.counter.0.load(Ordering::Relaxed);
                    state.counter.0.store(v + 1, Ordering::Relaxed);
                }
            },
        )?;
        ctx.check_cancelled()?;
        let total_locks = locks * self.threads as u64;
        Ok(TrialOutput {
            metrics: vec![
                Metric::lower("total_time", "s", run.seconds),
                Metric::higher("locks_per_sec", "locks/s", total_locks as f64 / run.seconds),
            ],
            latency_ns: None,
        })
    }
}

/// sysbench's busy loop: `for (i = 0; i < req->nloops; i++)
/// ck_pr_barrier();`. The barrier clobbers memory, so the C compiler
/// re-reads the bound from memory on every iteration (an add, a compare
/// with memory and a branch); reading the bound through a volatile load
/// gives the same instructions, and with them the same speed when two
/// threads share a core.
#[inline(always)]
fn spin(loops: &u64) {
    let mut i: u64 = 0;
    // SAFETY: `loops` is a valid reference.
    while i < unsafe { std::ptr::read_volatile(loops) } {
        compiler_barrier();
        i += 1;
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
