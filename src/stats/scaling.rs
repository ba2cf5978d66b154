//! How throughput scales with parallelism: speed-up and efficiency between
//! two steps of a sweep, and Gunther's Universal Scalability Law fitted to
//! a sweep of four or more steps.
//!
//! The **Universal Scalability Law** (Neil J. Gunther, *Guerrilla Capacity
//! Planning*, Springer 2007, ch. 4-6) models the throughput at parallelism
//! N (threads, copies, clients, connections) as
//!
//! ```text
//! X(N) = λ N / (1 + σ (N - 1) + κ N (N - 1))
//! ```
//!
//! λ is the throughput of one unit without interference, σ the share of
//! work that is serialized (contention: Amdahl's law is κ = 0) and κ the
//! cost of keeping shared data coherent, which grows with every pair of
//! units and makes throughput fall past a peak at
//! N* = √((1 - σ) / κ).
//!
//! **Fitting.** λ, σ and κ are found by non-linear least squares on the
//! per-trial values (every trial a point, not the means, so the fit sees
//! the spread), with σ and κ kept within [0, 1]: a Levenberg-Marquardt
//! descent with Marquardt's diagonal scaling, started from the best point
//! of a coarse logarithmic grid over (σ, κ) with λ solved exactly for each
//! grid point (for fixed σ and κ the model is linear in λ). The grid makes
//! the result independent of a lucky starting guess; the descent makes it
//! precise. R² is 1 - SSE / SST over the same points.
//!
//! **Why not the linearised fit** (Gunther's original recipe: normalise by
//! X(1) and fit a quadratic to N/C(N) - 1): it trusts the single measurement
//! at N = 1 completely, needs a step at N = 1, and weighs the points in a
//! distorted way. The R package `usl` moved to non-linear least squares for
//! the same reasons; its published fit of the SPEC SDM91 data is this
//! module's reference test.

use serde::Serialize;

/// A sweep needs at least this many distinct steps for a USL fit: three
/// parameters from three steps would fit any curve exactly.
pub const MIN_USL_STEPS: usize = 4;

/// Below this R² the fit is flagged as poor: the USL then explains less
/// than 90% of the variation of the per-trial values, so its σ, κ and peak
/// should not be relied on. The project's choice; the `usl` package reports
/// R² without a threshold.
pub const POOR_FIT_R_SQUARED: f64 = 0.9;

/// Upper bound of σ and κ in the fit. σ = 1 already means "no gain from any
/// parallelism"; κ = 1 makes throughput fall from N = 2 on.
const COEFFICIENT_MAX: f64 = 1.0;

/// Speed-up of one step against a base step, and the parallel efficiency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpeedUp {
    /// `X(n) / X(base)`.
    pub speedup: f64,
    /// Speed-up divided by `n / base`: 1 is perfect scaling.
    pub efficiency: f64,
}

/// The speed-up and parallel efficiency of throughput `x` at parallelism
/// `n` against throughput `base_x` at `base_n` ("1 core vs 8": base 1).
/// `None` if any input is not a positive finite number.
pub fn speedup(base_n: f64, base_x: f64, n: f64, x: f64) -> Option<SpeedUp> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !(positive(base_n) && positive(base_x) && positive(n) && positive(x)) {
        return None;
    }
    let speedup = x / base_x;
    Some(SpeedUp {
        speedup,
        efficiency: speedup / (n / base_n),
    })
}

/// Where the fitted throughput peaks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Peak {
    /// N* = √((1 - σ) / κ).
    pub n: f64,
    /// X(N*).
    pub throughput: f64,
}

/// The Universal Scalability Law fitted to a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UslFit {
    /// Throughput of one unit without contention or coherency cost.
    pub lambda: f64,
    /// Contention (serialized share), 0 to 1.
    pub sigma: f64,
    /// Coherency cost per pair of units, 0 to 1.
    pub kappa: f64,
    /// Share of the per-trial values' variation the fit explains.
    pub r_squared: f64,
    /// Where throughput peaks; `None` when it never does (κ = 0, or σ ≥ 1
    /// where it only falls).
    pub peak: Option<Peak>,
    /// Number of (N, X) points fitted.
    pub points: usize,
    /// Number of distinct N among them.
    pub steps: usize,
    /// R² below [`POOR_FIT_R_SQUARED`]: do not rely on the coefficients.
    pub poor_fit: bool,
}

impl UslFit {
    /// The fitted throughput at parallelism `n`.
    pub fn predict(&self, n: f64) -> f64 {
        usl(self.lambda, self.sigma, self.kappa, n)
    }
}

