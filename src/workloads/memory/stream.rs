//! `memory.stream`: John McCalpin's STREAM (Copy, Scale, Add, Triad).
//!
//! A trial is one run of STREAM: `ntimes` passes over the four kernels,
//! each kernel timed from before its threads start to after the last one
//! finishes; the first pass is discarded and a kernel's rate is the bytes
//! STREAM counts for it divided by its best time, in MB/s (10⁶ B/s), as
//! STREAM prints "Best Rate MB/s". The engine then repeats such runs until
//! Triad's confidence interval is tight.
//!
//! Threads split each array into contiguous shares as OpenMP's static
//! schedule does; each thread is pinned to its own CPU and writes its
//! share first, so the pages land on its NUMA node (first touch). After
//! every trial each thread checks every element of its share against the
//! values STREAM expects, and a mismatch fails the trial: a bandwidth
//! figure from a kernel that computed the wrong thing is worthless.
//!
//! `copies` runs several independent STREAMs at once, each with its own
//! arrays, as the article ran four STREAM processes side by side; their
//! best rates are summed (what adding up the processes' outputs gives)
//! and averaged per copy.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

use anyhow::{Context, bail};

use super::spin_barrier::SpinBarrier;
use super::stream_kernels::{self, Isa, Kernel, Share};
use crate::engine::params::format_size;
use crate::engine::{
    Cancelled, Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params,
    TrialContext, TrialOutput, Workload,
};
use crate::sys::affinity::set_affinity;
use crate::sys::anon_map::{AnonMap, Sharing};
use crate::sys::workers::try_run_workers;
use crate::workloads::common::address_space;
use crate::workloads::common::params::{self, MAX_THREADS};

/// STREAM's default array size (elements), used when the cache is
/// unknown or small.
pub const STREAM_DEFAULT_ELEMENTS: u64 = 10_000_000;

/// Below this many elements per array the kernels take microseconds and
/// the timer and the thread start dominate: no number is meaningful.
pub const MIN_ELEMENTS: u64 = 10_000;

/// Most elements per array: 2³⁶ doubles (512 GiB) per array.
const MAX_ELEMENTS: u64 = 1 << 36;

/// Most passes: STREAM's values grow 15-fold per pass and a double
/// overflows after about 260 passes, which would defeat validation.
const MAX_NTIMES: u64 = 200;

/// STREAM's rule: each array at least 4 times the sum of the caches.
const CACHE_FACTOR: u64 = 4;

const ELEMENT: u64 = std::mem::size_of::<f64>() as u64;

/// The bandwidth one thread is assumed to reach, bytes a second, for the
/// plan's estimate of a trial where this host has no history of the case.
/// One thread of a 2-vCPU KVM guest moved about 10 GB/s through arrays
/// past the caches on an Intel Xeon host and about 23 GB/s on an AMD EPYC
/// one; the plan takes a figure between.
const PLAN_BYTES_PER_SEC: f64 = 12e9;

/// The `memory.stream` workload.
pub struct MemoryStream;

