//! `crypto.speed`: `openssl speed -elapsed -evp ALG`, and with `copies`,
//! `openssl speed -multi N`.
//!
//! One case is one algorithm at one block size with one number of copies;
//! `algorithm`, `block_size` and `copies` are sweepable, so the article's
//! battery is a three-way sweep. We keep one case per number (rather than
//! one case per algorithm with a metric per block size) so that the engine
//! repeats each number until its own confidence interval is tight and
//! `compare` gives each its own verdict; trials of 0.1 s keep the `quick`
//! profile's 28 crypto cases within about 20 s.
//!
//! A trial runs every copy at once, each on its own thread pinned to its
//! own CPU with its own key and buffer, for `time` seconds; each copy
//! counts whole operations and divides the bytes by its own elapsed wall
//! time, as each `openssl speed -multi` child does. The sum over copies is
//! what `-multi` prints; the mean per copy is what the article reported.
//! Rates are in MB/s (10⁶ bytes per second), openssl's table divided by
//! 1000.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::algorithm::{Algorithm, Operation};
use crate::engine::{
    CancelToken, Cancelled, Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec,
    Params, TrialContext, TrialOutput, Workload,
};
use crate::sys::affinity::set_affinity;
use crate::sys::workers::try_run_workers;
use crate::workloads::common::params::{self, MAX_THREADS};

/// openssl's block sizes: `openssl speed` runs 16, 64, 256, 1024, 8192
/// and 16384 bytes.
pub const OPENSSL_BLOCK_SIZES: [u64; 6] = [16, 64, 256, 1024, 8192, 16384];

/// Largest block accepted: 16 MiB, far past where the rate stops growing.
const MAX_BLOCK: u64 = 16 << 20;

/// Bytes processed between two looks at the clock and the cancel flag:
/// small enough that a trial overruns its time by well under a
/// millisecond, large enough that reading the clock costs nothing at 16 B.
const BYTES_PER_CLOCK_CHECK: usize = 64 << 10;

/// The `crypto.speed` workload.
pub struct CryptoSpeed;

impl Workload for CryptoSpeed {
    /// openssl speed's table: an algorithm per row, a block size per
    /// column.
    fn pivot(&self) -> Option<(&'static str, &'static str)> {
        Some(("algorithm", "block_size"))
    }
    fn id(&self) -> &'static str {
        "crypto.speed"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "digests and ciphers on fixed-size blocks; compatible with `openssl speed -elapsed -evp` and `-multi`"
    }
    fn params(&self) -> Vec<ParamSpec> {
        CryptoSpeedParams::specs()
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = CryptoSpeedParams::from_set(p);
        let algorithm = p.algorithm;
        let block_size = p.block_size as usize;
        let multiple = algorithm.block_multiple();
        if !block_size.is_multiple_of(multiple) {
            bail!(
                "crypto.speed: {algorithm} works on whole {multiple}-byte blocks, so block_size must be a multiple of {multiple} (got {block_size}); openssl's sizes are {}",
                OPENSSL_BLOCK_SIZES.map(|s| s.to_string()).join(", ")
            );
        }
        Ok(Box::new(SpeedCase {
            algorithm,
            block_size,
            copies: p.copies as usize,
            time: params::trial_time(p.time),
            cpus: env.cpus.clone(),
        }))
    }
}

crate::workload_params! {
    /// The parameters of `crypto.speed`.
    pub struct CryptoSpeedParams {
        algorithm: Algorithm = ParamSpec {
            name: "algorithm",
            role: ParamRole::Other,
            help: "the algorithm, by its openssl name",
            kind: ParamKind::Choice(Algorithm::NAMES),
            default: "sha256",
        },
        block_size: u64 = ParamSpec {
            name: "block_size",
            role: ParamRole::Other,
            help: "bytes per operation (openssl's sizes: 16,64,256,1024,8192,16384)",
            kind: ParamKind::Size {
                min: 1,
                max: MAX_BLOCK,
                power_of_two: false,
            },
            default: "8192",
        },
        copies: u64 = ParamSpec {
            name: "copies",
            role: ParamRole::CpuCount,
            help: "copies running at once, one per CPU (openssl's -multi; `all`: one per CPU)",
            kind: ParamKind::Threads { max: MAX_THREADS },
            default: "1",
        },
        time: f64 = ParamSpec {
            help: "length of one trial, per block size (openssl's -seconds; 3 by default as openssl)",
            ..params::time("3")
        },
    }
}

