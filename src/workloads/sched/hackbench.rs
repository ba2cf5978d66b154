//! `sched.hackbench`: rt-tests' hackbench, a scheduler and IPC stress.
//!
//! `groups` groups of `fds` senders and `fds` receivers; every sender
//! writes `loops` messages of `datasize` bytes to each receiver of its
//! group over socket pairs or pipes, in processes or threads. A trial is
//! one hackbench run, timed from the moment every task is ready until all
//! have finished, as hackbench times it. The article's "1 core vs 2 cores"
//! is `cpus=1,all` in one run (or `--cpus`).

use anyhow::bail;

use super::hackbench_run::{self, Config, Mode};
use super::hackbench_tasks::Ipc;
use super::worker_processes;
use crate::engine::{
    Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params, TrialContext,
    TrialOutput, Workload,
};
use crate::workloads::common::params::MAX_THREADS;

/// CPU time one message costs, sent and received, for a plan without
/// history: 2 groups × 20 × 20 senders and receivers × 1000 loops (800,000
/// messages over pipes) took 0.36-0.49 s on two vCPUs of an AMD EPYC guest.
const PLAN_MESSAGE_CPU_SECONDS: f64 = 1e-6;

/// The `sched.hackbench` workload.
pub struct Hackbench;

/// Open files kept spare beyond the run's own (the store, /proc reads).
const SPARE_FILES: u64 = 64;

impl Workload for Hackbench {
    fn id(&self) -> &'static str {
        "sched.hackbench"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "groups of senders and receivers passing messages over sockets or pipes, processes or threads; compatible with rt-tests' hackbench"
    }
    fn params(&self) -> Vec<ParamSpec> {
        HackbenchParams::specs()
    }
    /// Every sender of every group sends `loops` messages to each of its
    /// group's receivers, at about [`PLAN_MESSAGE_CPU_SECONDS`] of CPU
    /// each, shared by the `cpus` the tasks may use.
    fn trial_seconds(&self, p: &ParamSet, _env: &CaseEnv) -> Option<f64> {
        let p = HackbenchParams::from_set(p);
        let fds = p.fds;
        let messages = (p.groups * fds * fds * p.loops) as f64;
        Some(messages * PLAN_MESSAGE_CPU_SECONDS / p.cpus.max(1) as f64)
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = HackbenchParams::from_set(p);
        let cpus = p.cpus as usize;
        if cpus > env.cpus.len() {
            bail!(
                "sched.hackbench: cpus={cpus} but the run may use {} CPU(s); allowed is 1 to {} or `all`",
                env.cpus.len(),
                env.cpus.len()
            );
        }
        let config = Config {
            groups: p.groups as usize,
            fds: p.fds as usize,
            loops: p.loops,
            datasize: p.datasize as usize,
            ipc: p.ipc,
            mode: p.mode,
            cpus: (cpus < env.cpus.len()).then(|| env.cpus[..cpus].to_vec()),
        };
        // Limits are checked now, before any task exists.
        worker_processes::check_task_limit(config.tasks(), config.mode == Mode::Process)?;
        crate::sys::fd_limit::ensure_open_files(config.open_files() + SPARE_FILES)?;
        Ok(Box::new(HackbenchCase { config }))
    }

    /// Every group is a set of processes of its own: more than the
    /// parameters count as CPUs.
    fn cpus_used(&self, _params: &crate::engine::ParamSet) -> Option<usize> {
        None
    }
}

crate::workload_params! {
    /// The parameters of `sched.hackbench`.
    pub struct HackbenchParams {
        groups: u64 = ParamSpec {
            name: "groups",
            role: ParamRole::Other,
            help: "groups of senders and receivers (hackbench -g)",
            kind: ParamKind::Int {
                min: 1,
                max: 10_000,
            },
            default: "10",
        },
        fds: u64 = ParamSpec {
            name: "fds",
            role: ParamRole::Other,
            help: "senders and receivers per group (hackbench -f)",
            kind: ParamKind::Int { min: 1, max: 1_000 },
            default: "20",
        },
        loops: u64 = ParamSpec {
            name: "loops",
            role: ParamRole::Other,
            help: "messages each sender sends to each receiver (hackbench -l)",
            kind: ParamKind::Int {
                min: 1,
                max: 1_000_000_000,
            },
            default: "100",
        },
        datasize: u64 = ParamSpec {
            name: "datasize",
            role: ParamRole::Other,
            help: "bytes per message (hackbench -s)",
            kind: ParamKind::Int {
                min: 1,
                max: 1 << 20,
            },
            default: "100",
        },
        ipc: Ipc = ParamSpec {
            name: "ipc",
            role: ParamRole::Other,
            help: "socket: AF_UNIX socket pairs (default); pipe: pipes (hackbench -p)",
            kind: ParamKind::Choice(Ipc::NAMES),
            default: "socket",
        },
        mode: Mode = ParamSpec {
            name: "mode",
            role: ParamRole::Other,
            help: "process: forked processes (default); thread: threads (hackbench -T)",
            kind: ParamKind::Choice(Mode::NAMES),
            default: "process",
        },
        cpus: u64 = ParamSpec {
            name: "cpus",
            role: ParamRole::Other,
            help: "run every task on the first N CPUs of the run (`all`: on all of them); `cpus=1,all` is one core vs all cores",
            kind: ParamKind::Threads { max: MAX_THREADS },
            default: "all",
        },
    }
}

struct HackbenchCase {
    config: Config,
}

impl Case for HackbenchCase {
    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let run = hackbench_run::run(&self.config, &ctx.cancel)?;
        let messages = run.messages(self.config.datasize) as f64;
        Ok(TrialOutput {
            metrics: vec![
                Metric::lower("seconds", "s", run.seconds),
                Metric::higher("messages_per_sec", "msg/s", messages / run.seconds),
            ],
            latency_ns: None,
        })
    }
}
