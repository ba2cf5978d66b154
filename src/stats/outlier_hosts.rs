//! Which host of a fleet is the lemon: one case's value on each host of a
//! population (hosts sharing a CPU model), judged by the modified z-score.
//!
//! Why the modified z-score (Iglewicz and Hoaglin, "How to Detect and
//! Handle Outliers", ASQC 1993): it measures each host's distance from the
//! fleet's median in units of the median absolute deviation (MAD), so the
//! lemon cannot hide itself by inflating the spread it is judged against,
//! as it would with the mean and standard deviation; and it works from
//! three hosts up, where quartiles (Tukey's fences) mean nothing.
//! `M = 0.6745 · (x − median) / MAD`, the 0.6745 making the MAD comparable
//! with a standard deviation for normal data; Iglewicz and Hoaglin
//! recommend naming `|M| > 3.5`.
//!
//! `x` is the logarithm of a host's mean: hosts differ by factors (a
//! host at half the speed is as far off as one at twice it), and a
//! fleet's spread is a share of its level, so the same rule serves a case
//! measured in thousands of events/s and one in microseconds. On the log
//! scale a MAD of 0.1 is about 10%.
//!
//! The MAD alone fails exactly where a fleet is best: three hosts of
//! nearly equal values give a MAD near 0 (with three values it is the
//! smaller of the two gaps to the median), and then any difference at all,
//! even one inside the measurement's own noise, would be named. So the
//! spread a host is judged against is the largest of: the MAD; the median
//! of the hosts' own 95% CI half-widths as shares of their means (a host
//! is never named for a difference its measurement cannot resolve); and
//! [`MIN_RELATIVE_SPREAD`] (for values with no CI, such as a single
//! trial). With that floor a host is named only when it is more than
//! `3.5 / 0.6745 ≈ 5.2` spreads from the median.

/// The modified z-score above which a host is named, in absolute value.
///
/// Source: B. Iglewicz and D. C. Hoaglin, *How to Detect and Handle
/// Outliers*, ASQC Quality Press, 1993, p. 11.
pub const MODIFIED_Z_THRESHOLD: f64 = 3.5;

/// `Φ⁻¹(0.75)`: the MAD of a normal distribution is 0.6745 standard
/// deviations, so this factor puts the MAD on a standard deviation's scale
/// (Iglewicz and Hoaglin's constant).
pub const MAD_TO_SD: f64 = 0.6745;

/// Fewest hosts for which a fleet has a median and a spread to speak of.
pub const MIN_HOSTS: usize = 3;

/// The smallest spread a host is judged against, on the log scale: 0.02,
/// about 2% of the median (a host must then be more than about 10% from
/// the median to be named). Trials on one quiet host repeat within a few percent; below
/// that a difference between hosts is not a lemon but the measurement.
pub const MIN_RELATIVE_SPREAD: f64 = 0.02;

/// One host's value of a case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostValue {
    /// The case's headline mean on the host.
    pub mean: f64,
    /// Half the width of its 95% CI (`f64::INFINITY` or NaN when unknown:
    /// such a host does not take part in the CI floor).
    pub ci_half_width: f64,
}

/// What the spread a fleet's hosts were judged against came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpreadBasis {
    /// The median absolute deviation from the median.
    Mad,
    /// The median of the hosts' CI half-widths, larger than the MAD.
    CaseCi,
    /// [`MIN_RELATIVE_SPREAD`] of the median, larger than both.
    Floor,
}

/// One host's standing in its fleet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostStanding {
    /// `0.6745 · (ln mean − ln median) / spread`.
    pub modified_z: f64,
    /// The host's mean over the fleet's median.
    pub ratio: f64,
    /// Whether `|modified_z|` is above [`MODIFIED_Z_THRESHOLD`].
    pub outlier: bool,
}

/// A case across a fleet's hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetSpread {
    /// The median of the hosts' means (for an even count, the geometric
    /// mean of the middle two).
    pub median: f64,
    /// The median absolute deviation of the means' logarithms from the
    /// median's: 0.1 is about 10%.
    pub mad: f64,
    /// The spread the hosts were judged against, on the same log scale
    /// (at least `mad`).
    pub spread: f64,
    /// Where `spread` came from.
    pub basis: SpreadBasis,
    /// One standing per host, in the order given.
    pub hosts: Vec<HostStanding>,
}

