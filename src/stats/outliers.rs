//! Outlier flags by Tukey's fences.
//!
//! Why Tukey's fences: they are built from quartiles, so (unlike a
//! "mean ± k·stddev" rule) the outlier cannot hide itself by inflating the
//! spread it is judged against; they need no assumption about the
//! distribution; and they are the rule readers already know from box plots.
//! criterion.rs uses the same rule for the same purpose.
//!
//! Why flag and never drop: on a server benchmark an outlier is often the
//! finding (a GC pause, a throttled CPU, a noisy neighbour). The caller
//! decides what to do; the statistics in `summary.rs` are computed on
//! all samples.
//!
//! Quartiles use linear interpolation between order statistics, the
//! "type 7" definition of Hyndman & Fan (1996), which is the default of
//! numpy (`numpy.percentile`) and R (`quantile`), so numbers can be
//! checked against either.

/// Multiplier of the interquartile range that places Tukey's fences:
/// `[Q1 - 1.5·IQR, Q3 + 1.5·IQR]`.
///
/// Source: J. W. Tukey, *Exploratory Data Analysis*, Addison-Wesley, 1977
/// (the "inner fences"; 3.0 would be the "outer fences" for far-out values).
pub const TUKEY_FENCE: f64 = 1.5;

/// Fewest samples for which quartiles mean anything; below this no sample
/// is flagged.
const MIN_SAMPLES: usize = 4;

/// Flags the samples that lie outside Tukey's fences
/// `[Q1 - 1.5·IQR, Q3 + 1.5·IQR]` (a sample exactly on a fence is not an
/// outlier).
///
/// Returns one flag per input sample, in input order; samples are flagged
/// only, never removed. Quartiles are computed by linear interpolation
/// (the "type 7" definition, the same as numpy's default
/// `numpy.percentile`).
///
/// With fewer than 4 samples every flag is `false`: quartiles of 3 values
/// cannot tell an outlier from an ordinary spread. NaN samples are left out
/// of the quartiles and never flagged (they cannot be compared with a
/// fence); the fewer-than-4 rule counts only the other samples.
pub fn tukey_outliers(samples: &[f64]) -> Vec<bool> {
    let mut sorted: Vec<f64> = samples.iter().copied().filter(|x| !x.is_nan()).collect();
    if sorted.len() < MIN_SAMPLES {
        return vec![false; samples.len()];
    }
    sorted.sort_by(f64::total_cmp);
    let q1 = quantile_type7(&sorted, 0.25);
    let q3 = quantile_type7(&sorted, 0.75);
    let iqr = q3 - q1;
    let low = q1 - TUKEY_FENCE * iqr;
    let high = q3 + TUKEY_FENCE * iqr;
    // NaN compares false both ways, so NaN samples (and NaN fences, which
    // only arise from infinite quartiles) never flag anything.
    samples.iter().map(|&x| x < low || x > high).collect()
}

/// Type-7 quantile of an ascending, non-empty, NaN-free slice: with
/// `h = (n - 1)·p`, interpolate linearly between `sorted[⌊h⌋]` and
/// `sorted[⌊h⌋ + 1]`.
fn quantile_type7(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p;
    let lower = h.floor() as usize;
    let upper = (lower + 1).min(sorted.len() - 1);
    let fraction = h - lower as f64;
    if fraction == 0.0 {
        sorted[lower]
    } else {
        sorted[lower] + fraction * (sorted[upper] - sorted[lower])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_match_numpy() {
        // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) == [1.75, 2.5, 3.25]
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_type7(&v, 0.25), 1.75);
        assert_eq!(quantile_type7(&v, 0.5), 2.5);
        assert_eq!(quantile_type7(&v, 0.75), 3.25);
        assert_eq!(quantile_type7(&v, 0.0), 1.0);
        assert_eq!(quantile_type7(&v, 1.0), 4.0);
        // numpy.percentile([1, 2, 3, 4, 100], [25, 75]) == [2, 4]
        let w = [1.0, 2.0, 3.0, 4.0, 100.0];
        assert_eq!(quantile_type7(&w, 0.25), 2.0);
        assert_eq!(quantile_type7(&w, 0.75), 4.0);
    }

    #[test]
    fn flags_only_the_high_outlier() {
        // Q1 = 2, Q3 = 4, IQR = 2 → fences [-1, 7].
        assert_eq!(
            tukey_outliers(&[1.0, 2.0, 3.0, 4.0, 100.0]),
            vec![false, false, false, false, true]
        );
    }

    #[test]
    fn flags_a_low_outlier_in_input_order() {
        // Sorted [-100, 1, 2, 3, 4]: Q1 = 1, Q3 = 3 → fences [-2, 6].
        assert_eq!(
            tukey_outliers(&[3.0, -100.0, 1.0, 4.0, 2.0]),
            vec![false, true, false, false, false]
        );
    }

    #[test]
    fn no_outliers_in_ordinary_spread() {
        let v = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0];
        assert_eq!(tukey_outliers(&v), vec![false; 6]);
        let w = [100.2, 99.8, 101.0, 99.5, 100.4, 100.0, 100.9];
        assert_eq!(tukey_outliers(&w), vec![false; 7]);
    }

    #[test]
    fn sample_on_the_fence_is_not_flagged() {
        // [0, 1, 2, 3, 6]: Q1 = 1, Q3 = 3 → upper fence exactly 6.
        assert_eq!(tukey_outliers(&[0.0, 1.0, 2.0, 3.0, 6.0]), vec![false; 5]);
        assert_eq!(
            tukey_outliers(&[0.0, 1.0, 2.0, 3.0, 6.01]),
            vec![false, false, false, false, true]
        );
    }

    #[test]
    fn fewer_than_four_samples_flag_nothing() {
        assert_eq!(tukey_outliers(&[]), Vec::<bool>::new());
        assert_eq!(tukey_outliers(&[1.0]), vec![false]);
        assert_eq!(tukey_outliers(&[1.0, 2.0, 1000.0]), vec![false; 3]);
    }

    #[test]
    fn identical_samples_flag_nothing() {
        assert_eq!(tukey_outliers(&[5.0; 6]), vec![false; 6]);
    }

    #[test]
    fn nan_is_ignored_and_never_flagged() {
        assert_eq!(
            tukey_outliers(&[1.0, f64::NAN, 2.0, 3.0, 4.0, 100.0]),
            vec![false, false, false, false, false, true]
        );
        // Only three comparable samples left.
        assert_eq!(tukey_outliers(&[1.0, f64::NAN, 2.0, 100.0]), vec![false; 4]);
    }

    #[test]
    fn infinity_is_an_outlier() {
        assert_eq!(
            tukey_outliers(&[1.0, 2.0, 3.0, 4.0, f64::INFINITY]),
            vec![false, false, false, false, true]
        );
    }
}
