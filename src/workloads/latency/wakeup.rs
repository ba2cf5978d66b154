//! `latency.wakeup`: cyclictest's measurement. N threads each sleep to
//! absolute deadlines every `interval` µs with
//! `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`; a wake-up's latency
//! is the time it read on waking minus the deadline. A deadline that has
//! already passed on waking is skipped, as cyclictest does, so one long
//! stall is one long sample, not a burst of catch-up wake-ups.
//!
//! As in `cyclictest -m -t N -i I -l L` (with `-d 0`), each thread makes
//! `loops` wake-ups; `policy=fifo` is its `-p PRIO`. Threads are not
//! pinned (cyclictest without `-a`). Like cyclictest, sledge holds
//! `/dev/cpu_dma_latency` at 0 µs during a trial (`pm_qos=false` is its
//! `--default-system`) and leaves the timer slack at the kernel's
//! default, which for `policy=other` adds up to 50 µs to every wake-up, in
//! both tools. cyclictest's `-m` locks all of its memory; sledge does not
//! lock its whole process (which would pin every other workload's
//! buffers), but a measuring thread touches nothing new between a
//! deadline and its clock read, and the engine's warm-up trial has
//! faulted in everything it touches afterwards.

use anyhow::bail;
use hdrhistogram::Histogram;

use super::loads::{self, LoadPlan, PreparedLoad};
use super::realtime::{DmaLatency, Policy};
use super::sleep_clock;
use crate::engine::{
    Cancelled, Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params,
    TrialContext, TrialOutput, Workload,
};
use crate::stats::latency_histogram;
use crate::workloads::common::params;

/// The `latency.wakeup` workload.
pub struct Wakeup;

crate::param_choice! {
    /// `policy`'s choices: the timer threads' scheduling class.
    pub enum SchedPolicy {
        Other = "other",
        Fifo = "fifo",
    }
}

crate::workload_params! {
    /// The parameters of `latency.wakeup` before the load's.
    pub struct WakeupParams {
        threads: u64 = ParamSpec {
            name: "threads",
            role: ParamRole::CpuCount,
            help: "timer threads (cyclictest -t; `all`: one per CPU of the run)",
            kind: ParamKind::Threads {
                max: params::MAX_THREADS,
            },
            default: "all",
        },
        interval: u64 = ParamSpec {
            name: "interval",
            role: ParamRole::Other,
            help: "µs between a thread's deadlines (cyclictest -i)",
            kind: ParamKind::Int {
                min: 1,
                max: 1_000_000,
            },
            default: "1000",
        },
        distance: u64 = ParamSpec {
            name: "distance",
            role: ParamRole::Other,
            help: "µs added to the interval of each further thread (cyclictest -d; its default is 500, sledge's 0: every thread at `interval`)",
            kind: ParamKind::Int {
                min: 0,
                max: 1_000_000,
            },
            default: "0",
        },
        loops: u64 = ParamSpec {
            name: "loops",
            role: ParamRole::Other,
            help: "wake-ups per thread in one trial (cyclictest -l)",
            kind: ParamKind::Int {
                min: 1,
                max: 1_000_000_000,
            },
            default: "1000",
        },
        policy: SchedPolicy = ParamSpec {
            name: "policy",
            role: ParamRole::Other,
            help: "other: SCHED_OTHER; fifo: SCHED_FIFO at `priority` (cyclictest -p), which needs root or CAP_SYS_NICE: refused with the reason otherwise",
            kind: ParamKind::Choice(SchedPolicy::NAMES),
            default: "other",
        },
        priority: u64 = ParamSpec {
            name: "priority",
            role: ParamRole::Other,
            help: "SCHED_FIFO priority, 1 to 99, for policy=fifo (0 with policy=other)",
            kind: ParamKind::Int { min: 0, max: 99 },
            default: "0",
        },
        pm_qos: bool = ParamSpec {
            name: "pm_qos",
            role: ParamRole::Other,
            help: "hold /dev/cpu_dma_latency at 0 µs during a trial, as cyclictest does (false: cyclictest --default-system)",
            kind: ParamKind::Bool,
            default: "true",
        },
    }
}

