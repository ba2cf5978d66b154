//! `memory.block`: sysbench 1.0.20's memory test.
//!
//! One event is one pass over a block of `block_size` bytes in native
//! words: volatile stores (write) or loads (read), in order (seq) or at
//! random word offsets (rnd). Like sysbench, the buffer is a single block:
//! shared by all threads (scope global) or one per thread (local). With
//! small blocks this measures the cache and the per-event cost, not DRAM;
//! `memory.stream` measures DRAM bandwidth.

use std::alloc::{Layout, alloc_zeroed, dealloc};

use anyhow::bail;

use crate::engine::{
    Case, CaseEnv, Metric, ParamKind, ParamSet, ParamSpec, TrialContext, TrialOutput, Workload,
};
use crate::workloads::common::event_loop::{Accounting, EventLimits, latency_metrics, run_events};
use crate::workloads::common::params;
use crate::workloads::common::rng::Xoroshiro128Plus;

const WORD: usize = std::mem::size_of::<usize>();
const MIB: f64 = 1024.0 * 1024.0;
/// Buffers are page aligned, as sysbench's `sb_memalign(.., pagesize)`.
const PAGE: usize = 4096;

/// The `memory.block` workload.
pub struct MemoryBlock;

impl Workload for MemoryBlock {
    fn id(&self) -> &'static str {
        "memory.block"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "passes over a memory block in native words; compatible with `sysbench memory`"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "block_size",
                help: "bytes per event, a power of two (sysbench's --memory-block-size)",
                kind: ParamKind::Size {
                    min: WORD as u64,
                    max: 1 << 32,
                    power_of_two: true,
                },
                default: "1K",
            },
            ParamSpec {
                name: "total_size",
                help: "stop after this many bytes in total; 0 = no limit (sysbench's --memory-total-size)",
                kind: ParamKind::Size {
                    min: 0,
                    max: 1 << 60,
                    power_of_two: false,
                },
                default: "100G",
            },
            ParamSpec {
                name: "scope",
                help: "one block shared by all threads, or one per thread (--memory-scope)",
                kind: ParamKind::Choice(&["global", "local"]),
                default: "global",
            },
            ParamSpec {
                name: "oper",
                help: "store or load each word (--memory-oper)",
                kind: ParamKind::Choice(&["write", "read"]),
                default: "write",
            },
            ParamSpec {
                name: "access",
                help: "words in order or at random offsets (--memory-access-mode)",
                kind: ParamKind::Choice(&["seq", "rnd"]),
                default: "seq",
            },
            ParamSpec {
                name: "accounting",
                help: "per-event bookkeeping: `sysbench` does what sysbench 1.0.20 does around each event (spinlocked timer, shared log histogram) so MiB/s agree with it; `lean` only times the event, closer to the memory's own speed",
                kind: ParamKind::Choice(&["sysbench", "lean"]),
                default: "sysbench",
            },
            params::threads("1"),
            params::time("10"),
        ]
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let block_size = p.u64("block_size") as usize;
        let threads = p.u64("threads") as usize;
        let scope_local = p.str("scope") == "local";
        let buffers = if scope_local { threads } else { 1 };
        let needed = (block_size as u64).saturating_mul(buffers as u64);
        if env.memory_bytes > 0 && needed > env.memory_bytes / 2 {
            bail!(
                "memory.block: {buffers} block(s) of {} need {needed} bytes, more than half of this host's memory ({} bytes); use a smaller block_size",
                crate::engine::params::format_size(block_size as u64),
                env.memory_bytes
            );
        }
        let total_size = p.u64("total_size");
        Ok(Box::new(BlockCase {
            block_size,
            write: p.str("oper") == "write",
            random: p.str("access") == "rnd",
            scope_local,
            buffers: Vec::new(),
            limits: EventLimits {
                accounting: if p.str("accounting") == "lean" {
                    Accounting::Lean
                } else {
                    Accounting::Sysbench
                },
                threads,
                time: params::trial_time(p),
                max_events: total_size / block_size as u64,
            },
            unlimited: total_size == 0,
        }))
    }
}

struct BlockCase {
    block_size: usize,
    write: bool,
    random: bool,
    scope_local: bool,
    buffers: Vec<AlignedBlock>,
    limits: EventLimits,
    unlimited: bool,
}

