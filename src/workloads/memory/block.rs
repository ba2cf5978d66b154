//! `memory.block`: sysbench 1.0.20's memory test.
//!
//! One event is one pass over a block of `block_size` bytes in native
//! words: volatile stores (write) or loads (read), in order (seq) or at
//! random word offsets (rnd). Like sysbench, the buffer is a single block:
//! shared by all threads (scope global) or one per thread (local). With
//! small blocks this measures the cache and the per-event cost, not DRAM;
//! `memory.stream` measures DRAM bandwidth.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::bail;

use crate::engine::params::format_size;
use crate::engine::{
    Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params, TrialContext,
    TrialOutput, Workload,
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
    /// sysbench memory's usual table: an operation per row, a block size
    /// per column.
    fn pivot(&self) -> Option<(&'static str, &'static str)> {
        Some(("oper", "block_size"))
    }
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
        MemoryBlockParams::specs()
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = MemoryBlockParams::from_set(p);
        let block_size = p.block_size as usize;
        let threads = p.threads as usize;
        let scope_local = p.scope == Scope::Local;
        let buffers = if scope_local { threads } else { 1 };
        let needed = (block_size as u64).saturating_mul(buffers as u64);
        if env.memory_bytes > 0 && needed > env.memory_bytes / 2 {
            let largest = prev_power_of_two(env.memory_bytes / 2 / buffers as u64);
            bail!(
                "memory.block: {buffers} block(s) of {} need more than half of this host's memory; the largest block_size allowed here is {}",
                format_size(block_size as u64),
                format_size(largest)
            );
        }
        // As sysbench: each thread does its own share of total_size.
        let total_size = p.total_size;
        let events_per_thread = total_size / block_size as u64 / threads as u64;
        if total_size > 0 && events_per_thread == 0 {
            bail!(
                "memory.block: total_size={} gives no block to each of {threads} threads; use 0 (no limit) or at least {}",
                format_size(total_size),
                format_size(block_size as u64 * threads as u64)
            );
        }
        Ok(Box::new(BlockCase {
            block_size,
            write: p.oper == Oper::Write,
            random: p.access == Access::Rnd,
            scope_local,
            buffers: Vec::new(),
            limits: EventLimits {
                accounting: match p.accounting {
                    AccountingChoice::Lean => Accounting::Lean,
                    AccountingChoice::Sysbench => Accounting::Sysbench,
                },
                threads,
                time: params::trial_time(p.time),
                max_events: 0,
                events_per_thread,
            },
        }))
    }
}

crate::param_choice! {
    /// `scope`: one buffer shared by the threads, or one each.
    pub enum Scope {
        Global = "global",
        Local = "local",
    }
}

crate::param_choice! {
    /// `oper`: what is done to each block.
    pub enum Oper {
        Write = "write",
        Read = "read",
    }
}

crate::param_choice! {
    /// `access`: the order of the blocks.
    pub enum Access {
        Seq = "seq",
        Rnd = "rnd",
    }
}

crate::param_choice! {
    /// `accounting`: how events are counted (sysbench's way or the lean
    /// one).
    pub enum AccountingChoice {
        Sysbench = "sysbench",
        Lean = "lean",
    }
}

crate::workload_params! {
    /// The parameters of `memory.block`.
    pub struct MemoryBlockParams {
        block_size: u64 = ParamSpec {
            name: "block_size",
            role: ParamRole::Other,
            help: "bytes per event, a power of two (sysbench's --memory-block-size)",
            kind: ParamKind::Size {
                min: WORD as u64,
                max: 1 << 32,
                power_of_two: true,
            },
            default: "1K",
        },
        total_size: u64 = ParamSpec {
            name: "total_size",
            role: ParamRole::Other,
            help: "stop after this many bytes in total; 0 = no limit (sysbench's --memory-total-size)",
            kind: ParamKind::Size {
                min: 0,
                max: 1 << 60,
                power_of_two: false,
            },
            default: "100G",
        },
        scope: Scope = ParamSpec {
            name: "scope",
            role: ParamRole::Other,
            help: "one block shared by all threads, or one per thread (--memory-scope)",
            kind: ParamKind::Choice(Scope::NAMES),
            default: "global",
        },
        oper: Oper = ParamSpec {
            name: "oper",
            role: ParamRole::Other,
            help: "store or load each word (--memory-oper)",
            kind: ParamKind::Choice(Oper::NAMES),
            default: "write",
        },
        access: Access = ParamSpec {
            name: "access",
            role: ParamRole::Other,
            help: "words in order or at random offsets (--memory-access-mode)",
            kind: ParamKind::Choice(Access::NAMES),
            default: "seq",
        },
        accounting: AccountingChoice = ParamSpec {
            name: "accounting",
            role: ParamRole::Other,
            help: "per-event bookkeeping: `sysbench` does what sysbench 1.0.20 does around each event (spinlocked timer, shared log histogram) so MiB/s agree with it; `lean` only times the event, closer to the memory's own speed",
            kind: ParamKind::Choice(AccountingChoice::NAMES),
            default: "sysbench",
        },
        threads: u64 = params::threads("1"),
        time: f64 = params::time("10"),
    }
}

