//! The magnitudes a measured number may have: what `sledge import`
//! accepts and what the report's charts draw.
//!
//! Why a bound at all: nothing sledge measures comes near the ends of
//! `f64` (a rate of 10^15 events/s, a latency of a picosecond are already
//! far out), so a value there is a damaged or made-up document. And such
//! values break what is built on them: the chart library's logarithmic
//! axis loops forever when a value about 10^308 doubles to infinity or a
//! positive value about 10^-307 halves towards 0, ratios overflow, and
//! comparisons call nonsense a result. The bounds leave 8 orders of
//! magnitude on each side of `f64`'s range for the arithmetic done on
//! values (axis padding, squares of deviations stay finite when scaled).

/// Values at or beyond this magnitude are refused: 10^300.
pub const MAX_MAGNITUDE: f64 = 1e300;

/// Values other than 0 at or below this magnitude are refused: 10^-300.
pub const MIN_MAGNITUDE: f64 = 1e-300;

/// Whether `value` is finite and 0 or between [`MIN_MAGNITUDE`] and
/// [`MAX_MAGNITUDE`] in magnitude (both excluded).
pub fn is_plausible(value: f64) -> bool {
    let magnitude = value.abs();
    value.is_finite()
        && (magnitude == 0.0 || (magnitude > MIN_MAGNITUDE && magnitude < MAX_MAGNITUDE))
}

/// What [`is_plausible`] allows, for messages.
pub const ALLOWED: &str = "a finite number, 0 or between 1e-300 and 1e300 in magnitude (a measurement is far inside that)";

/// The largest magnitude a metric's value (a sample, a mean, a bound of
/// its interval) may have: 10^15. The largest figures sledge measures
/// are a memory bandwidth of about 10^11 bytes/s, a count of about 10^10
/// operations in a trial, a score of a few 10^10 lps on hundreds of
/// copies; 10^15 leaves four orders of magnitude above them, and keeps
/// a ratio of two values, and its percentage, a number a table can show.
pub const MAX_METRIC_VALUE: f64 = 1e15;

/// The smallest magnitude a metric's value other than 0 may have:
/// 10^-12. sledge's smallest units are nanoseconds and nanojoules, and
/// the values it reports in them, and in shares and seconds, are
/// thousandths of their unit at the least; 10^-12 leaves nine orders of
/// magnitude below.
pub const MIN_METRIC_VALUE: f64 = 1e-12;

/// Whether `value` is a metric's value sledge could have measured: 0,
/// or between [`MIN_METRIC_VALUE`] and [`MAX_METRIC_VALUE`] in magnitude
/// (both included). Its sign is the unit's concern.
pub fn is_metric_value(value: f64) -> bool {
    let magnitude = value.abs();
    value.is_finite()
        && (magnitude == 0.0 || (MIN_METRIC_VALUE..=MAX_METRIC_VALUE).contains(&magnitude))
}

/// What [`is_metric_value`] allows, for messages.
pub const METRIC_ALLOWED: &str =
    "0 or a magnitude between 1e-12 and 1e15 (what sledge measures is far inside that)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_value_is_0_or_within_what_sledge_measures() {
        for kept in [0.0, -0.0, 1e-12, 0.001, 2416.8, 8.7e10, 1e15, -3.0] {
            assert!(is_metric_value(kept), "{kept}");
        }
        for refused in [1e-290, 1e290, 9.9e-13, 1.01e15, f64::NAN, f64::INFINITY] {
            assert!(!is_metric_value(refused), "{refused}");
        }
    }

    #[test]
    fn the_ends_of_f64_are_refused_and_everything_measured_is_kept() {
        for kept in [0.0, -0.0, 1.0, -3.5e12, 1e-12, 9.99e299, -1.01e-300] {
            assert!(is_plausible(kept), "{kept}");
        }
        for refused in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e300,
            -1e308,
            f64::MAX,
            1e-300,
            -1e-307,
            f64::MIN_POSITIVE,
            5e-324,
        ] {
            assert!(!is_plausible(refused), "{refused}");
        }
    }
}