struct SpeedCase {
    algorithm: Algorithm,
    block_size: usize,
    copies: usize,
    time: Duration,
    cpus: Vec<usize>,
}

/// What one copy measured.
struct CopyResult {
    ops: u64,
    seconds: f64,
}

impl Case for SpeedCase {
    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let cpus = if ctx.cpus.is_empty() {
            &self.cpus
        } else {
            &ctx.cpus
        };
        let (algorithm, block_size, time) = (self.algorithm, self.block_size, self.time);
        let cancel = &ctx.cancel;
        // Each copy pins itself and warms up before the common start; if a
        // copy cannot be pinned (the cpuset shrank, a CPU went offline),
        // the start is aborted and nobody is left waiting for it.
        let run = try_run_workers(
            self.copies,
            |copy| {
                if let Some(&cpu) = cpus.get(copy % cpus.len().max(1)) {
                    set_affinity(&[cpu]).with_context(|| format!("crypto.speed: copy {copy}"))?;
                }
                Ok(CopyState::new(algorithm, block_size))
            },
            |state, _start| state.run(time, cancel),
        );
        if ctx.cancel.is_cancelled() {
            return Err(Cancelled.into());
        }
        let results = run?.results;
        let mut sum_rate = 0.0;
        let mut sum_ops_rate = 0.0;
        for r in results {
            sum_rate += r.ops as f64 * self.block_size as f64 / r.seconds;
            sum_ops_rate += r.ops as f64 / r.seconds;
        }
        const MB: f64 = 1e6;
        Ok(TrialOutput {
            metrics: vec![
                Metric::higher("mb_per_sec", "MB/s", sum_rate / MB),
                Metric::higher(
                    "mb_per_sec_per_copy",
                    "MB/s",
                    sum_rate / MB / self.copies as f64,
                ),
                Metric::higher("ops_per_sec", "ops/s", sum_ops_rate),
            ],
            latency_ns: None,
        })
    }
}

/// One copy's operation and buffer, set up (and warmed) before the start.
struct CopyState {
    op: Box<dyn Operation>,
    block: Vec<u8>,
    batch: u64,
}

impl CopyState {
    fn new(algorithm: Algorithm, block_size: usize) -> Self {
        let mut op = algorithm.operation();
        let mut block = vec![0x5a_u8; block_size];
        let batch = (BYTES_PER_CLOCK_CHECK / block_size).max(1) as u64;
        // One untimed operation faults the buffer in and warms the code.
        op.run(&mut block);
        CopyState { op, block, batch }
    }

    /// Runs whole operations until the time is up, looking at the clock
    /// every [`BYTES_PER_CLOCK_CHECK`] bytes; each copy times itself from
    /// its own start, as each `openssl speed -multi` child does.
    fn run(mut self, time: Duration, cancel: &CancelToken) -> CopyResult {
        let start = Instant::now();
        let end = start + time;
        let mut ops: u64 = 0;
        loop {
            for _ in 0..self.batch {
                self.op.run(&mut self.block);
            }
            ops += self.batch;
            if Instant::now() >= end || cancel.is_cancelled() {
                break;
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        CopyResult { ops, seconds }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::affinity::allowed_cpus;

    #[test]
    fn a_copy_that_cannot_be_pinned_fails_the_trial_without_hanging() {
        let mut case = SpeedCase {
            algorithm: Algorithm::from_name("sha256").unwrap(),
            block_size: 16,
            copies: 2,
            time: Duration::from_secs(5),
            cpus: Vec::new(),
        };
        // Copy 0 can be pinned; copy 1's CPU does not exist here, as when
        // a CPU goes offline or the cpuset shrinks during a run.
        let ctx = TrialContext::new(vec![allowed_cpus().unwrap()[0], 1023], CancelToken::new());
        let started = Instant::now();
        let err = format!("{:#}", case.trial(&ctx).err().unwrap());
        assert!(
            err.contains("copy 1") && err.contains("sched_setaffinity"),
            "{err}"
        );
        // Copy 0 did not run its 5 s either: the start was aborted.
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
    }
}
