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

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Confidence level of every interval `stats` reports.
pub const CONFIDENCE_LEVEL: f64 = 0.95;

/// Cumulative probability of the upper quantile of a two-sided interval at
/// [`CONFIDENCE_LEVEL`]: `1 - (1 - 0.95) / 2 = 0.975`.
pub const TWO_SIDED_QUANTILE_PROBABILITY: f64 = 1.0 - (1.0 - CONFIDENCE_LEVEL) / 2.0;

/// Standard Student's t distribution (location 0, scale 1) with `df`
/// degrees of freedom, or `None` when `df` is not a positive number.
fn standard_t(df: f64) -> Option<StudentsT> {
    StudentsT::new(0.0, 1.0, df).ok()
}

/// Two-sided 95% critical value `t(0.975, df)`: a 95% interval for a mean is
/// `mean ± t_quantile_95(n - 1) · s / √n`.
///
/// `df` may be fractional (Welch–Satterthwaite degrees of freedom are).
/// Returns `f64::INFINITY` when `df` is not positive or is NaN: with no
/// degrees of freedom the interval is unbounded.
pub fn t_quantile_95(df: f64) -> f64 {
    match standard_t(df) {
        Some(t) => t.inverse_cdf(TWO_SIDED_QUANTILE_PROBABILITY),
        None => f64::INFINITY,
    }
}

/// Cumulative distribution function `P(T ≤ x)` of the standard Student's t
/// distribution with `df` degrees of freedom (`df` may be fractional).
///
/// Returns NaN when `df` is not positive or is NaN, or when `x` is NaN.
pub fn t_cdf(x: f64, df: f64) -> f64 {
    match standard_t(df) {
        Some(t) if !x.is_nan() => t.cdf(x),
        _ => f64::NAN,
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
        // Large df approaches the normal quantile 1.959964.
        assert!((t_quantile_95(1e6) - 1.959_966).abs() < 1e-4);
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
    fn cdf_invalid_inputs_are_nan() {
        assert!(t_cdf(1.0, 0.0).is_nan());
        assert!(t_cdf(f64::NAN, 3.0).is_nan());
    }
}