impl Workload for MemoryStream {
    fn id(&self) -> &'static str {
        "memory.stream"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "STREAM Copy/Scale/Add/Triad memory bandwidth; compatible with STREAM built with gcc -O3 -fopenmp"
    }
    fn params(&self) -> Vec<ParamSpec> {
        MemoryStreamParams::specs()
    }
    /// A trial writes the three arrays (initialisation), makes `ntimes`
    /// passes of ten array sweeps (Copy and Scale read one array and
    /// write one, Add and Triad read two and write one) and reads the
    /// three arrays back (validation): `(6 + 10 · ntimes)` sweeps of an
    /// array per copy, at [`PLAN_BYTES_PER_SEC`] per thread running on a
    /// CPU of its own (more threads than CPUs take turns).
    fn trial_seconds(&self, p: &ParamSet, env: &CaseEnv) -> Option<f64> {
        let p = MemoryStreamParams::from_set(p);
        let elements = match p.array_size {
            0 => auto_elements(env.total_cache_bytes),
            n => n,
        };
        let sweeps = 6 + 10 * p.ntimes;
        let bytes = (elements * ELEMENT * sweeps * p.copies) as f64;
        let cpus = env.cpus.len().max(1) as u64;
        let streams = (p.threads * p.copies).clamp(1, cpus) as f64;
        Some(bytes / (PLAN_BYTES_PER_SEC * streams))
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = MemoryStreamParams::from_set(p);
        let auto = auto_elements(env.total_cache_bytes);
        let elements = match p.array_size {
            0 => auto,
            n if n < MIN_ELEMENTS => bail!(
                "memory.stream: array_size {n} is too small to be meaningful; allowed is 0 (auto: {auto} elements here, 4 × the {} B of cache) or {MIN_ELEMENTS} to {MAX_ELEMENTS} elements",
                env.total_cache_bytes
            ),
            n => n,
        };
        let threads = p.threads as usize;
        let copies = p.copies as usize;
        if elements < (threads as u64) * 1000 {
            bail!(
                "memory.stream: array_size {elements} gives each of {threads} threads under 1000 elements; use at least {} elements",
                threads * 1000
            );
        }
        let bytes = elements * ELEMENT * 3 * copies as u64;
        if env.memory_bytes > 0 && bytes > env.memory_bytes / 2 {
            bail!(
                "memory.stream: {copies} cop(ies) of 3 arrays of {elements} elements need {} of memory, more than half of this host's {}; use a smaller array_size",
                format_size(bytes),
                format_size(env.memory_bytes)
            );
        }
        if p.array_size == 0 {
            auto_fits(
                elements,
                copies as u64,
                env.total_cache_bytes,
                address_space::LIMIT,
            )?;
        }
        address_space::check("memory.stream", bytes, "array_size")?;
        let mut warnings = Vec::new();
        let array_bytes = elements * ELEMENT;
        if env.total_cache_bytes > 0 && array_bytes < CACHE_FACTOR * env.total_cache_bytes {
            warnings.push(format!(
                "each array ({array_bytes} B) is smaller than {CACHE_FACTOR} × the {} B of cache: this measures the caches as much as memory (STREAM's rule)",
                env.total_cache_bytes
            ));
        }
        Ok(Box::new(StreamCase {
            elements: elements as usize,
            ntimes: p.ntimes as u32,
            threads,
            copies,
            isa: Isa::detect(),
            arrays: Vec::new(),
            warnings,
            corrupt: None,
        }))
    }
}

crate::workload_params! {
    /// The parameters of `memory.stream`.
    pub struct MemoryStreamParams {
        array_size: u64 = ParamSpec {
            name: "array_size",
            role: ParamRole::Other,
            help: "elements (doubles) per array, STREAM_ARRAY_SIZE; 0 = 4 × the total cache, at least 10 M",
            kind: ParamKind::Int {
                min: 0,
                max: MAX_ELEMENTS,
            },
            default: "0",
        },
        ntimes: u64 = ParamSpec {
            name: "ntimes",
            role: ParamRole::Other,
            help: "passes per trial, the first one discarded (STREAM's NTIMES)",
            kind: ParamKind::Int {
                min: 2,
                max: MAX_NTIMES,
            },
            default: "10",
        },
        threads: u64 = params::threads("all"),
        copies: u64 = ParamSpec {
            name: "copies",
            role: ParamRole::CpuCount,
            help: "independent STREAMs running at once, each with its own arrays",
            kind: ParamKind::Threads { max: MAX_THREADS },
            default: "1",
        },
    }
}

/// The default array size: 4 × the total cache in doubles, rounded up to
/// a whole million, and never below STREAM's own default.
pub fn auto_elements(total_cache_bytes: u64) -> u64 {
    const ROUND: u64 = 1_000_000;
    let needed = (CACHE_FACTOR * total_cache_bytes).div_ceil(ELEMENT);
    needed
        .div_ceil(ROUND)
        .saturating_mul(ROUND)
        .max(STREAM_DEFAULT_ELEMENTS)
}

