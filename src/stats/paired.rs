//! Comparing two settings measured in interleaved rounds: the paired
//! ratio.
//!
//! When A and B run in the same round, one right after the other (or at
//! the same time, in duet mode), each round's two means share that
//! round's moment of the host: a neighbour's job, a thermal limit, the
//! hour's turbo budget. The ratio of one round's B to its A is then free
//! of the drift that makes two runs minutes apart differ, and the spread
//! of those ratios is the whole uncertainty of the comparison. That is
//! why `sledge ab` is judged on the **per-round paired ratios** and not,
//! as `compare` judges two runs, on two independent sets of round means
//! (Abedi and Brecht, "Conducting Repeatable Experiments in Highly
//! Variable Cloud Computing Environments", ICPE 2017: randomized
//! multiple interleaved trials).
//!
//! The ratio is the geometric mean of the per-round ratios, `exp(mean
//! d)` with `d_i = ln(b_i / a_i)`; its 95% CI is `exp(mean d ± t(n-1) ·
//! sd(d) / √n)` (a one-sample t interval of the log ratios, symmetric in
//! the multiplicative sense as `compare`'s is), and the p-value is the
//! paired t-test's. The verdict keeps `compare`'s rule (significant at
//! 5% **and** beyond [`NOISE_THRESHOLD`]), so a real but tiny effect of
//! memory layout is not called a change. No run-to-run history widens the
//! interval: the drift it would stand for is what pairing cancels.

use super::run_comparison::VerdictBasis;
use super::run_comparison::{Comparison, Direction, NOISE_THRESHOLD, SIGNIFICANCE_LEVEL, Verdict};
use super::student_t::{t_cdf, t_quantile_95};

/// Compares B against A from their values round by round (`a[i]` and
/// `b[i]` measured in the same round). `ratio` is the geometric mean of
/// `b[i] / a[i]`, with the paired t interval and test described in the
/// module documentation; the basis is [`VerdictBasis::Paired`].
///
/// Returns `None` when the slices differ in length or are empty, or when
/// any value is not a finite number above 0 (a ratio of a zero or a
/// negative value has no logarithm). With one pair there is no test:
/// `p_value` 1, no difference, the interval collapsed to the ratio.
pub fn compare_paired(a: &[f64], b: &[f64], direction: Direction) -> Option<Comparison> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let valid = |v: &f64| v.is_finite() && *v > 0.0;
    if !a.iter().all(valid) || !b.iter().all(valid) {
        return None;
    }
    let logs: Vec<f64> = a.iter().zip(b).map(|(a, b)| (b / a).ln()).collect();
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let ratio = mean.exp();
    if !ratio.is_finite() || ratio == 0.0 {
        return None;
    }
    let (p_value, half_width) = if logs.len() < 2 {
        (1.0, 0.0)
    } else {
        let var = logs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let se = (var / n).sqrt();
        let df = n - 1.0;
        if se == 0.0 {
            (if mean == 0.0 { 1.0 } else { 0.0 }, 0.0)
        } else {
            let t = mean / se;
            (
                (2.0 * t_cdf(-t.abs(), df)).clamp(0.0, 1.0),
                t_quantile_95(df) * se,
            )
        }
    };
    let significant = p_value < SIGNIFICANCE_LEVEL && (ratio - 1.0).abs() > NOISE_THRESHOLD;
    let verdict = match (significant, direction, ratio > 1.0) {
        (false, _, _) => Verdict::NoDifference,
        (true, Direction::Higher, true) | (true, Direction::Lower, false) => Verdict::Faster,
        (true, Direction::Higher, false) | (true, Direction::Lower, true) => Verdict::Slower,
    };
    Some(Comparison {
        ratio,
        ratio_ci_low: (mean - half_width).exp(),
        ratio_ci_high: (mean + half_width).exp(),
        p_value,
        verdict,
        basis: VerdictBasis::Paired,
        history_suspect: false,
    })
}

