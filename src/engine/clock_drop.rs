//! The second half of the `throttled` flag: a trial whose effective clock
//! fell more than [`CLOCK_DROP_THRESHOLD`] below the case's best trial.
//!
//! The monitor flags a trial on its own when a thermal-throttle counter
//! rises; a clock that sags as a turbo budget or a power limit runs out
//! raises no counter, and only shows against the case's other trials. So
//! this runs where the case's record is rebuilt after each of its rounds,
//! over every trial so far: a later, faster round can flag an earlier
//! trial, and the flags are recomputed from the monitor's own each time.
//! The trial is not replaced (its round is over) but reported, like any
//! flagged trial the monitor could not replace, and `compare` leaves it
//! out (judging the case on its other trials when enough are left, else
//! withholding the verdict).
//!
//! Only trials that kept a CPU at least [`CLOCK_JUDGED_BUSY_PCT`] busy are
//! judged by their clock, and only they set the best: on a mostly idle CPU
//! the governor sets the clock from the load (an I/O-bound case's clock
//! follows its I/O), and a few busy moments on an idle package reach a
//! single-core turbo that an all-core trial never will. Neither is
//! throttling.

use crate::monitor::{CLOCK_DROP_THRESHOLD, Disturbance, TrialHealth};
use crate::results::TrialRecord;

/// Busy share (in %) the busiest of a trial's CPUs must reach for the
/// trial's clock to be judged: half of the time, so that the clock is the
/// workload's and not the idle governor's.
pub(crate) const CLOCK_JUDGED_BUSY_PCT: f64 = 50.0;

/// Whether a trial's clock says something about throttling: busy enough,
/// or busy time unknown (a monitor without `/proc`).
fn judged(health: &TrialHealth) -> bool {
    health.cpu_busy_pct.is_empty()
        || health
            .cpu_busy_pct
            .iter()
            .any(|&pct| pct >= CLOCK_JUDGED_BUSY_PCT)
}

/// Adds [`Disturbance::Throttled`] to each trial whose clock is more than
/// [`CLOCK_DROP_THRESHOLD`] below the fastest trial's, comparing only
/// clocks from the same source and of trials busy enough to be judged.
/// Trials without a clock are left alone.
pub(crate) fn flag_clock_drops(trials: &mut [TrialRecord]) {
    for i in 0..trials.len() {
        let health = &trials[i].health;
        let (Some(clock), Some(source)) = (health.clock_mhz, health.clock_source) else {
            continue;
        };
        if !judged(health) {
            continue;
        }
        let best = trials
            .iter()
            .filter(|t| t.health.clock_source == Some(source) && judged(&t.health))
            .filter_map(|t| t.health.clock_mhz)
            .fold(f64::NEG_INFINITY, f64::max);
        let flags = &mut trials[i].health.flags;
        if clock < best * (1.0 - CLOCK_DROP_THRESHOLD) && !flags.contains(&Disturbance::Throttled) {
            flags.push(Disturbance::Throttled);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{ClockSource, TrialHealth};

    fn trial(clock: Option<f64>, source: ClockSource) -> TrialRecord {
        TrialRecord {
            index: 0,
            round: 0,
            replaced: false,
            seconds: 1.0,
            health: TrialHealth {
                clock_mhz: clock,
                clock_source: clock.map(|_| source),
                ..TrialHealth::default()
            },
        }
    }

    fn flagged(trials: &[TrialRecord]) -> Vec<bool> {
        trials
            .iter()
            .map(|t| t.health.flags.contains(&Disturbance::Throttled))
            .collect()
    }

    #[test]
    fn a_clock_more_than_five_percent_below_the_best_is_flagged() {
        let mut trials = vec![
            trial(Some(3000.0), ClockSource::AperfMperf),
            trial(Some(2860.0), ClockSource::AperfMperf), // 4.7% below: kept clean
            trial(Some(2840.0), ClockSource::AperfMperf), // 5.3% below
            trial(None, ClockSource::AperfMperf),
        ];
        flag_clock_drops(&mut trials);
        assert_eq!(flagged(&trials), [false, false, true, false]);
        // Flagging twice adds nothing.
        flag_clock_drops(&mut trials);
        assert_eq!(trials[2].health.flags, [Disturbance::Throttled]);
    }

    #[test]
    fn clocks_from_different_sources_are_not_compared() {
        let mut trials = vec![
            trial(Some(3000.0), ClockSource::AperfMperf),
            trial(Some(2000.0), ClockSource::Cpufreq),
        ];
        flag_clock_drops(&mut trials);
        assert_eq!(flagged(&trials), [false, false]);
    }

    #[test]
    fn mostly_idle_trials_are_neither_judged_nor_the_best() {
        let busy = |clock: f64, pct: f64| {
            let mut t = trial(Some(clock), ClockSource::AperfMperf);
            t.health.cpu_busy_pct = vec![pct, 3.0];
            t
        };
        let mut trials = vec![
            // An I/O-bound trial: a short single-core turbo burst.
            busy(3900.0, 12.0),
            busy(3000.0, 99.0),
            busy(2700.0, 97.0),
            // Idle at a low clock: the governor, not a limit.
            busy(1200.0, 8.0),
        ];
        flag_clock_drops(&mut trials);
        assert_eq!(flagged(&trials), [false, false, true, false]);
    }

    #[test]
    fn a_counter_flag_from_the_monitor_is_kept() {
        let mut trials = vec![trial(Some(3000.0), ClockSource::Cpufreq)];
        trials[0].health.flags = vec![Disturbance::Throttled];
        flag_clock_drops(&mut trials);
        assert_eq!(trials[0].health.flags, [Disturbance::Throttled]);
    }
}