struct BlockCase {
    block_size: usize,
    write: bool,
    random: bool,
    scope_local: bool,
    buffers: Vec<AlignedBlock>,
    limits: EventLimits,
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
        let (write, random) = (self.write, self.random);
        let buffers = &self.buffers;
        let totals = run_events(&self.limits, &ctx.cancel, |thread| {
            let words = buffers[thread % buffers.len()].words();
            let mut rng = Xoroshiro128Plus::seeded(thread as u64 + 1);
            move || match (write, random) {
                (true, false) => seq_write(words),
                (false, false) => seq_read(words),
                (true, true) => rnd_write(words, &mut rng),
                (false, true) => rnd_read(words, &mut rng),
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

// The four event kinds. Each word is accessed once with a relaxed atomic
// load or store: like sysbench's ck_pr_load_64 / ck_pr_store_64 this is one
// plain native-word move that the compiler may neither merge, vectorise
// nor drop, and it keeps the concurrent accesses of scope=global defined.

#[inline(always)]
fn seq_write(words: &[AtomicUsize]) {
    let n = words.len();
    for (i, word) in words.iter().enumerate() {
        word.store(n - i, Ordering::Relaxed);
    }
}

#[inline(always)]
fn seq_read(words: &[AtomicUsize]) {
    for word in words {
        word.load(Ordering::Relaxed);
    }
}

#[inline(always)]
fn rnd_write(words: &[AtomicUsize], rng: &mut Xoroshiro128Plus) {
    let n = words.len() as u64;
    for i in 0..words.len() {
        let offset = rng.below(n) as usize;
        words[offset].store(i, Ordering::Relaxed);
    }
}

#[inline(always)]
fn rnd_read(words: &[AtomicUsize], rng: &mut Xoroshiro128Plus) {
    let n = words.len() as u64;
    for _ in 0..words.len() {
        let offset = rng.below(n) as usize;
        words[offset].load(Ordering::Relaxed);
    }
}

/// The largest power of two not above `n` (at least one word).
fn prev_power_of_two(n: u64) -> u64 {
    if n < WORD as u64 {
        WORD as u64
    } else {
        1 << (63 - n.leading_zeros())
    }
}

/// A zeroed, page-aligned block of native words that threads may read and
/// write at once (racing word writes are the point of scope=global, as in
/// sysbench).
struct AlignedBlock {
    ptr: *mut AtomicUsize,
    len: usize,
    layout: Layout,
}

// SAFETY: the block is only ever accessed through `&[AtomicUsize]`.
unsafe impl Send for AlignedBlock {}
unsafe impl Sync for AlignedBlock {}

impl AlignedBlock {
    fn new(bytes: usize) -> anyhow::Result<Self> {
        let layout = Layout::from_size_align(bytes, PAGE.max(WORD))?;
        // SAFETY: the layout has a non-zero size (block_size >= 8).
        let ptr = unsafe { alloc_zeroed(layout) } as *mut AtomicUsize;
        if ptr.is_null() {
            bail!("could not allocate a memory block of {bytes} bytes");
        }
        Ok(AlignedBlock {
            ptr,
            len: bytes / WORD,
            layout,
        })
    }

    /// The block as words.
    fn words(&self) -> &[AtomicUsize] {
        // SAFETY: `ptr` points to `len` zero-initialised, aligned words
        // (zero is a valid AtomicUsize) that live as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for AlignedBlock {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr as *mut u8, self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(block: &AlignedBlock) -> Vec<usize> {
        block
            .words()
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect()
    }

    #[test]
    fn sequential_write_fills_every_word() {
        let block = AlignedBlock::new(1024).unwrap();
        seq_write(block.words());
        let words = values(&block);
        assert_eq!(words.len(), 128);
        assert_eq!(words[0], 128);
        assert_eq!(words[127], 1);
        assert_eq!(block.ptr as usize % PAGE, 0);
    }

    #[test]
    fn random_write_stays_inside_the_block() {
        // Random writes over the first 64 words must never touch the words
        // after them.
        let block = AlignedBlock::new(1024).unwrap();
        let mut rng = Xoroshiro128Plus::seeded(3);
        for _ in 0..100 {
            rnd_write(&block.words()[..64], &mut rng);
        }
        let words = values(&block);
        assert!(words[64..].iter().all(|&w| w == 0));
        assert!(words[..64].iter().filter(|&&w| w != 0).count() > 32);
    }

    #[test]
    fn powers_of_two_round_down() {
        assert_eq!(prev_power_of_two(1000), 512);
        assert_eq!(prev_power_of_two(1024), 1024);
        assert_eq!(prev_power_of_two(3), 8);
    }
}
