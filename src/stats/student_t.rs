//! Student's t distribution: the two numbers the rest of `stats` needs.
//!
//! This is a deliberately thin wrapper around `statrs` so that the other
//! files read as statistics, not as distribution plumbing, and so that the
//! magic numbers (0.95, 0.975) have names.
//!
//! Why Student's t and not the normal distribution: a benchmark here is run
//! 3 to 10 times, and with so few samples the standard deviation is itself a
//! noisy estimate. The t distribution accounts for that; the normal
//! quantile 1.96 would make the intervals far too narrow (with 5 samples the
//! correct multiplier is 2.776, 42% wider).
//!
//! The one addition to `statrs`: above [`LARGE_DF`] degrees of freedom both
//! functions switch to the standard large-df expansions around the normal
//! distribution. `statrs` 0.19's inverse CDF loses accuracy above about
//! 10⁵ degrees of freedom (1.8266 instead of 1.9600 at 10⁷) and does not
//! finish in practical time near 10⁹, and its CDF drifts above about 10⁹
//! (0.5 everywhere at 10³⁰⁰). Such df only arise from summarizing very many
//! samples, but `summarize` must not hang on them. At [`LARGE_DF`] the
//! expansions agree with `statrs` to about 1e-9.

use statrs::distribution::{Continuous, ContinuousCDF, Normal, StudentsT};

/// Confidence level of every interval `stats` reports.
pub const CONFIDENCE_LEVEL: f64 = 0.95;

/// Cumulative probability of the upper quantile of a two-sided interval at
/// [`CONFIDENCE_LEVEL`]: `1 - (1 - 0.95) / 2 = 0.975`.
pub const TWO_SIDED_QUANTILE_PROBABILITY: f64 = 1.0 - (1.0 - CONFIDENCE_LEVEL) / 2.0;

/// Degrees of freedom above which the large-df expansions replace `statrs`
/// (see the module documentation).
const LARGE_DF: f64 = 1e4;

/// Standard normal quantile `z(0.975)`, the limit of the t quantile as the
/// degrees of freedom grow.
const NORMAL_QUANTILE_975: f64 = 1.959_963_984_540_054;

/// Standard Student's t distribution (location 0, scale 1) with `df`
/// degrees of freedom, or `None` when `df` is not a positive number.
fn standard_t(df: f64) -> Option<StudentsT> {
    StudentsT::new(0.0, 1.0, df).ok()
}

/// Two-sided 95% critical value `t(0.975, df)`: a 95% interval for a mean is
/// `mean ± t_quantile_95(n - 1) · s / √n`.
///
/// `df` may be fractional (Welch–Satterthwaite degrees of freedom are) or
/// infinite (giving the normal quantile 1.95996). Returns `f64::INFINITY`
/// when `df` is not positive or is NaN: with no degrees of freedom the
/// interval is unbounded.
pub fn t_quantile_95(df: f64) -> f64 {
    if df > LARGE_DF {
        // Cornish–Fisher expansion of the t quantile in powers of 1/df
        // (Abramowitz & Stegun 26.7.5), error O(df⁻³).
        let z = NORMAL_QUANTILE_975;
        let g1 = (z.powi(3) + z) / 4.0;
        let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
        return z + g1 / df + g2 / (df * df);
    }
    match standard_t(df) {
        Some(t) => t.inverse_cdf(TWO_SIDED_QUANTILE_PROBABILITY),
        None => f64::INFINITY,
    }
}

