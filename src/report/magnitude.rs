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

#[cfg(test)]
mod tests {
    use super::*;

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
