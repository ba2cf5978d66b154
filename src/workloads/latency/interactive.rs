//! `latency.interactive`: Interbench's idea. A simulated interactive task
//! (audio, video, X or gaming, as Interbench defines them; see
//! [`interactive_tasks`](super::interactive_tasks)) runs for `time` seconds
//! while a background load keeps the machine busy, and is scored on how
//! well it kept its deadlines: the share of deadlines met, the share of
//! its desired CPU it got, and its wake-up latency (mean, p99, max).

use std::time::Duration;

use super::interactive_tasks::{self, Host, Task};
use super::loads::{self, LoadPlan, PreparedLoad};
use super::sleep_clock;
use crate::engine::{
    CancelToken, Cancelled, Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec,
    Params, TrialContext, TrialOutput, Workload,
};

/// The `latency.interactive` workload.
pub struct Interactive;

crate::workload_params! {
    /// The parameters of `latency.interactive` before the load's.
    pub struct InteractiveParams {
        task: Task = ParamSpec {
            name: "task",
            role: ParamRole::Other,
            help: "audio (2.5 ms of CPU every 50 ms), video (40% of every 1/60 s), x (0 to 100% of CPU in 1 ms steps), gaming (all the CPU it can get, 100 ms frames)",
            kind: ParamKind::Choice(Task::NAMES),
            default: "audio",
        },
        time: f64 = ParamSpec {
            name: "time",
            role: ParamRole::TrialTime,
            help: "how long the task runs in one trial (X's ramp takes about 10 s; Interbench runs 30 s)",
            kind: ParamKind::Seconds {
                min: 0.1,
                max: 86_400.0,
            },
            default: "10",
        },
    }
}

impl Workload for Interactive {
    fn id(&self) -> &'static str {
        "latency.interactive"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "Interbench's simulated audio, video, X and gaming tasks under a background load: deadlines met, desired CPU obtained, latency"
    }
    fn params(&self) -> Vec<ParamSpec> {
        let mut params = InteractiveParams::specs();
        params.extend(loads::params());
        params
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let plan = LoadPlan::from_params(self.id(), p, env)?;
        let p = InteractiveParams::from_set(p);
        Ok(Box::new(InteractiveCase {
            task: p.task,
            time: Duration::from_secs_f64(p.time),
            plan,
            load: None,
        }))
    }

    /// The background load it measures under runs on every CPU.
    fn cpus_used(&self, _params: &crate::engine::ParamSet) -> Option<usize> {
        None
    }
}

struct InteractiveCase {
    task: Task,
    time: Duration,
    plan: LoadPlan,
    load: Option<PreparedLoad>,
}

/// CPU-burning steps between two looks at the thread's CPU clock (a few
/// µs, so a burn overshoots its share by no more than that).
const BURN_STEPS: u32 = 2_000;

/// The machine as the task sees it: real clocks, a CPU-time burn, absolute
/// sleeps.
struct RealHost<'a> {
    end: u64,
    cancel: &'a CancelToken,
}

impl Host for RealHost<'_> {
    fn now(&mut self) -> u64 {
        sleep_clock::monotonic_ns()
    }
    fn burn(&mut self, ns: u64) {
        let start = sleep_clock::thread_cpu_ns();
        let mut x = 1u64;
        while sleep_clock::thread_cpu_ns().saturating_sub(start) < ns {
            for _ in 0..BURN_STEPS {
                x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
            }
            // A frame can take long under load: let Ctrl-C through.
            if self.cancel.is_cancelled() {
                return;
            }
        }
    }
    fn sleep_until(&mut self, deadline: u64) {
        sleep_clock::sleep_until_ns(deadline);
    }
    fn stopped(&mut self) -> bool {
        self.cancel.is_cancelled() || sleep_clock::monotonic_ns() >= self.end
    }
}

impl Case for InteractiveCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.load = Some(self.plan.prepare("latency.interactive")?);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let prepared = self.load.as_ref().expect("prepare ran");
        let load = prepared.start_and_settle(&ctx.cancel)?;
        let (task, time, cancel) = (self.task, self.time, &ctx.cancel);
        let tally = std::thread::scope(|s| {
            std::thread::Builder::new()
                .name("sledge-task".into())
                .spawn_scoped(s, move || {
                    // Interbench's task is woken by a real-time thread with
                    // no timer slack; sleeping itself, it must have none.
                    crate::sys::timer_slack::set_timer_slack_ns(1);
                    let mut host = RealHost {
                        end: sleep_clock::monotonic_ns() + time.as_nanos() as u64,
                        cancel,
                    };
                    interactive_tasks::run(task, &mut host)
                })
                .map(|handle| handle.join())
        });
        if ctx.cancel.is_cancelled() {
            drop(load);
            return Err(Cancelled.into());
        }
        load.stop()?;
        let tally = tally
            .map_err(|e| anyhow::anyhow!("starting the task thread: {e}"))?
            .map_err(|_| anyhow::anyhow!("the task thread panicked"))?;
        const MS: f64 = 1e6;
        let mut metrics = Vec::new();
        if self.task.has_deadlines() {
            metrics.push(Metric::higher(
                "deadlines_met",
                "%",
                tally.deadlines_met_pct(),
            ));
        }
        metrics.extend([
            Metric::higher("desired_cpu", "%", tally.desired_cpu_pct()),
            Metric::lower("latency_mean", "ms", tally.mean_latency() / MS),
            Metric::lower(
                "latency_p99",
                "ms",
                tally.latency.value_at_quantile(0.99) as f64 / MS,
            ),
            Metric::lower("latency_max", "ms", tally.max_latency as f64 / MS),
        ]);
        Ok(TrialOutput {
            metrics,
            latency_ns: Some(tally.latency),
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        match self.load.as_mut() {
            Some(load) => load.remove(),
            None => Ok(()),
        }
    }
}