impl Case for BlockCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        let count = if self.scope_local {
            self.limits.threads
        } else {
            1
        };
        self.buffers = (0..count)
            .map(|_| AlignedBlock::new(self.block_size))
            .collect::<anyhow::Result<_>>()?;
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let mut limits = self.limits.clone();
        if self.unlimited {
            limits.max_events = 0;
        }
        let (write, random) = (self.write, self.random);
        let buffers = &self.buffers;
        let totals = run_events(&limits, &ctx.cancel, |thread| {
            let block = &buffers[thread % buffers.len()];
            let words = block.words;
            let base = block.ptr as usize;
            let mut rng = Xoroshiro128Plus::seeded(thread as u64 + 1);
            move || {
                let ptr = base as *mut usize;
                match (write, random) {
                    (true, false) => seq_write(ptr, words),
                    (false, false) => seq_read(ptr, words),
                    (true, true) => rnd_write(ptr, words, &mut rng),
                    (false, true) => rnd_read(ptr, words, &mut rng),
                }
            }
        })?;
        let bytes = totals.events as f64 * self.block_size as f64;
        let mut metrics = vec![
            Metric::higher("mib_per_sec", "MiB/s", bytes / MIB / totals.seconds),
            Metric::higher("ops_per_sec", "ops/s", totals.events_per_sec()),
        ];
        metrics.extend(latency_metrics(&totals.latency_ns));
        Ok(TrialOutput {
            metrics,
            latency_ns: Some(totals.latency_ns),
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.buffers.clear();
        Ok(())
    }
}

// The four event kinds. Volatile accesses keep every load and store, one
// native word at a time, as sysbench's ck_pr_load_64/ck_pr_store_64 do.

#[inline(always)]
fn seq_write(ptr: *mut usize, words: usize) {
    for i in 0..words {
        // SAFETY: i < words, the block's length in words.
        unsafe { ptr.add(i).write_volatile(words - i) };
    }
}

#[inline(always)]
fn seq_read(ptr: *mut usize, words: usize) {
    for i in 0..words {
        // SAFETY: as above.
        unsafe { ptr.add(i).read_volatile() };
    }
}

#[inline(always)]
fn rnd_write(ptr: *mut usize, words: usize, rng: &mut Xoroshiro128Plus) {
    for i in 0..words {
        let offset = rng.below(words as u64) as usize;
        // SAFETY: offset < words.
        unsafe { ptr.add(offset).write_volatile(i) };
    }
}

#[inline(always)]
fn rnd_read(ptr: *mut usize, words: usize, rng: &mut Xoroshiro128Plus) {
    for _ in 0..words {
        let offset = rng.below(words as u64) as usize;
        // SAFETY: offset < words.
        unsafe { ptr.add(offset).read_volatile() };
    }
}

/// A zeroed, page-aligned block that threads may read and write at once
/// (racing word writes are the point of scope=global, as in sysbench).
struct AlignedBlock {
    ptr: *mut u8,
    words: usize,
    layout: Layout,
}

// SAFETY: the block is plain memory; concurrent volatile word accesses are
// what the workload measures and never form references.
unsafe impl Send for AlignedBlock {}
unsafe impl Sync for AlignedBlock {}

impl AlignedBlock {
    fn new(bytes: usize) -> anyhow::Result<Self> {
        let layout = Layout::from_size_align(bytes, PAGE.max(WORD))?;
        // SAFETY: the layout has a non-zero size (block_size >= 8).
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            bail!("could not allocate a memory block of {bytes} bytes");
        }
        Ok(AlignedBlock {
            ptr,
            words: bytes / WORD,
            layout,
        })
    }
}

impl Drop for AlignedBlock {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_write_fills_every_word() {
        let block = AlignedBlock::new(1024).unwrap();
        seq_write(block.ptr as *mut usize, block.words);
        let words = unsafe { std::slice::from_raw_parts(block.ptr as *const usize, block.words) };
        assert_eq!(words.len(), 128);
        assert_eq!(words[0], 128);
        assert_eq!(words[127], 1);
        assert_eq!(block.ptr as usize % PAGE, 0);
    }

    #[test]
    fn random_write_stays_inside_the_block() {
        // A block of 64 words inside a larger, zeroed allocation: random
        // writes must never touch the guard words after it.
        let block = AlignedBlock::new(1024).unwrap();
        let mut rng = Xoroshiro128Plus::seeded(3);
        for _ in 0..100 {
            rnd_write(block.ptr as *mut usize, 64, &mut rng);
        }
        let words = unsafe { std::slice::from_raw_parts(block.ptr as *const usize, block.words) };
        assert!(words[64..].iter().all(|&w| w == 0));
        assert!(words[..64].iter().filter(|&&w| w != 0).count() > 32);
    }
}
