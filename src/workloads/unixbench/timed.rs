//! The timed loop every UnixBench program runs: do the work in batches,
//! look at the clock between batches, stop once the time is up.
//!
//! UnixBench stops its loops with `alarm()`, whose handler prints the count
//! and exits. Reading the monotonic clock between batches gives the same
//! count without signals; a batch is sized so that the clock read (a vDSO
//! call of some 20-50 ns) is well under 1% of it and the overshoot past the
//! deadline is a few microseconds.

use std::time::{Duration, Instant};

use super::score::Outcome;

/// Runs `batch` loops at a time through `step` until `seconds` have passed,
/// and returns the loops done and the exact time taken. `step(n)` does `n`
/// loops or fails.
pub fn run_for<E>(
    seconds: f64,
    batch: u64,
    mut step: impl FnMut(u64) -> Result<(), E>,
) -> Result<Outcome, E> {
    let duration = Duration::from_secs_f64(seconds);
    let batch = batch.max(1);
    let start = Instant::now();
    let mut count: u64 = 0;
    let elapsed = loop {
        step(batch)?;
        count += batch;
        let elapsed = start.elapsed();
        if elapsed >= duration {
            break elapsed;
        }
    };
    Ok(Outcome {
        count: count as f64,
        seconds: elapsed.as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_whole_batches_until_the_time_is_up() {
        let mut calls = 0;
        let outcome = run_for::<()>(0.02, 3, |n| {
            assert_eq!(n, 3);
            calls += 1;
            std::thread::sleep(Duration::from_millis(1));
            Ok(())
        })
        .unwrap();
        assert_eq!(outcome.count, (calls * 3) as f64);
        assert!(outcome.seconds >= 0.02, "{outcome:?}");
        assert!(calls >= 2);
    }

    #[test]
    fn a_failing_step_stops_the_loop() {
        let mut calls = 0;
        let err = run_for(10.0, 1, |_| {
            calls += 1;
            if calls == 3 { Err("boom") } else { Ok(()) }
        });
        assert_eq!(err, Err("boom"));
        assert_eq!(calls, 3);
    }
}