/// The 95% CI half-width of the paired ratio of `a` and `b`, on the log
/// scale (0.03 is about ±3%): how precise the comparison is so far,
/// which is what decides whether another round is worth its time.
/// `None` below two pairs or for values that [`compare_paired`] refuses.
pub fn paired_half_width(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 {
        return None;
    }
    let c = compare_paired(a, b, Direction::Higher)?;
    Some((c.ratio_ci_high / c.ratio).ln())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drift_shared_by_both_sides_cancels() {
        // The host slows down by half over the rounds; B is 10% slower
        // than A at every moment. Independent samples would see two
        // overlapping spreads; the pairs see 0.9 every time.
        let a = [100.0, 90.0, 80.0, 70.0, 60.0, 50.0];
        let b: Vec<f64> = a.iter().map(|v| v * 0.9).collect();
        let c = compare_paired(&a, &b, Direction::Higher).unwrap();
        assert!((c.ratio - 0.9).abs() < 1e-12, "{c:?}");
        assert_eq!(c.verdict, Verdict::Slower);
        assert_eq!(c.basis, VerdictBasis::Paired);
        let unpaired = crate::stats::compare(&a, &b, Direction::Higher).unwrap();
        assert_eq!(unpaired.verdict, Verdict::NoDifference, "{unpaired:?}");
    }

    #[test]
    fn the_interval_is_the_paired_t_interval_of_the_log_ratios() {
        // ln ratios 0.1, 0.0, 0.2: mean 0.1, sd 0.1, se 0.0577, t(2) 4.303.
        let a = [1.0, 1.0, 1.0];
        let b = [0.1f64.exp(), 1.0, 0.2f64.exp()];
        let c = compare_paired(&a, &b, Direction::Higher).unwrap();
        let half = 4.302_652_7 * 0.1 / 3f64.sqrt();
        assert!((c.ratio - 0.1f64.exp()).abs() < 1e-9);
        assert!((c.ratio_ci_low - (0.1 - half).exp()).abs() < 1e-6, "{c:?}");
        assert!((c.ratio_ci_high - (0.1 + half).exp()).abs() < 1e-6, "{c:?}");
        // t = 0.1 / 0.0577 = 1.732 on 2 df: p = 0.225.
        assert!((c.p_value - 0.2254).abs() < 1e-3, "{c:?}");
        assert_eq!(c.verdict, Verdict::NoDifference);
        let w = paired_half_width(&a, &b).unwrap();
        assert!((w - half).abs() < 1e-7);
    }

    #[test]
    fn lower_is_better_turns_the_verdict() {
        let a = [10.0, 11.0, 12.0, 10.5];
        let b: Vec<f64> = a.iter().map(|v| v * 1.2).collect();
        let c = compare_paired(&a, &b, Direction::Lower).unwrap();
        assert_eq!(c.verdict, Verdict::Slower);
        let c = compare_paired(&b, &a, Direction::Lower).unwrap();
        assert_eq!(c.verdict, Verdict::Faster);
    }

    #[test]
    fn a_significant_change_below_the_noise_threshold_is_no_difference() {
        let a = [100.0, 100.0, 100.0, 100.0];
        let b = [101.0, 101.01, 100.99, 101.0];
        let c = compare_paired(&a, &b, Direction::Higher).unwrap();
        assert!(c.p_value < 0.001);
        assert_eq!(c.verdict, Verdict::NoDifference);
    }

    #[test]
    fn impossible_inputs_give_nothing() {
        assert!(compare_paired(&[], &[], Direction::Higher).is_none());
        assert!(compare_paired(&[1.0], &[1.0, 2.0], Direction::Higher).is_none());
        assert!(compare_paired(&[1.0, 0.0], &[1.0, 1.0], Direction::Higher).is_none());
        assert!(compare_paired(&[1.0, -1.0], &[1.0, 1.0], Direction::Higher).is_none());
        assert!(compare_paired(&[1.0, f64::NAN], &[1.0, 1.0], Direction::Higher).is_none());
        let one = compare_paired(&[2.0], &[3.0], Direction::Higher).unwrap();
        assert_eq!((one.p_value, one.verdict), (1.0, Verdict::NoDifference));
        assert_eq!(one.ratio_ci_low, one.ratio_ci_high);
        assert!(paired_half_width(&[2.0], &[3.0]).is_none());
    }
}