impl Workload for Wakeup {
    fn id(&self) -> &'static str {
        "latency.wakeup"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "timer wake-up latency of threads sleeping to absolute deadlines, idle or under a load; compatible with cyclictest"
    }
    fn params(&self) -> Vec<ParamSpec> {
        let mut specs = WakeupParams::specs();
        specs.extend(loads::params());
        specs
    }
    /// `loops` wake-ups `interval` µs apart.
    fn trial_seconds(&self, p: &ParamSet, _env: &CaseEnv) -> Option<f64> {
        let p = WakeupParams::from_set(p);
        Some(p.loops as f64 * p.interval as f64 / 1e6)
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let plan = LoadPlan::from_params(self.id(), p, env)?;
        let p = WakeupParams::from_set(p);
        let priority = p.priority as i32;
        let policy = match (p.policy, priority) {
            (SchedPolicy::Fifo, 0) => bail!(
                "latency.wakeup: policy=fifo needs a priority; allowed is priority=1 to 99 (cyclictest -p)"
            ),
            (SchedPolicy::Fifo, prio) => Policy::Fifo(prio),
            (_, 0) => Policy::Other,
            (_, prio) => bail!(
                "latency.wakeup: priority={prio} applies to policy=fifo only; with policy=other allowed is priority=0"
            ),
        };
        policy.check_allowed()?;
        Ok(Box::new(WakeupCase {
            threads: p.threads as usize,
            interval_ns: p.interval * 1_000,
            distance_ns: p.distance * 1_000,
            loops: p.loops,
            policy,
            pm_qos: p.pm_qos,
            plan,
            load: None,
            warnings: Vec::new(),
        }))
    }

    /// The background load it measures under runs on every CPU.
    fn cpus_used(&self, _params: &crate::engine::ParamSet) -> Option<usize> {
        None
    }
}

struct WakeupCase {
    threads: usize,
    interval_ns: u64,
    distance_ns: u64,
    loops: u64,
    policy: Policy,
    pm_qos: bool,
    plan: LoadPlan,
    load: Option<PreparedLoad>,
    warnings: Vec<String>,
}

/// One thread's wake-ups.
pub struct TimerStats {
    /// Latency of each wake-up, ns.
    pub histogram: Histogram<u64>,
    /// Exact sum of the latencies, ns (the histogram rounds).
    pub sum_ns: u128,
    /// Wake-ups.
    pub count: u64,
    /// Deadlines skipped because the thread woke after them.
    pub skipped: u64,
}

/// cyclictest's timer thread: `loops` absolute sleeps `interval_ns`
/// apart, recording how late each wake-up was. Stops early (returning
/// `None`) when `stop` says so.
pub fn measure_wakeups(
    interval_ns: u64,
    loops: u64,
    mut stop: impl FnMut() -> bool,
) -> Option<TimerStats> {
    let mut stats = TimerStats {
        histogram: latency_histogram(),
        sum_ns: 0,
        count: 0,
        skipped: 0,
    };
    let mut next = sleep_clock::monotonic_ns() + interval_ns;
    for _ in 0..loops {
        if stop() {
            return None;
        }
        sleep_clock::sleep_until_ns(next);
        let now = sleep_clock::monotonic_ns();
        let latency = now.saturating_sub(next);
        let _ = stats.histogram.record(latency.max(1));
        stats.sum_ns += latency as u128;
        stats.count += 1;
        next += interval_ns;
        while next < now {
            next += interval_ns;
            stats.skipped += 1;
        }
    }
    Some(stats)
}

