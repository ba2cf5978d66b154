//! `cpu.threads`: sysbench 1.0.20's threads test, a scheduler stress.
//!
//! One event takes lock k = (shared counter++) mod `locks`, then `yields`
//! times: lock k, `sched_yield()`, unlock k. With many threads on few locks
//! this measures how fast the scheduler and the futex path hand CPUs over.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::{
    Case, CaseEnv, Metric, ParamKind, ParamSet, ParamSpec, TrialContext, TrialOutput, Workload,
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
        vec![
            ParamSpec {
                name: "yields",
                help: "lock-yield-unlock rounds per event (sysbench's --thread-yields)",
                kind: ParamKind::Int {
                    min: 1,
                    max: 1_000_000_000,
                },
                default: "1000",
            },
            ParamSpec {
                name: "locks",
                help: "mutexes shared by the threads (sysbench's --thread-locks)",
                kind: ParamKind::Int {
                    min: 1,
                    max: 1_000_000,
                },
                default: "8",
            },
            params::threads("1"),
            params::time("10"),
            params::events(),
        ]
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        Ok(Box::new(ThreadsCase {
            yields: p.u64("yields"),
            locks: (0..p.u64("locks"))
                .map(|_| PthreadMutex::default())
                .collect(),
            limits: EventLimits {
                accounting: Accounting::Sysbench,
                threads: p.u64("threads") as usize,
                time: params::trial_time(p),
                max_events: p.u64("events"),
                events_per_thread: 0,
            },
        }))
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
