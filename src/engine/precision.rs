//! What a number of rounds buys: the precision a case reaches, the rounds
//! it needs for a target, and the rounds a comparison needs to see a
//! change. Pure arithmetic on relative standard deviations (a share of
//! the mean), shared by the runner (which spends a run's time where it
//! buys precision) and the plan (which says beforehand what it will buy).
//!
//! A case's interval is `t(R-1) · s / √R` for `R` round means of relative
//! standard deviation `s` (`stats::summarize_rounds`), so halving it takes
//! about four times the rounds; and with few rounds Student's t makes it
//! much wider than `2 s / √R` (4.30 at 3 rounds, 2.26 at 10).

use crate::stats::t_quantile_95;

/// `Φ⁻¹(0.90)`: the normal quantile for 90% power in a one-sided look at
/// a change of known sign (the usual power calculation for a two-sided
/// test at 5%: the far tail is negligible).
const NORMAL_QUANTILE_90: f64 = 1.281_551_565_544_600_5;

/// The power the detectable-effect figures are for.
pub const DETECT_POWER: f64 = 0.90;

/// The relative 95% CI half-width of the mean of `rounds` round means of
/// relative standard deviation `round_sd`; infinite below two rounds.
pub fn half_width_at(round_sd: f64, rounds: u32) -> f64 {
    if rounds < 2 {
        return f64::INFINITY;
    }
    t_quantile_95(f64::from(rounds) - 1.0) * round_sd / f64::from(rounds).sqrt()
}

/// The fewest rounds (at least two) whose interval is within `target` for
/// round means of relative standard deviation `round_sd`, or `None` when
/// more than `max` would be needed.
pub fn rounds_to_reach(round_sd: f64, target: f64, max: u32) -> Option<u32> {
    (2..=max.max(2)).find(|&n| half_width_at(round_sd, n) <= target)
}

/// How many rounds per side a comparison of two runs needs to find a
/// change of `effect` (0.05 for 5%) at 95% confidence and 90% power.
#[derive(Debug, Clone, PartialEq)]
pub enum Detectable {
    /// This many rounds on each side.
    Rounds(u32),
    /// No number of rounds will do: two runs of this case on this host
    /// differ by this much (relative standard deviation of a run's mean
    /// beyond its rounds' own noise) for reasons that rounds do not
    /// average away, a moment of the host shared by every round of a run.
    RunToRun(f64),
    /// More than the most rounds considered.
    MoreThan(u32),
}

/// Rounds per side for a comparison of two runs to find a change of
/// `effect` (a share) at 90% power, when a side's round means scatter by
/// `round_sd` and runs differ beyond that by `run_sd` (0 when unknown),
/// considering at most `max` rounds.
///
/// The verdict is on the log ratio of the two means; its standard error
/// is `√(2 (round_sd² / R + run_sd²))`, and a change `δ = ln(1 + effect)`
/// is found with 90% power once `(t(2R-2) + z(0.90)) · SE ≤ δ`.
pub fn rounds_to_detect(round_sd: f64, run_sd: f64, effect: f64, max: u32) -> Detectable {
    let delta = (1.0 + effect).ln();
    let z_power = NORMAL_QUANTILE_90;
    // The run-to-run part alone, with infinitely many rounds.
    if (t_quantile_95(f64::INFINITY) + z_power) * (2.0 * run_sd * run_sd).sqrt() >= delta {
        return Detectable::RunToRun(run_sd);
    }
    (2..=max.max(2))
        .find(|&r| {
            let n = f64::from(r);
            let se = (2.0 * (round_sd * round_sd / n + run_sd * run_sd)).sqrt();
            (t_quantile_95(2.0 * n - 2.0) + z_power) * se <= delta
        })
        .map_or(Detectable::MoreThan(max), Detectable::Rounds)
}

/// A share as a percentage for messages: one decimal below 10%
/// (`3.1%`), none above (`12%`).
pub fn percent(share: f64) -> String {
    let pct = share * 100.0;
    if pct < 10.0 {
        format!("{pct:.1}%")
    } else {
        format!("{pct:.0}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_half_width_uses_students_t() {
        // 3 rounds of sd 10%: 4.303 · 10% / √3 = 24.8%.
        assert!((half_width_at(0.10, 3) - 0.248_4).abs() < 1e-3);
        // 10 rounds: 2.262 · 10% / √10 = 7.15%.
        assert!((half_width_at(0.10, 10) - 0.071_5).abs() < 1e-3);
        assert!(half_width_at(0.10, 1).is_infinite());
    }

    #[test]
    fn rounds_to_reach_a_target() {
        // sd 2%: 3 rounds give 4.97%, 4 give 3.18%, 5 give 2.48%.
        assert_eq!(rounds_to_reach(0.02, 0.03, 30), Some(5));
        assert_eq!(rounds_to_reach(0.02, 0.05, 30), Some(3));
        // sd 10% for ±3%: 46 rounds, beyond 30.
        assert_eq!(rounds_to_reach(0.10, 0.03, 30), None);
        assert_eq!(rounds_to_reach(0.10, 0.03, 60), Some(46));
        assert_eq!(rounds_to_reach(0.0, 0.03, 30), Some(2));
    }

    #[test]
    fn rounds_to_detect_a_change() {
        // Rounds of sd 3%, no run-to-run part, a 5% change: the standard
        // error must fall to ln 1.05 / (t + 1.28) ≈ 0.0145, so 2 · 0.03² / R
        // ≤ 0.0145² gives R ≈ 8.5 → 9 with the t of 2R-2 df.
        assert_eq!(rounds_to_detect(0.03, 0.0, 0.05, 50), Detectable::Rounds(9));
        // A run-to-run sd of 2% alone takes 3.24 · √2 · 2% = 9.2% > 4.9%.
        assert_eq!(
            rounds_to_detect(0.03, 0.02, 0.05, 50),
            Detectable::RunToRun(0.02)
        );
        // Noisy rounds within the cap.
        assert_eq!(
            rounds_to_detect(0.20, 0.0, 0.05, 50),
            Detectable::MoreThan(50)
        );
        // A large change needs few rounds.
        assert_eq!(rounds_to_detect(0.03, 0.0, 0.50, 50), Detectable::Rounds(2));
    }
}