/// X(N) for the given coefficients.
fn usl(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Fits the USL to `(N, X)` points (one per trial). Points with N < 1 or a
/// non-finite or negative X are ignored. `None` when fewer than
/// [`MIN_USL_STEPS`] distinct N remain or the throughput is all zero.
pub fn fit_usl(points: &[(f64, f64)]) -> Option<UslFit> {
    let points: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|&(n, x)| n.is_finite() && n >= 1.0 && x.is_finite() && x >= 0.0)
        .collect();
    let mut steps: Vec<f64> = points.iter().map(|p| p.0).collect();
    steps.sort_by(f64::total_cmp);
    steps.dedup();
    if steps.len() < MIN_USL_STEPS || points.iter().all(|p| p.1 == 0.0) {
        return None;
    }

    let (sigma, kappa) = grid_start(&points);
    let lambda = best_lambda(&points, sigma, kappa)?;
    let [lambda, sigma, kappa] = levenberg_marquardt(&points, [lambda, sigma, kappa]);

    let sse = sum_squared_errors(&points, lambda, sigma, kappa);
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let sst: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let r_squared = if sst > 0.0 { 1.0 - sse / sst } else { 1.0 };
    let peak = (kappa > 0.0 && sigma < 1.0).then(|| {
        let n = ((1.0 - sigma) / kappa).sqrt();
        Peak {
            n,
            throughput: usl(lambda, sigma, kappa, n),
        }
    });
    Some(UslFit {
        lambda,
        sigma,
        kappa,
        r_squared,
        peak,
        points: points.len(),
        steps: steps.len(),
        poor_fit: r_squared.is_nan() || r_squared < POOR_FIT_R_SQUARED,
    })
}

/// For fixed σ and κ, the λ that minimises the squared error: the model is
/// λ·g(N), so λ = Σ x g / Σ g².
fn best_lambda(points: &[(f64, f64)], sigma: f64, kappa: f64) -> Option<f64> {
    let (mut xg, mut gg) = (0.0, 0.0);
    for &(n, x) in points {
        let g = usl(1.0, sigma, kappa, n);
        xg += x * g;
        gg += g * g;
    }
    let lambda = xg / gg;
    (lambda.is_finite() && lambda > 0.0).then_some(lambda)
}

fn sum_squared_errors(points: &[(f64, f64)], lambda: f64, sigma: f64, kappa: f64) -> f64 {
    points
        .iter()
        .map(|&(n, x)| (x - usl(lambda, sigma, kappa, n)).powi(2))
        .sum()
}

/// The best (σ, κ) of a grid: 0 and 10⁻⁸ to 1 in steps of 10^(1/4) for
/// each, with λ solved exactly at each point.
fn grid_start(points: &[(f64, f64)]) -> (f64, f64) {
    let axis: Vec<f64> = std::iter::once(0.0)
        .chain((0..=32).map(|i| 10f64.powf(-8.0 + f64::from(i) / 4.0)))
        .collect();
    let mut best = (f64::INFINITY, 0.0, 0.0);
    for &sigma in &axis {
        for &kappa in &axis {
            if let Some(lambda) = best_lambda(points, sigma, kappa) {
                let sse = sum_squared_errors(points, lambda, sigma, kappa);
                if sse < best.0 {
                    best = (sse, sigma, kappa);
                }
            }
        }
    }
    (best.1, best.2)
}

/// Levenberg-Marquardt on (λ, σ, κ) with σ and κ clamped to
/// [0, COEFFICIENT_MAX] and λ kept positive; at most 500 iterations.
fn levenberg_marquardt(points: &[(f64, f64)], start: [f64; 3]) -> [f64; 3] {
    const MAX_ITERATIONS: usize = 500;
    let clamp = |p: [f64; 3]| {
        [
            p[0].max(f64::MIN_POSITIVE),
            p[1].clamp(0.0, COEFFICIENT_MAX),
            p[2].clamp(0.0, COEFFICIENT_MAX),
        ]
    };
    let mut p = clamp(start);
    let mut sse = sum_squared_errors(points, p[0], p[1], p[2]);
    let mut damping = 1e-3;
    for _ in 0..MAX_ITERATIONS {
        // Normal equations JᵀJ δ = Jᵀr with the analytic Jacobian.
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for &(n, x) in points {
            let d = 1.0 + p[1] * (n - 1.0) + p[2] * n * (n - 1.0);
            let f = p[0] * n / d;
            let grad = [n / d, -f * (n - 1.0) / d, -f * n * (n - 1.0) / d];
            let r = x - f;
            for i in 0..3 {
                jtr[i] += grad[i] * r;
                for j in 0..3 {
                    jtj[i][j] += grad[i] * grad[j];
                }
            }
        }
        let mut improved = false;
        while damping < 1e12 {
            let mut a = jtj;
            for (i, row) in a.iter_mut().enumerate() {
                // Marquardt's scaling; the floor keeps a parameter whose
                // column is zero (σ at N = 1 only) from freezing the step.
                row[i] += damping * jtj[i][i].max(1e-30);
            }
            let Some(step) = solve3(a, jtr) else {
                damping *= 10.0;
                continue;
            };
            let trial = clamp([p[0] + step[0], p[1] + step[1], p[2] + step[2]]);
            let trial_sse = sum_squared_errors(points, trial[0], trial[1], trial[2]);
            if trial_sse.is_finite() && trial_sse <= sse {
                let converged = sse - trial_sse <= 1e-14 * sse.max(f64::MIN_POSITIVE);
                p = trial;
                sse = trial_sse;
                damping = (damping / 10.0).max(1e-12);
                improved = !converged;
                break;
            }
            damping *= 10.0;
        }
        if !improved {
            break;
        }
    }
    p
}

