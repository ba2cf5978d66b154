//! `memory.latency`: nanoseconds per load of a dependent random pointer
//! chase, over a working set from 16 KiB to 1 GiB.
//!
//! Sweeping `size` (16K,32K,...,1G) shows the cache levels as steps: the
//! time per load sits at the L1 latency while the set fits in L1, then
//! rises to L2's, L3's and finally DRAM's. The chase ([`super::chase`]) is
//! one random cycle through 64-byte lines, so prefetchers cannot help.
//! One trial chases for `time` seconds on one thread pinned to the run's
//! first CPU and divides the elapsed time by the loads.
//!
//! By default the set is backed by transparent huge pages where the kernel
//! offers them (`madvise`), so that beyond the L2 TLB's reach the figure is
//! the memory's latency rather than that of page walks; `hugepages=false`
//! shows what a program on 4 KiB pages sees.
//!
//! `numa=remote` places the set on another node than the thread's, which
//! gives the remote latency; on a host with one node there is nothing
//! remote, and the case says so and measures local.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};

use super::chase::{self, LINE};
use super::numa;
use crate::engine::{
    Cancelled, Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params,
    TrialContext, TrialOutput, Workload,
};
use crate::sys::affinity::set_affinity;
use crate::sys::anon_map::{AnonMap, Sharing};
use crate::workloads::common::params;

/// Smallest working set: 16 KiB, inside any L1.
const MIN_SIZE: u64 = 16 << 10;
/// Largest: 16 GiB; the sweep stops at 1 GiB.
const MAX_SIZE: u64 = 16 << 30;
/// Loads between looks at the clock: at DRAM latency about 2 ms.
const LOADS_PER_CHECK: u64 = 1 << 14;
/// Huge page size used for alignment (x86-64 and most ARM kernels).
const HUGE_PAGE: usize = 2 << 20;

/// The `memory.latency` workload.
pub struct MemoryLatency;

impl Workload for MemoryLatency {
    fn id(&self) -> &'static str {
        "memory.latency"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "load-to-use latency of a random pointer chase; sweep size to see L1, L2, L3 and DRAM"
    }
    fn params(&self) -> Vec<ParamSpec> {
        MemoryLatencyParams::specs()
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = MemoryLatencyParams::from_set(p);
        let size = p.size;
        if env.memory_bytes > 0 && size > env.memory_bytes / 2 {
            bail!(
                "memory.latency: a working set of {size} B is more than half of this host's memory ({} B); use a smaller size",
                env.memory_bytes
            );
        }
        crate::workloads::common::address_space::check("memory.latency", size, "size")?;
        let cpu = env.cpus.first().copied();
        let mut warnings = Vec::new();
        let mut memory_node = None;
        if p.numa == Numa::Remote {
            let nodes = numa::nodes();
            let home = cpu.and_then(|c| nodes.iter().find(|(_, cpus)| cpus.contains(&c)));
            let other = home.and_then(|(h, _)| nodes.iter().map(|(n, _)| *n).find(|n| n != h));
            match other {
                Some(node) => memory_node = Some(node),
                None => warnings.push(format!(
                    "this host has {} NUMA node(s) to run on: there is no remote memory, so this case measured local latency",
                    nodes.len().max(1)
                )),
            }
        }
        Ok(Box::new(LatencyCase {
            size: size as usize,
            hugepages: p.hugepages,
            time: params::trial_time(p.time),
            memory_node,
            cpu,
            buffer: None,
            start: 0,
            warnings,
        }))
    }
}

crate::param_choice! {
    /// `numa`: the memory's node, the CPU's own or another.
    pub enum Numa {
        Local = "local",
        Remote = "remote",
    }
}

crate::workload_params! {
    /// The parameters of `memory.latency`.
    pub struct MemoryLatencyParams {
        size: u64 = ParamSpec {
            name: "size",
            role: ParamRole::Other,
            help: "working set, a power of two (sweep e.g. 16K,256K,4M,64M,1G)",
            kind: ParamKind::Size {
                min: MIN_SIZE,
                max: MAX_SIZE,
                power_of_two: true,
            },
            default: "256M",
        },
        numa: Numa = ParamSpec {
            name: "numa",
            role: ParamRole::Other,
            help: "memory on the thread's own node or on another one",
            kind: ParamKind::Choice(Numa::NAMES),
            default: "local",
        },
        hugepages: bool = ParamSpec {
            name: "hugepages",
            role: ParamRole::Other,
            help: "ask for transparent huge pages so TLB misses do not add to the latency",
            kind: ParamKind::Bool,
            default: "true",
        },
        time: f64 = params::time("1"),
    }
}

struct LatencyCase {
    size: usize,
    hugepages: bool,
    time: Duration,
    memory_node: Option<u32>,
    cpu: Option<usize>,
    buffer: Option<AnonMap>,
    /// Where the chase resumes: the address the last trial ended on.
    start: usize,
    warnings: Vec<String>,
}

impl LatencyCase {
    /// Runs `work` on a thread pinned to the case's CPU (the engine's own
    /// thread keeps its affinity).
    fn pinned<T: Send>(
        &self,
        work: impl FnOnce() -> anyhow::Result<T> + Send,
    ) -> anyhow::Result<T> {
        let cpu = self.cpu;
        std::thread::scope(|s| {
            s.spawn(move || {
                if let Some(cpu) = cpu {
                    set_affinity(&[cpu])?;
                }
                work()
            })
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the chase thread panicked")))
        })
    }
}

impl Case for LatencyCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        let mapping = AnonMap::new(self.size, HUGE_PAGE, Sharing::Private)
            .map_err(|e| anyhow!("could not map {} bytes for the working set: {e}", self.size))?;
        if self.hugepages {
            mapping.advise_hugepages();
        }
        if let Some(node) = self.memory_node {
            // SAFETY: the range is the mapping just made, not yet touched.
            unsafe { numa::bind_to_node(mapping.ptr(), mapping.len(), node) }
                .map_err(|e| anyhow!("binding the working set to NUMA node {node}: {e}"))?;
        }
        let lines = self.size / LINE;
        let next = chase::single_cycle(lines, 0x5eed);
        let addr = mapping.ptr() as usize;
        let len = mapping.len();
        // Written by the pinned thread, so that a local set is local.
        let start = self.pinned(move || {
            // SAFETY: the mapping is `len` bytes, readable and writable,
            // and only this thread touches it now.
            let bytes = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) };
            Ok(chase::link(&mut bytes[..lines * LINE], &next) as usize)
        })?;
        self.start = start;
        self.buffer = Some(mapping);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let time = self.time;
        let cancel = ctx.cancel.clone();
        let start = self.start;
        let (loads, seconds, end) = self.pinned(move || {
            let mut p = start as *const usize;
            let began = Instant::now();
            let deadline = began + time;
            let mut loads = 0u64;
            loop {
                // SAFETY: `p` is a line of the chase built in `prepare`,
                // whose mapping lives until `cleanup`.
                p = unsafe { chase::chase(p, LOADS_PER_CHECK) };
                loads += LOADS_PER_CHECK;
                if Instant::now() >= deadline || cancel.is_cancelled() {
                    break;
                }
            }
            Ok((loads, began.elapsed().as_secs_f64(), p as usize))
        })?;
        if ctx.cancel.is_cancelled() {
            return Err(Cancelled.into());
        }
        self.start = end;
        Ok(TrialOutput {
            metrics: vec![Metric::lower(
                "ns_per_load",
                "ns",
                seconds * 1e9 / loads as f64,
            )],
            latency_ns: None,
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.buffer = None;
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}
