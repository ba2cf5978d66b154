//! `cpu.primes`: sysbench 1.0.20's cpu test.
//!
//! One event checks every number from 3 below `max_prime` for primality by
//! trial division up to its square root: 64-bit integer remainders against
//! a floating-point bound, exactly as sysbench does, because the cost of
//! those divisions is what the test measures.

use std::time::Duration;

use crate::engine::{
    CancelToken, Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params,
    TrialContext, TrialOutput, Workload,
};
use crate::workloads::common::event_loop::{Accounting, EventLimits, latency_metrics, run_events};
use crate::workloads::common::params;

/// The `cpu.primes` workload.
pub struct Primes;

impl Workload for Primes {
    fn id(&self) -> &'static str {
        "cpu.primes"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "prime checking by trial division; compatible with `sysbench cpu`"
    }
    fn params(&self) -> Vec<ParamSpec> {
        PrimesParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = PrimesParams::from_set(p);
        Ok(Box::new(PrimesCase {
            max_prime: p.max_prime,
            limits: EventLimits {
                accounting: Accounting::Sysbench,
                threads: p.threads,
                time: p.time,
                max_events: p.events,
                events_per_thread: 0,
            },
        }))
    }
}

crate::workload_params! {
    /// The parameters of `cpu.primes`.
    pub struct PrimesParams {
        max_prime: u64 = ParamSpec {
            name: "max_prime",
            role: ParamRole::Other,
            help: "check numbers below this (sysbench's --cpu-max-prime)",
            kind: ParamKind::Int {
                min: 3,
                max: u32::MAX as u64,
            },
            default: "10000",
        },
        threads: usize = params::threads("1"),
        time: Duration = params::time("10"),
        events: u64 = params::events(),
    }
}

struct PrimesCase {
    max_prime: u64,
    limits: EventLimits,
}

impl Case for PrimesCase {
    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let max_prime = self.max_prime;
        let cancel = &ctx.cancel;
        let totals = run_events(&self.limits, cancel, |_| {
            move || {
                std::hint::black_box(count_primes(std::hint::black_box(max_prime), cancel));
            }
        })?;
        let mut metrics = vec![
            Metric::higher("events_per_sec", "events/s", totals.events_per_sec()),
            Metric::higher("events", "events", totals.events as f64),
        ];
        metrics.extend(latency_metrics(&totals.latency_ns));
        Ok(TrialOutput {
            metrics,
            latency_ns: Some(totals.latency_ns),
        })
    }
}

/// How many candidates pass between two looks at the cancel flag: with a
/// large `max_prime` one event can take seconds.
const CANCEL_CHECK_MASK: u64 = 0xFFFF;

/// Counts the primes below `max_prime` with sysbench's loop. sysbench
/// starts at 3 and so never counts 2; we add it back so the count is the
/// true one (1229 below 10000), which the tests check. A cancellation ends
/// the count early (the event is then discarded with the trial).
#[inline(never)]
pub fn count_primes(max_prime: u64, cancel: &CancelToken) -> u64 {
    let mut n: u64 = 0;
    let mut c: u64 = 3;
    while c < max_prime {
        if c & CANCEL_CHECK_MASK == 0 && cancel.is_cancelled() {
            break;
        }
        // Signed conversions, as gcc emits for sysbench once it knows the
        // numbers are positive (they are far below 2^53 here).
        let t = (c as i64 as f64).sqrt();
        let mut l: u64 = 2;
        // The divisor 2 is a bit test, as gcc compiles sysbench's loop (a
        // division by 2 costs as much as any other); from 3 on, 64-bit
        // divisions.
        if 2.0 <= t && c & 1 == 1 {
            l = 3;
            while (l as i64 as f64) <= t {
                if rem_u64(c, l) == 0 {
                    break;
                }
                l += 1;
            }
        }
        if (l as i64 as f64) > t {
            n += 1;
        }
        c += 1;
    }
    if max_prime > 2 { n + 1 } else { n }
}

/// `a % b` with the CPU's 64-bit division, as sysbench's C does. LLVM
/// would otherwise divide with 32 bits whenever both numbers fit (its
/// "slow 64-bit divide" bypass), which is a different, cheaper instruction
/// on many CPUs and made this loop ~5% faster than sysbench's. `b` is at
/// least 2 here, so the division cannot fault.
#[inline(always)]
fn rem_u64(a: u64, b: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let rem: u64;
        // SAFETY: `div` with rdx = 0 and a non-zero divisor cannot fault;
        // it touches only the named registers and flags.
        unsafe {
            std::arch::asm!(
                "div {divisor}",
                divisor = in(reg) b,
                inout("rax") a => _,
                inout("rdx") 0u64 => rem,
                options(pure, nomem, nostack),
            );
        }
        rem
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        a % b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_primes_below_ten_thousand() {
        let cancel = CancelToken::new();
        assert_eq!(count_primes(10_000, &cancel), 1229);
        assert_eq!(count_primes(100, &cancel), 25);
        assert_eq!(count_primes(3, &cancel), 1);
        assert_eq!(rem_u64(17, 5), 2);
        assert_eq!(rem_u64(u64::MAX, 10), 5);
        // Large enough to cross a cancellation check.
        assert_eq!(count_primes(200_000, &cancel), 17_984);
    }
}