/// Refuses the automatic size (`elements`, from `cache` bytes of cache)
/// when `copies` of its three arrays need more than `limit` bytes, the
/// most this build may address. The automatic size follows the host's
/// caches, and a host with a large cache asks for more than a 32-bit build
/// can address: the error says which size to give instead, and to give
/// it to both builds of a comparison, so that both run the same case.
fn auto_fits(elements: u64, copies: u64, cache: u64, limit: u64) -> anyhow::Result<()> {
    let bytes = elements * ELEMENT * 3 * copies;
    if bytes > limit {
        let largest = limit / (ELEMENT * 3 * copies);
        bail!(
            "memory.stream: array_size=0 (auto: {elements} elements, {CACHE_FACTOR} × the {cache} B of cache) needs {} for {copies} cop(ies), more than a {}-bit sledge can address (at most {}); give array_size={largest} or less (to both sides of a comparison), or use a 64-bit build",
            format_size(bytes),
            usize::BITS,
            format_size(limit + 1)
        );
    }
    Ok(())
}

struct StreamCase {
    elements: usize,
    ntimes: u32,
    threads: usize,
    copies: usize,
    isa: Isa,
    arrays: Vec<Arrays>,
    warnings: Vec<String>,
    /// Test hook: run by copy 0's thread 0 on its share after the passes
    /// and before the check, to show that a wrong result fails the trial.
    /// Always `None` outside the tests.
    corrupt: Option<fn(&mut Share<'_>)>,
}

impl Case for StreamCase {
    fn prepare(&mut self, ctx: &TrialContext) -> anyhow::Result<()> {
        self.arrays = (0..self.copies)
            .map(|_| Arrays::new(self.elements))
            .collect::<anyhow::Result<_>>()?;
        // First touch: each pinned thread writes its own share.
        self.on_every_thread(ctx, |share, _, _| {
            stream_kernels::initialise(share);
            Ok(())
        })
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let ntimes = self.ntimes;
        let isa = self.isa;
        let threads = self.threads;
        let start = Barrier::new(self.copies * threads);
        let barriers: Vec<SpinBarrier> = (0..self.copies)
            .map(|_| SpinBarrier::new(threads))
            .collect();
        let stops: Vec<AtomicBool> = (0..self.copies).map(|_| AtomicBool::new(false)).collect();
        // times[copy][pass][kernel], written by each copy's thread 0.
        let times = Mutex::new(vec![Vec::<[f64; 4]>::new(); self.copies]);
        let corrupt = self.corrupt;
        self.on_every_thread(ctx, |share, copy, thread| {
            stream_kernels::initialise(share);
            start.wait();
            let barrier = &barriers[copy];
            let stop = &stops[copy];
            let mut mine = Vec::with_capacity(ntimes as usize);
            let mut passes = 0;
            for _ in 0..ntimes {
                if thread == 0 {
                    stop.store(ctx.cancel.is_cancelled(), Ordering::Relaxed);
                }
                barrier.wait();
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let mut pass = [0.0; 4];
                for (k, kernel) in Kernel::ALL.into_iter().enumerate() {
                    let t0 = Instant::now();
                    barrier.wait();
                    stream_kernels::run(kernel, share, isa);
                    barrier.wait();
                    pass[k] = t0.elapsed().as_secs_f64();
                }
                mine.push(pass);
                passes += 1;
            }
            if ctx.cancel.is_cancelled() {
                return Err(Cancelled.into());
            }
            if let (Some(corrupt), 0, 0) = (corrupt, copy, thread) {
                corrupt(share);
            }
            stream_kernels::validate(share, passes)
                .with_context(|| format!("copy {copy}, thread {thread}"))?;
            if thread == 0 {
                times.lock().expect("no thread panics holding it")[copy] = mine;
            }
            Ok(())
        })?;
        let times = times.into_inner().expect("no thread panics holding it");
        Ok(TrialOutput {
            metrics: self.metrics(&times),
            latency_ns: None,
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.arrays.clear();
        Ok(())
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    /// `prepare` touched every page, and each trial's first pass runs all
    /// four kernels untimed: an engine warm-up trial would move as many
    /// bytes again (on a host with a 480 MiB L3, 1.9 GB arrays: seconds a
    /// round) and warm nothing the first pass had not.
    fn warms_up_itself(&self) -> bool {
        true
    }
}

impl StreamCase {
    /// Runs `work` on every thread of every copy at once, each thread
    /// pinned to its own CPU (round robin over the run's CPUs) and given
    /// its share of its copy's arrays.
    fn on_every_thread<F>(&self, ctx: &TrialContext, work: F) -> anyhow::Result<()>
    where
        F: Fn(&mut Share<'_>, usize, usize) -> anyhow::Result<()> + Sync,
    {
        let cpus = &ctx.cpus;
        let threads = self.threads;
        // Every thread pins itself before any of them starts `work`: if one
        // cannot be pinned (the cpuset shrank, a CPU went offline), the
        // start is aborted, so no thread is left waiting at a barrier in
        // `work` for it, and its error is the trial's.
        let run = try_run_workers(
            self.arrays.len() * threads,
            |i| {
                let (copy, thread) = (i / threads, i % threads);
                if !cpus.is_empty() {
                    let cpu = cpus[i % cpus.len()];
                    set_affinity(&[cpu])
                        .with_context(|| format!("memory.stream: copy {copy}, thread {thread}"))?;
                }
                let (lo, hi) = static_share(self.elements, threads, thread);
                // SAFETY: the shares of one copy's threads are disjoint
                // ranges of its arrays, which outlive this call.
                let share = unsafe { self.arrays[copy].share(lo, hi) };
                Ok((share, copy, thread))
            },
            |(mut share, copy, thread), _start| work(&mut share, copy, thread),
        );
        // A cancellation is reported as such, whatever else failed.
        if ctx.cancel.is_cancelled() {
            return Err(Cancelled.into());
        }
        run?.results.into_iter().collect()
    }

    /// Best rate per kernel (passes after the first), summed over copies,
    /// and the mean per copy when there are several.
    fn metrics(&self, times: &[Vec<[f64; 4]>]) -> Vec<Metric> {
        const MB: f64 = 1e6;
        let mut sums = [0.0; 4];
        for copy in times {
            for (k, kernel) in Kernel::ALL.into_iter().enumerate() {
                let best = copy
                    .iter()
                    .skip(1)
                    .map(|pass| pass[k])
                    .fold(f64::INFINITY, f64::min);
                let bytes = (kernel.bytes_per_element() * self.elements as u64) as f64;
                sums[k] += bytes / best / MB;
            }
        }
        // Triad first: it is the primary metric, as in most STREAM reports.
        let order = [3, 0, 1, 2];
        let mut metrics: Vec<Metric> = order
            .iter()
            .map(|&k| {
                let name = format!("{}_mb_per_sec", Kernel::ALL[k].name());
                Metric::higher(name, "MB/s", sums[k])
            })
            .collect();
        if self.copies > 1 {
            metrics.extend(order.iter().map(|&k| {
                let name = format!("{}_mb_per_sec_per_copy", Kernel::ALL[k].name());
                Metric::higher(name, "MB/s", sums[k] / self.copies as f64)
            }));
        }
        metrics
    }
}

/// OpenMP's static schedule: thread `t` of `threads` gets a contiguous
/// range, the first `n % threads` threads one element more.
pub fn static_share(n: usize, threads: usize, t: usize) -> (usize, usize) {
    let base = n / threads;
    let extra = n % threads;
    let lo = t * base + t.min(extra);
    let hi = lo + base + usize::from(t < extra);
    (lo, hi)
}

/// Three arrays of doubles, mapped (zero-filled) but not touched: the
/// threads that use them write them first.
struct Arrays {
    a: RawArray,
    b: RawArray,
    c: RawArray,
}

impl Arrays {
    fn new(elements: usize) -> anyhow::Result<Self> {
        Ok(Arrays {
            a: RawArray::new(elements)?,
            b: RawArray::new(elements)?,
            c: RawArray::new(elements)?,
        })
    }

    /// The elements `lo..hi` of each array.
    ///
    /// # Safety
    /// No two live shares may overlap.
    unsafe fn share(&self, lo: usize, hi: usize) -> Share<'_> {
        // SAFETY: passed on to the caller.
        unsafe {
            Share {
                a: self.a.slice(lo, hi),
                b: self.b.slice(lo, hi),
                c: self.c.slice(lo, hi),
            }
        }
    }
}

/// Page-aligned doubles in a fresh anonymous mapping. The kernel hands
/// such memory out zeroed, so every slice of it is initialised; and unlike
/// `alloc_zeroed` with page alignment (which the system allocator serves
/// with `posix_memalign` and a memset on the calling thread), nothing
/// writes it here: the pages stay untouched until the thread that owns a
/// share writes it first, which decides where they live (first touch).
struct RawArray {
    map: AnonMap,
    len: usize,
}

impl RawArray {
    fn new(len: usize) -> anyhow::Result<Self> {
        let bytes = len
            .checked_mul(std::mem::size_of::<f64>())
            .filter(|&b| b > 0)
            .ok_or_else(|| anyhow::anyhow!("a STREAM array of {len} elements is not possible"))?;
        let map =
            AnonMap::new(bytes, std::mem::align_of::<f64>(), Sharing::Private).map_err(|e| {
                anyhow::anyhow!("could not allocate a STREAM array of {bytes} bytes: {e}")
            })?;
        Ok(RawArray { map, len })
    }

    /// The elements `lo..hi` (checked).
    ///
    /// # Safety
    /// No two live slices may overlap. (The memory is zero-filled, so it
    /// is always initialised.)
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice(&self, lo: usize, hi: usize) -> &mut [f64] {
        assert!(lo <= hi && hi <= self.len);
        // SAFETY: in bounds by the assert, initialised (zero-filled) and
        // aligned (page-aligned); exclusivity is the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.map.ptr().cast::<f64>().add(lo), hi - lo) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case_params(assignments: &[&str], cpus: usize) -> ParamSet {
        let assigned = assignments
            .iter()
            .map(|a| crate::engine::params::split_assignment(a).unwrap())
            .collect();
        let specs = MemoryStream.params();
        crate::engine::params::resolve_cases("memory.stream", &specs, &assigned, cpus)
            .unwrap()
            .remove(0)
    }

    #[test]
    fn a_trial_is_planned_from_the_bytes_it_moves() {
        let env = CaseEnv {
            cpus: vec![0, 1],
            total_cache_bytes: 0,
            memory_bytes: 1 << 34,
        };
        // No cache known: STREAM's 10 M elements; 6 + 10 · 2 sweeps of
        // 80 MB at 12 GB/s on one thread.
        let one = case_params(&["ntimes=2", "threads=1"], 2);
        let seconds = MemoryStream.trial_seconds(&one, &env).unwrap();
        assert!((seconds - 26.0 * 80e6 / 12e9).abs() < 1e-9, "{seconds}");
        // Two threads share the sweeps; four copies move four times the
        // bytes, on the two CPUs there are.
        let two = case_params(&["ntimes=2", "threads=2"], 2);
        let copies = case_params(&["ntimes=2", "threads=1", "copies=4"], 2);
        assert!((MemoryStream.trial_seconds(&two, &env).unwrap() - seconds / 2.0).abs() < 1e-9);
        let four = MemoryStream.trial_seconds(&copies, &env).unwrap();
        assert!((four - 2.0 * seconds).abs() < 1e-9, "{four}");
        // The arrays grow with the cache: 4 × 64 MiB of cache is 34 M
        // elements, rounded up to a million.
        let cached = CaseEnv {
            total_cache_bytes: 64 << 20,
            ..env
        };
        let expected = 26.0 * 34e6 * 8.0 / 12e9;
        assert!((MemoryStream.trial_seconds(&one, &cached).unwrap() - expected).abs() < 1e-9);
    }

    #[test]
    fn static_shares_cover_the_array_once() {
        for (n, t) in [(10, 3), (10_000, 4), (7, 7), (5, 1)] {
            let mut next = 0;
            for i in 0..t {
                let (lo, hi) = static_share(n, t, i);
                assert_eq!(lo, next);
                next = hi;
            }
            assert_eq!(next, n);
        }
    }

    #[test]
    fn auto_size_follows_streams_rule() {
        // 34 MiB of cache: 4 × that in doubles is 17.8 M, rounded up to 18 M.
        assert_eq!(auto_elements(34 << 20), 18_000_000);
        assert_eq!(auto_elements(0), STREAM_DEFAULT_ELEMENTS);
    }

    #[test]
    fn an_automatic_size_past_the_address_space_names_the_largest_to_give() {
        // A 32-bit build's limit (2 GiB) and a host with 512 MiB of cache:
        // auto is 269 M elements, 6.0 GiB for the three arrays.
        let limit = (1u64 << 31) - 1;
        let elements = auto_elements(512 << 20);
        let err = auto_fits(elements, 1, 512 << 20, limit)
            .unwrap_err()
            .to_string();
        let largest = limit / (ELEMENT * 3);
        assert!(
            err.contains(&format!("give array_size={largest} or less")),
            "{err}"
        );
        assert!(
            err.contains("array_size=0 (auto: 269000000 elements"),
            "{err}"
        );
        // The largest it names does fit, one more element does not.
        assert!(auto_fits(largest, 1, 0, limit).is_ok());
        assert!(auto_fits(largest + 1, 1, 0, limit).is_err());
        // Two copies halve it.
        let err = auto_fits(elements, 2, 512 << 20, limit)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("array_size={} or less", limit / (ELEMENT * 6))),
            "{err}"
        );
    }

    #[test]
    fn a_thread_that_cannot_be_pinned_fails_the_trial_without_hanging() {
        let mut case = StreamCase {
            elements: 20_000,
            ntimes: 200,
            threads: 2,
            copies: 1,
            isa: Isa::detect(),
            arrays: Vec::new(),
            warnings: Vec::new(),
            corrupt: None,
        };
        let unpinned = TrialContext::new(Vec::new(), crate::engine::CancelToken::new());
        case.prepare(&unpinned).unwrap();
        // Thread 0 can be pinned; thread 1's CPU does not exist here, as
        // when a CPU goes offline or the cpuset shrinks during a run.
        let ctx = TrialContext::new(
            vec![crate::sys::affinity::allowed_cpus().unwrap()[0], 1023],
            crate::engine::CancelToken::new(),
        );
        let err = format!("{:#}", case.trial(&ctx).err().unwrap());
        assert!(
            err.contains("copy 0, thread 1") && err.contains("sched_setaffinity"),
            "{err}"
        );
        case.cleanup(&unpinned).unwrap();
    }

    /// `memory.stream` whose trials corrupt one element of `b` after the
    /// kernels ran, as a miscomputing kernel or bad memory would.
    struct CorruptedStream;

    impl Workload for CorruptedStream {
        fn id(&self) -> &'static str {
            "memory.stream"
        }
        fn version(&self) -> u32 {
            MemoryStream.version()
        }
        fn summary(&self) -> &'static str {
            "memory.stream with a corrupting test hook"
        }
        fn params(&self) -> Vec<ParamSpec> {
            MemoryStream.params()
        }
        fn build(&self, _p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
            Ok(Box::new(StreamCase {
                elements: 20_000,
                ntimes: 3,
                threads: 2,
                copies: 1,
                isa: Isa::detect(),
                arrays: Vec::new(),
                warnings: Vec::new(),
                corrupt: Some(|share| share.b[7] *= 1.0 + 1e-9),
            }))
        }
    }

