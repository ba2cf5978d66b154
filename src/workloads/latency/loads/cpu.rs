//! The `cpu` load: threads that only compute (Interbench's "Burn").

use crate::engine::CancelToken;

/// Arithmetic steps between two looks at the stop flag (tens of µs).
const STEPS_BETWEEN_CHECKS: u32 = 50_000;

/// Spins until `stop` is set.
pub fn burn_until_stopped(stop: &CancelToken) -> anyhow::Result<()> {
    let mut x = 1u64;
    while !stop.is_cancelled() {
        for _ in 0..STEPS_BETWEEN_CHECKS {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
    }
    Ok(())
}
