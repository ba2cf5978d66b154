//! The scaling sweeps of a run ([`crate::analysis::scaling_fit`]) in words:
//! the Universal Scalability Law fit in one line.

use super::format::value;
use crate::analysis::{POOR_FIT_R_SQUARED, UslFit};

/// The fit in one line: `USL λ=812 σ=0.012 κ=0.0031 R²=0.97 · peak 17.8
/// threads at 12400 events/s`, with what makes it doubtful.
pub fn usl_line(fit: &UslFit, param: &str, unit: &str) -> String {
    let mut line = format!(
        "USL λ={} σ={} κ={} R²={:.3}",
        value(fit.lambda),
        significant(fit.sigma),
        significant(fit.kappa),
        fit.r_squared
    );
    match &fit.peak {
        Some(peak) => {
            line.push_str(&format!(
                " · peak {:.1} {param} at {} {unit}",
                peak.n,
                value(peak.throughput)
            ));
        }
        None if fit.sigma >= 1.0 => line.push_str(" · no gain from parallelism (σ at its bound 1)"),
        None => line.push_str(" · no peak (no coherency cost: approaches λ/σ)"),
    }
    if fit.poor_fit {
        line.push_str(&format!(
            " · poor fit (R² < {}): do not rely on it",
            POOR_FIT_R_SQUARED
        ));
    }
    line
}

/// Three significant digits without an exponent for values from 1e-4 up,
/// else scientific: `0.0123`, `0.000104`, `2.1e-7`.
fn significant(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e-4 {
        let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
        format!("{v:.decimals$}")
    } else {
        format!("{v:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::scaling_fit;
    use crate::report::fixtures::demo_run;

    #[test]
    fn the_fit_of_a_found_sweep_reads_with_its_peak() {
        let sweeps = scaling_fit::find(&demo_run(1, "a", 1.0));
        let fit = sweeps[0].usl.as_ref().expect("cpu.primes' 4 steps: a fit");
        let line = usl_line(fit, "threads", "events/s");
        assert!(line.starts_with("USL λ="), "{line}");
        assert!(
            line.contains("peak") && line.contains("threads at"),
            "{line}"
        );
    }

    #[test]
    fn a_fit_without_a_peak_says_why() {
        let mut fit = UslFit {
            lambda: 1000.0,
            sigma: 1.0,
            kappa: 0.0165,
            r_squared: 0.05,
            peak: None,
            points: 60,
            steps: 6,
            poor_fit: true,
        };
        let line = usl_line(&fit, "threads", "events/s");
        assert!(line.contains("no gain from parallelism"), "{line}");
        assert!(
            line.ends_with("poor fit (R² < 0.9): do not rely on it"),
            "{line}"
        );
        fit.sigma = 0.1;
        fit.kappa = 0.0;
        let line = usl_line(&fit, "threads", "events/s");
        assert!(line.contains("no peak (no coherency cost"), "{line}");
    }

    #[test]
    fn small_coefficients_keep_three_significant_digits() {
        assert_eq!(significant(0.02773), "0.0277");
        assert_eq!(significant(0.0001044), "0.000104");
        assert_eq!(significant(2.1e-7), "2.1e-7");
        assert_eq!(significant(0.0), "0");
        assert_eq!(significant(0.5), "0.500");
    }
}