    static CORRUPTED: CorruptedStream = CorruptedStream;

    #[test]
    fn a_validation_error_inside_a_trial_fails_the_case() {
        use crate::engine::{CancelToken, CaseOutcome, Methodology, PlannedCase, Silent};
        let params = crate::engine::params::resolve_cases(
            CORRUPTED.id(),
            &CORRUPTED.params(),
            &Default::default(),
            1,
        )
        .unwrap()
        .remove(0);
        let planned = PlannedCase {
            workload: &CORRUPTED,
            params,
        };
        let env = CaseEnv {
            cpus: Vec::new(),
            total_cache_bytes: 0,
            memory_bytes: 0,
        };
        let ctx = TrialContext::new(Vec::new(), CancelToken::new());
        let method = Methodology {
            warmup_trials: 0,
            ..Methodology::default()
        };
        match crate::engine::run_case(&planned, &env, &method, &ctx, &Silent) {
            CaseOutcome::Failed(record) => {
                let error = record.error.expect("a failed case has an error");
                assert!(error.contains("copy 0, thread 0"), "{error}");
                assert!(error.contains("STREAM validation failed"), "{error}");
                assert!(error.contains("array b"), "{error}");
                assert!(record.trials.is_empty(), "{}", record.trials.len());
            }
            other => panic!("the case should fail: {other:?}"),
        }
    }
}
