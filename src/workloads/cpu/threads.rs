//! `cpu.threads`: sysbench 1.0.20's threads test, a scheduler stress.
//!
//! One event takes lock k = (shared counter++) mod `locks`, then `yields`
//! times: lock k, `sched_yield()`, unlock k. With many threads on few locks
//! this measures how fast the scheduler and the futex path hand CPUs over.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::{
    Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params, TrialContext,
    TrialOutput, Workload,
};
use crate::workloads::common::event_loop::{Accounting, EventLimits, latency_metrics, run_events};
use crate::workloads::common::params;
use crate::workloads::common::pthread_mutex::PthreadMutex;

/// The `cpu.threads` workload.
pub struct Threads;

impl Workload for Threads {
    fn id(&self) -> &'static str {
        "cpu.threads"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "lock / sched_yield / unlock loops on shared mutexes; compatible with `sysbench threads`"
    }
    fn params(&self) -> Vec<ParamSpec> {
        ThreadsParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = ThreadsParams::from_set(p);
        Ok(Box::new(ThreadsCase {
            yields: p.yields,
            locks: (0..p.locks).map(|_| PthreadMutex::default()).collect(),
            limits: EventLimits {
                accounting: Accounting::Sysbench,
                threads: p.threads as usize,
                time: params::trial_time(p.time),
                max_events: p.events,
                events_per_thread: 0,
            },
        }))
    }
}

crate::workload_params! {
    /// The parameters of `cpu.threads`.
    pub struct ThreadsParams {
        yields: u64 = ParamSpec {
            name: "yields",
            role: ParamRole::Other,
            help: "lock-yield-unlock rounds per event (sysbench's --thread-yields)",
            kind: ParamKind::Int {
                min: 1,
                max: 1_000_000_000,
            },
            default: "1000",
        },
        locks: u64 = ParamSpec {
            name: "locks",
            role: ParamRole::Other,
            help: "mutexes shared by the threads (sysbench's --thread-locks)",
            kind: ParamKind::Int {
                min: 1,
                max: 1_000_000,
            },
            default: "8",
        },
        threads: u64 = params::threads("1"),
        time: f64 = params::time("10"),
        events: u64 = params::events(),
    }
}

/// Yields between two looks at the cancel flag.
const CANCEL_CHECK_EVERY: u64 = 64;

struct ThreadsCase {
    yields: u64,
    locks: Vec<PthreadMutex>,
    limits: EventLimits,
}

impl Case for ThreadsCase {
    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let next_lock = AtomicU64::new(0);
        let locks = &self.locks;
        let yields = self.yields;
        let cancel = &ctx.cancel;
        let totals = run_events(&self.limits, cancel, |_| {
            let next_lock = &next_lock;
            move || {
                let k = next_lock.fetch_add(1, Ordering::Relaxed) % locks.len() as u64;
                let lock = &locks[k as usize];
                for i in 0..yields {
                    // With many threads one event can take long: look at
                    // the cancel flag now and then.
                    if i % CANCEL_CHECK_EVERY == 0 && cancel.is_cancelled() {
                        return;
                    }
                    let _held = lock.lock();
                    // SAFETY: sched_yield has no preconditions.
                    unsafe { libc::sched_yield() };
                }
            }
        })?;
        let mut metrics = vec![
            Metric::higher("events_per_sec", "events/s", totals.events_per_sec()),
            Metric::higher("events", "events", totals.events as f64),
            Metric::lower("total_time", "s", totals.seconds),
        ];
        metrics.extend(latency_metrics(&totals.latency_ns));
        Ok(TrialOutput {
            metrics,
            latency_ns: Some(totals.latency_ns),
        })
    }
}