/// Solves a 3×3 linear system by Gaussian elimination with partial
/// pivoting; `None` if it is singular.
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 || !a[pivot][col].is_finite() {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col];
        for row in col + 1..3 {
            let factor = a[row][col] / pivot_row[col];
            for (cell, above) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *cell -= factor * above;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let tail: f64 = (row + 1..3).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relative(actual: f64, expected: f64) -> f64 {
        ((actual - expected) / expected).abs()
    }

    /// SPEC SDM91 on a 16-CPU Sun SPARCcenter 2000 (October 1994): users
    /// against script executions per hour. Published in Gunther, *Guerrilla
    /// Capacity Planning* (2007), and shipped as the `specsdm91` data set of
    /// the R package `usl` (S. Möding), whose non-linear fit reports
    /// σ = 0.02773, κ = 1.044e-4, λ = 90.00, a residual standard error of
    /// 82.85 on 4 degrees of freedom and a peak of 1884 at 96.52 users
    /// (its `summary.Rout.save` and `peak-scalability.Rout.save` tests).
    const SPECSDM91: [(f64, f64); 7] = [
        (1.0, 64.9),
        (18.0, 995.9),
        (36.0, 1652.4),
        (72.0, 1853.2),
        (108.0, 1828.9),
        (144.0, 1775.0),
        (216.0, 1702.2),
    ];

    #[test]
    fn fits_the_published_spec_sdm91_result() {
        let fit = fit_usl(&SPECSDM91).unwrap();
        assert!(relative(fit.sigma, 0.02773) < 0.005, "{fit:?}");
        assert!(relative(fit.kappa, 1.044e-4) < 0.005, "{fit:?}");
        assert!(relative(fit.lambda, 90.00) < 0.005, "{fit:?}");
        let sse = sum_squared_errors(&SPECSDM91, fit.lambda, fit.sigma, fit.kappa);
        let residual_se = (sse / 4.0).sqrt();
        assert!(relative(residual_se, 82.85) < 0.001, "{residual_se}");
        let peak = fit.peak.unwrap();
        assert!(relative(peak.n, 96.52) < 0.002, "{peak:?}");
        assert!(relative(peak.throughput, 1884.0) < 0.001, "{peak:?}");
        assert_eq!((fit.points, fit.steps), (7, 7));
        assert!(fit.r_squared > 0.95 && !fit.poor_fit, "{fit:?}");
    }

    /// The first six points of the `raytracer` data set of the same package
    /// (a ray tracer on an SGI Origin 2000, processors against throughput);
    /// its `confint.Rout.save` reports σ = 0.02444, κ = 0.00163, λ = 20.856.
    #[test]
    fn fits_the_published_raytracer_result() {
        let points = [
            (1.0, 20.0),
            (4.0, 78.0),
            (8.0, 130.0),
            (12.0, 170.0),
            (16.0, 190.0),
            (20.0, 200.0),
        ];
        let fit = fit_usl(&points).unwrap();
        assert!(relative(fit.sigma, 0.02444) < 0.005, "{fit:?}");
        assert!(relative(fit.kappa, 0.00163) < 0.005, "{fit:?}");
        assert!(relative(fit.lambda, 20.856) < 0.001, "{fit:?}");
    }

    /// A small deterministic jitter in [-1, 1] (no random crate needed).
    fn jitter(i: usize) -> f64 {
        let x = ((i as f64 + 1.0) * 12.9898).sin() * 43758.5453;
        2.0 * (x - x.floor()) - 1.0
    }

    #[test]
    fn recovers_known_coefficients_from_noisy_trials() {
        for (lambda, sigma, kappa) in [
            (1000.0, 0.05, 0.002),
            (800.0, 0.0, 0.01),
            (50.0, 0.3, 0.0),
            (3000.0, 0.01, 0.0001),
        ] {
            let mut points = Vec::new();
            for (step, n) in [1.0, 2.0, 4.0, 8.0, 16.0, 32.0].into_iter().enumerate() {
                for trial in 0..5 {
                    // ±0.5% noise per trial.
                    let noise = 1.0 + 0.005 * jitter(step * 5 + trial);
                    points.push((n, usl(lambda, sigma, kappa, n) * noise));
                }
            }
            let fit = fit_usl(&points).unwrap();
            assert!(relative(fit.lambda, lambda) < 0.02, "{lambda} {fit:?}");
            assert!((fit.sigma - sigma).abs() < 0.01, "{sigma} {fit:?}");
            assert!((fit.kappa - kappa).abs() < 0.0005, "{kappa} {fit:?}");
            assert!(fit.r_squared > 0.99 && !fit.poor_fit, "{fit:?}");
            assert_eq!(fit.points, 30);
            match fit.peak {
                Some(peak) if kappa > 0.0 => {
                    let expected = ((1.0 - sigma) / kappa).sqrt();
                    assert!(relative(peak.n, expected) < 0.1, "{expected} {peak:?}");
                }
                // κ recovered as (nearly) 0 where it was 0: a peak far away
                // or none at all.
                Some(peak) => assert!(peak.n > 100.0, "{peak:?}"),
                None => assert_eq!(kappa, 0.0),
            }
        }
    }

    #[test]
    fn exact_data_is_fitted_exactly() {
        let points: Vec<(f64, f64)> = [1.0, 2.0, 3.0, 4.0, 6.0, 8.0]
            .iter()
            .map(|&n| (n, usl(500.0, 0.1, 0.02, n)))
            .collect();
        let fit = fit_usl(&points).unwrap();
        assert!(relative(fit.lambda, 500.0) < 1e-6, "{fit:?}");
        assert!(relative(fit.sigma, 0.1) < 1e-5, "{fit:?}");
        assert!(relative(fit.kappa, 0.02) < 1e-5, "{fit:?}");
        assert!(fit.r_squared > 0.999_999);
        assert!(relative(fit.predict(5.0), usl(500.0, 0.1, 0.02, 5.0)) < 1e-6);
    }

    #[test]
    fn noise_without_a_trend_is_flagged_as_a_poor_fit() {
        // Throughput that jumps around with no relation to N.
        let points: Vec<(f64, f64)> = (0..24)
            .map(|i| ((i % 4 + 1) as f64, 1000.0 + 400.0 * jitter(i)))
            .collect();
        let fit = fit_usl(&points).unwrap();
        assert!(fit.poor_fit, "{fit:?}");
        assert!(fit.r_squared < POOR_FIT_R_SQUARED);
    }

    #[test]
    fn too_few_steps_or_unusable_values_give_no_fit() {
        let three = [(1.0, 10.0), (2.0, 19.0), (4.0, 35.0), (4.0, 36.0)];
        assert_eq!(fit_usl(&three), None);
        let with_junk = [
            (1.0, 10.0),
            (2.0, f64::NAN),
            (0.0, 5.0),
            (4.0, 35.0),
            (8.0, 60.0),
        ];
        assert_eq!(fit_usl(&with_junk), None);
        let zeros = [(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)];
        assert_eq!(fit_usl(&zeros), None);
    }

    #[test]
    fn linear_scaling_has_no_peak() {
        let points: Vec<(f64, f64)> = (1..=8).map(|n| (n as f64, 100.0 * n as f64)).collect();
        let fit = fit_usl(&points).unwrap();
        assert!(fit.sigma < 1e-6 && fit.kappa < 1e-9, "{fit:?}");
        assert!(relative(fit.lambda, 100.0) < 1e-6, "{fit:?}");
        assert!(fit.peak.is_none_or(|p| p.n > 1e3), "{fit:?}");
    }

    #[test]
    fn speedup_and_efficiency_of_one_core_against_all() {
        // The articles' "1 core vs 8": 807 events/s on one, 5650 on eight.
        let s = speedup(1.0, 807.0, 8.0, 5650.0).unwrap();
        assert!((s.speedup - 7.0012).abs() < 1e-3, "{s:?}");
        assert!((s.efficiency - 0.87515).abs() < 1e-4, "{s:?}");
        // Against a base other than 1: 2 -> 8 threads at 3.2x is 80%.
        let s = speedup(2.0, 100.0, 8.0, 320.0).unwrap();
        assert!((s.efficiency - 0.8).abs() < 1e-12, "{s:?}");
        assert_eq!(speedup(1.0, 0.0, 2.0, 10.0), None);
        assert_eq!(speedup(1.0, 10.0, 2.0, f64::NAN), None);
    }
}