/// Judges every host of `values` against the fleet's median, on the
/// logarithms of the means. `None` when there are fewer than
/// [`MIN_HOSTS`] values or a mean is not finite and above 0 (no ratio to
/// speak of).
pub fn outlier_hosts(values: &[HostValue]) -> Option<FleetSpread> {
    if values.len() < MIN_HOSTS || values.iter().any(|v| !(v.mean.is_finite() && v.mean > 0.0)) {
        return None;
    }
    let logs: Vec<f64> = values.iter().map(|v| v.mean.ln()).collect();
    let center = median_of(logs.clone())?;
    let mad = median_of(logs.iter().map(|x| (x - center).abs()).collect())?;
    // A CI half-width h around a mean m spans about h / m on the log
    // scale.
    let ci = median_of(
        values
            .iter()
            .map(|v| v.ci_half_width / v.mean)
            .filter(|h| h.is_finite())
            .collect(),
    )
    .unwrap_or(0.0);
    let (spread, basis) = if mad >= ci && mad >= MIN_RELATIVE_SPREAD {
        (mad, SpreadBasis::Mad)
    } else if ci >= MIN_RELATIVE_SPREAD {
        (ci, SpreadBasis::CaseCi)
    } else {
        (MIN_RELATIVE_SPREAD, SpreadBasis::Floor)
    };
    // The median itself, not exp(ln): exact for an odd count.
    let mut sorted: Vec<f64> = values.iter().map(|v| v.mean).collect();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    let median = if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] * sorted[mid]).sqrt()
    } else {
        sorted[mid]
    };
    let hosts = logs
        .iter()
        .zip(values)
        .map(|(x, v)| {
            let modified_z = MAD_TO_SD * (x - center) / spread;
            HostStanding {
                modified_z,
                ratio: v.mean / median,
                outlier: modified_z.abs() > MODIFIED_Z_THRESHOLD,
            }
        })
        .collect();
    Some(FleetSpread {
        median,
        mad,
        spread,
        basis,
        hosts,
    })
}