/// Cumulative distribution function `P(T ≤ x)` of the standard Student's t
/// distribution with `df` degrees of freedom (`df` may be fractional or
/// infinite).
///
/// Returns NaN when `df` is not positive or is NaN, or when `x` is NaN.
pub fn t_cdf(x: f64, df: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if df > LARGE_DF {
        // First-order expansion around the normal distribution,
        // F(x) = Φ(x) - φ(x)·(x³ + x)/(4·df) + O(df⁻²).
        let normal = Normal::standard();
        let correction = if x.is_finite() {
            normal.pdf(x) * (x.powi(3) + x) / (4.0 * df)
        } else {
            0.0
        };
        return (normal.cdf(x) - correction).clamp(0.0, 1.0);
    }
    match standard_t(df) {
        Some(t) => t.cdf(x),
        None => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values: standard t tables, cross-checked with an independent
    // numerical integration of the t density.

    #[test]
    fn quantile_probability_is_0_975() {
        assert!((TWO_SIDED_QUANTILE_PROBABILITY - 0.975).abs() < 1e-15);
    }

    #[test]
    fn quantile_matches_tables() {
        assert!((t_quantile_95(1.0) - 12.706_205).abs() < 1e-4);
        assert!((t_quantile_95(4.0) - 2.776_445).abs() < 1e-5);
        assert!((t_quantile_95(6.0) - 2.446_912).abs() < 1e-5);
        assert!((t_quantile_95(8.0) - 2.306_004).abs() < 1e-5);
        assert!((t_quantile_95(30.0) - 2.042_272).abs() < 1e-5);
        assert!((t_quantile_95(1000.0) - 1.962_339).abs() < 1e-5);
    }

    #[test]
    fn large_df_approaches_normal_quantile() {
        // z + (z³ + z)/(4·df) to first order: 1.959966 at 10⁶.
        assert!((t_quantile_95(1e6) - 1.959_966_36).abs() < 1e-7);
        assert!((t_quantile_95(f64::INFINITY) - NORMAL_QUANTILE_975).abs() < 1e-15);
        // Would not terminate in practical time inside statrs.
        assert!((t_quantile_95(1e12) - NORMAL_QUANTILE_975).abs() < 1e-9);
        // Monotone decreasing, also across the switch to the expansion.
        let qs: Vec<f64> = [9e3, 1e4, 1.000_001e4, 2e4, 1e5]
            .map(t_quantile_95)
            .to_vec();
        assert!(qs.windows(2).all(|w| w[0] > w[1]), "{qs:?}");
    }

    #[test]
    fn large_df_expansions_agree_with_statrs_at_the_switch() {
        let t = standard_t(LARGE_DF).unwrap();
        let exact_q = t.inverse_cdf(TWO_SIDED_QUANTILE_PROBABILITY);
        assert!((t_quantile_95(LARGE_DF * (1.0 + 1e-12)) - exact_q).abs() < 1e-8);
        for x in [-6.0, -2.0, -0.5, 0.0, 1.0, 1.96, 4.0] {
            let approx = t_cdf(x, LARGE_DF * (1.0 + 1e-12));
            assert!((approx - t.cdf(x)).abs() < 1e-8, "x = {x}");
        }
    }

    #[test]
    fn quantile_accepts_fractional_df() {
        let q = t_quantile_95(6.588_389);
        assert!((q - 2.394_904).abs() < 1e-4, "{q}");
        assert!(q < t_quantile_95(6.0) && q > t_quantile_95(7.0));
    }

    #[test]
    fn quantile_without_df_is_infinite() {
        assert_eq!(t_quantile_95(0.0), f64::INFINITY);
        assert_eq!(t_quantile_95(-1.0), f64::INFINITY);
        assert_eq!(t_quantile_95(f64::NAN), f64::INFINITY);
    }

    #[test]
    fn cdf_values() {
        assert!((t_cdf(0.0, 3.0) - 0.5).abs() < 1e-12);
        assert!((t_cdf(1.5, 3.0) - 0.884_708).abs() < 1e-5);
        assert!((t_cdf(-1.5, 3.0) - (1.0 - 0.884_708)).abs() < 1e-5);
        // Two-sided p for t = 2, df = 8.
        assert!((2.0 * t_cdf(-2.0, 8.0) - 0.080_516).abs() < 1e-5);
        // The quantile inverts the CDF.
        assert!((t_cdf(t_quantile_95(5.0), 5.0) - 0.975).abs() < 1e-9);
    }

    #[test]
    fn cdf_large_df() {
        assert!((t_cdf(NORMAL_QUANTILE_975, f64::INFINITY) - 0.975).abs() < 1e-9);
        assert!((t_cdf(NORMAL_QUANTILE_975, 1e300) - 0.975).abs() < 1e-9);
        assert!((t_cdf(-NORMAL_QUANTILE_975, 1e12) - 0.025).abs() < 1e-9);
        assert_eq!(t_cdf(f64::NEG_INFINITY, 1e6), 0.0);
        assert_eq!(t_cdf(f64::INFINITY, 1e6), 1.0);
    }

    #[test]
    fn cdf_invalid_inputs_are_nan() {
        assert!(t_cdf(1.0, 0.0).is_nan());
        assert!(t_cdf(f64::NAN, 3.0).is_nan());
    }
}