impl Case for WakeupCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.load = Some(self.plan.prepare("latency.wakeup")?);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let _qos = if self.pm_qos {
            match DmaLatency::hold_zero() {
                Ok(held) => Some(held),
                Err(why) => {
                    let warning = format!(
                        "pm_qos: {why}; idle states were not held off, so their exit latency may be counted (cyclictest warns the same)"
                    );
                    if !self.warnings.contains(&warning) {
                        self.warnings.push(warning);
                    }
                    None
                }
            }
        } else {
            None
        };
        let prepared = self.load.as_ref().expect("prepare ran");
        let load = prepared.start_and_settle(&ctx.cancel)?;
        let cancel = &ctx.cancel;
        let results: Vec<anyhow::Result<Option<TimerStats>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.threads)
                .map(|i| {
                    let interval = self.interval_ns + i as u64 * self.distance_ns;
                    let (loops, policy) = (self.loops, self.policy);
                    std::thread::Builder::new()
                        .name(format!("sledge-timer-{i}"))
                        .spawn_scoped(s, move || -> anyhow::Result<Option<TimerStats>> {
                            policy.apply().map_err(|e| {
                                anyhow::anyhow!("setting timer thread {i} to {policy:?}: {e}")
                            })?;
                            Ok(measure_wakeups(interval, loops, || cancel.is_cancelled()))
                        })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h {
                    Ok(h) => h
                        .join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a timer thread panicked"))),
                    Err(e) => Err(anyhow::anyhow!("starting a timer thread: {e}")),
                })
                .collect()
        });
        if ctx.cancel.is_cancelled() {
            drop(load);
            return Err(Cancelled.into());
        }
        load.stop()?;
        let mut merged = latency_histogram();
        let (mut sum, mut count) = (0u128, 0u64);
        for result in results {
            let Some(stats) = result? else {
                return Err(Cancelled.into());
            };
            merged.add(&stats.histogram)?;
            sum += stats.sum_ns;
            count += stats.count;
        }
        Ok(TrialOutput {
            metrics: wakeup_metrics(&merged, sum, count),
            latency_ns: Some(merged),
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        match self.load.as_mut() {
            Some(load) => load.remove(),
            None => Ok(()),
        }
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// p99 first: the tail a latency-sensitive reader cares about, and steady
/// enough from trial to trial to converge (the maximum is one sample).
fn wakeup_metrics(h: &Histogram<u64>, sum_ns: u128, count: u64) -> Vec<Metric> {
    const US: f64 = 1e3;
    let mean = if count == 0 {
        0.0
    } else {
        sum_ns as f64 / count as f64
    };
    vec![
        Metric::lower("latency_p99", "µs", h.value_at_quantile(0.99) as f64 / US),
        Metric::lower("latency_mean", "µs", mean / US),
        Metric::lower(
            "latency_p99_9",
            "µs",
            h.value_at_quantile(0.999) as f64 / US,
        ),
        Metric::lower("latency_max", "µs", h.max() as f64 / US),
        Metric::lower("latency_min", "µs", h.min() as f64 / US),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wakeup_is_counted_and_never_early() {
        let stats = measure_wakeups(500_000, 40, || false).unwrap();
        assert_eq!(stats.count, 40);
        // A wake-up is never before its deadline: no latency below 0, and
        // the exact sum agrees with the histogram's mean.
        assert!(stats.histogram.min() >= 1);
        let mean = stats.sum_ns as f64 / 40.0;
        assert!((stats.histogram.mean() - mean).abs() / mean < 0.01);
    }

    #[test]
    fn deadlines_are_absolute_so_the_trial_lasts_loops_intervals() {
        // 50 wake-ups every 2 ms take 100 ms plus the last latency, never
        // less, whatever each wake-up costs.
        let start = sleep_clock::monotonic_ns();
        let stats = measure_wakeups(2_000_000, 50, || false).unwrap();
        let took = sleep_clock::monotonic_ns() - start;
        assert!(took >= 100_000_000, "{took} ns");
        assert_eq!(stats.count, 50);
    }

    #[test]
    fn a_stop_request_ends_the_thread_early() {
        let mut calls = 0;
        let result = measure_wakeups(1_000_000, 1_000_000, || {
            calls += 1;
            calls > 3
        });
        assert!(result.is_none());
        assert_eq!(calls, 4);
    }

    #[test]
    fn metrics_put_p99_first_and_use_the_exact_mean() {
        let mut h = latency_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1_000).unwrap();
        }
        let m = wakeup_metrics(&h, (1..=1000u128).map(|v| v * 1_000).sum(), 1000);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "latency_p99",
                "latency_mean",
                "latency_p99_9",
                "latency_max",
                "latency_min"
            ]
        );
        assert!((m[0].value - 990.0).abs() < 1.0, "{}", m[0].value);
        assert_eq!(m[1].value, 500.5);
        assert!((m[3].value - 1000.0).abs() < 1.0);
        assert!((m[4].value - 1.0).abs() < 0.01);
    }
}