/// The median of `values` (the mean of the middle two for an even count);
/// `None` for none.
fn median_of(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(means: &[f64], relative_ci: f64) -> Vec<HostValue> {
        means
            .iter()
            .map(|&mean| HostValue {
                mean,
                ci_half_width: relative_ci * mean,
            })
            .collect()
    }

    fn named(spread: &FleetSpread) -> Vec<bool> {
        spread.hosts.iter().map(|h| h.outlier).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_host_far_outside_the_mad_is_named_with_its_ratio() {
        // e^±0.05 around 100, and a host at a quarter: the logs' MAD is
        // 0.05, above the CIs (1%) and the floor (0.02).
        let (lo, hi) = (100.0 * (-0.05f64).exp(), 100.0 * 0.05f64.exp());
        let fleet = outlier_hosts(&hosts(&[100.0, lo, hi, 100.0, 25.0], 0.01)).unwrap();
        assert!(close(fleet.median, 100.0));
        assert!(close(fleet.mad, 0.05), "{fleet:?}");
        assert_eq!(fleet.basis, SpreadBasis::Mad);
        assert_eq!(named(&fleet), [false, false, false, false, true]);
        let lemon = fleet.hosts[4];
        assert!(close(lemon.ratio, 0.25));
        assert!(close(lemon.modified_z, 0.6745 * 0.25f64.ln() / 0.05));
        // One MAD above: 0.6745, not named.
        assert!(close(fleet.hosts[2].modified_z, 0.6745));
    }

    #[test]
    fn the_threshold_is_strict_at_3_5() {
        // MAD 0.1 on the log scale: a host 3.5 / 0.6745 MADs up is on it.
        let at = |k: f64| 100.0 * (0.1 * k).exp();
        let means = |last: f64| [at(-1.0), at(0.0), at(1.0), at(0.0), last];
        let edge = 3.5 / 0.6745;
        let fleet = outlier_hosts(&hosts(&means(at(edge)), 0.0)).unwrap();
        assert!(close(fleet.mad, 0.1));
        assert!(close(fleet.hosts[4].modified_z, 3.5));
        let inside = outlier_hosts(&hosts(&means(at(edge - 0.01)), 0.0)).unwrap();
        assert!(!inside.hosts[4].outlier);
        let beyond = outlier_hosts(&hosts(&means(at(edge + 0.01)), 0.0)).unwrap();
        assert!(beyond.hosts[4].outlier);
    }

    #[test]
    fn three_equal_hosts_have_no_mad_and_the_floor_decides() {
        // Two hosts identical, the third 5% off: MAD 0. Judged against the
        // 0.02 floor, ln 1.05 = 0.049 is 1.6 z: not named.
        let fleet = outlier_hosts(&hosts(&[100.0, 100.0, 105.0], f64::INFINITY)).unwrap();
        assert_eq!(fleet.mad, 0.0);
        assert_eq!(fleet.basis, SpreadBasis::Floor);
        assert_eq!(fleet.spread, 0.02);
        assert_eq!(named(&fleet), [false, false, false]);
        assert!(close(
            fleet.hosts[2].modified_z,
            0.6745 * 1.05f64.ln() / 0.02
        ));
        // 20% slower is ln 0.8 = -0.22, 7.5 z: named.
        let fleet = outlier_hosts(&hosts(&[100.0, 100.0, 80.0], f64::INFINITY)).unwrap();
        assert_eq!(named(&fleet), [false, false, true]);
        // All equal: nobody is named, and nothing divides by zero.
        let fleet = outlier_hosts(&hosts(&[7.0, 7.0, 7.0], 0.0)).unwrap();
        assert_eq!(named(&fleet), [false, false, false]);
        assert!(fleet.hosts.iter().all(|h| h.modified_z == 0.0));
    }

    #[test]
    fn the_hosts_own_ci_keeps_a_difference_it_cannot_resolve_unnamed() {
        // 80 against 100, 100: named on the floor alone (above), but each
        // host's CI is ±10%, so the spread is 0.1 and ln 0.8 is 1.5 z.
        let fleet = outlier_hosts(&hosts(&[100.0, 100.0, 80.0], 0.1)).unwrap();
        assert_eq!(fleet.basis, SpreadBasis::CaseCi);
        assert!(close(fleet.spread, 0.1));
        assert_eq!(named(&fleet), [false, false, false]);
        // A host far beyond what its CI allows is still named.
        let fleet = outlier_hosts(&hosts(&[100.0, 100.0, 20.0], 0.1)).unwrap();
        assert_eq!(named(&fleet), [false, false, true]);
        // The median CI: one host's wide CI does not hide the others'.
        let mut values = hosts(&[100.0, 101.0, 99.0, 60.0], 0.01);
        values[3].ci_half_width = 50.0;
        let fleet = outlier_hosts(&values).unwrap();
        assert_eq!(named(&fleet), [false, false, false, true]);
    }

    #[test]
    fn a_faster_host_is_as_far_as_a_slower_one_by_the_same_factor() {
        let fleet =
            outlier_hosts(&hosts(&[100.0, 100.0, 100.0, 300.0, 100.0 / 3.0], 0.01)).unwrap();
        assert_eq!(named(&fleet), [false, false, false, true, true]);
        assert!(close(fleet.hosts[3].modified_z, -fleet.hosts[4].modified_z));
        assert!(close(fleet.hosts[3].ratio, 3.0));
    }

    #[test]
    fn too_few_hosts_or_no_ratio_is_no_judgement() {
        assert_eq!(outlier_hosts(&hosts(&[1.0, 100.0], 0.0)), None);
        assert_eq!(outlier_hosts(&hosts(&[0.0, 1.0, 5.0], 0.0)), None);
        assert_eq!(outlier_hosts(&hosts(&[1.0, f64::NAN, 1.0], 0.0)), None);
    }
}
