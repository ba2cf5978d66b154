//! Statistics over benchmark samples: pure functions, no I/O.
//!
//! Every benchmark is run a handful of times (typically 3 to 10), so every
//! method here was chosen to be honest with *small* samples:
//!
//! * [`summarize`] (`summary.rs`): mean, median, sample standard deviation
//!   and a 95% confidence interval of the mean from **Student's t**, because
//!   with so few runs the normal approximation would claim far more
//!   precision than the data has.
//! * [`tukey_outliers`] (`outliers.rs`): **Tukey's fences** on type-7
//!   quartiles; robust (quartiles are not dragged by the outlier itself),
//!   distribution-free and familiar from box plots. Outliers are flagged,
//!   never dropped: on a server they are often the finding.
//! * [`compare()`] (`compare.rs`): **Welch's t-test** (no equal-variance
//!   assumption, works for n = 3 where rank tests cannot reach p < 0.05)
//!   combined with a **noise threshold**, as criterion.rs does, so that tiny
//!   but "significant" shifts are not reported as changes; the ratio of
//!   means gets a delta-method confidence interval on the log scale.
//! * [`summarize_rounds`] (`hierarchical.rs`): the two-level summary of a
//!   case measured in several rounds of trials (Kalibera and Jones): the
//!   mean of the round means, a CI from the round means, and the variance
//!   components that decide how the next run spends its time.
//! * [`run_noise`] (`run_noise.rs`): how much a case moves between runs on
//!   one host, from earlier runs (successive differences, level shifts
//!   left out); [`compare_sides`] never calls a difference inside that
//!   band a change.
//! * [`outlier_hosts`] (`outlier_hosts.rs`): the host of a fleet whose
//!   value of a case lies more than 3.5 **modified z-scores** (Iglewicz
//!   and Hoaglin: distances in median absolute deviations) from the
//!   fleet's median, with a floor under the spread so that three nearly
//!   equal hosts do not name their measurement noise.
//! * [`compare_paired`] (`paired.rs`): two settings measured in the same
//!   rounds (`sledge ab`), judged on the **per-round paired ratios** with a
//!   paired t interval of their logarithms: the drift the rounds share
//!   cancels.
//! * [`fit_usl`] (`scaling.rs`): **Gunther's Universal Scalability Law**
//!   fitted by non-linear least squares to the per-trial values of a sweep
//!   over threads, copies, clients or connections (contention σ, coherency
//!   κ, the peak), and [`speedup()`] with parallel efficiency for two steps.
//! * [`read_histogram`] (`histogram_bytes.rs`): a serialized latency
//!   histogram from a file or another host, checked before HdrHistogram's
//!   deserializer (which trusts its input) sees it.
//! * [`change_points`] (`changepoint.rs`): where a host's history of a
//!   case moved to another level: **E-Divisive means** (Matteson and
//!   James) with Welch's t-test as its deterministic significance test,
//!   as Hunter / Apache Otava do.
//! * `student_t.rs`: a thin wrapper around `statrs` for the t quantile and
//!   CDF, so the constants have names.
//!
//! Each submodule's documentation gives the detailed reasoning.

mod changepoint;
mod hierarchical;
mod histogram_bytes;
mod latency_histogram;
mod outlier_hosts;
mod outliers;
mod paired;
mod run_comparison;
mod run_noise;
mod scaling;
mod student_t;
mod summary;

pub use changepoint::{CANDIDATE_P_VALUE, ChangePoint, MAX_P_VALUE, MIN_SIDE, change_points};
pub use hierarchical::{CiBasis, Levels, summarize_rounds};
pub use histogram_bytes::{HistogramBytesError, MAX_INFLATED, read_histogram};
pub use latency_histogram::{LATENCY_MAX_NS, LATENCY_SIGFIG, latency_histogram};
pub use outlier_hosts::{
    FleetSpread, HostStanding, HostValue, MAD_TO_SD, MIN_HOSTS, MIN_RELATIVE_SPREAD,
    MODIFIED_Z_THRESHOLD, SpreadBasis, outlier_hosts,
};
pub use outliers::{TUKEY_FENCE, tukey_outliers};
pub use paired::{compare_paired, paired_half_width};
pub use run_comparison::{
    Comparison, Direction, NO_HISTORY_THRESHOLD, NOISE_THRESHOLD, SIGNIFICANCE_LEVEL, Side,
    Verdict, VerdictBasis, compare, compare_sides,
};
pub use run_noise::{MAX_RUN_NOISE_SD_LOG, MIN_HISTORY_RUNS, RunNoise, SHIFT_FENCE, run_noise};
pub use scaling::{MIN_USL_STEPS, POOR_FIT_R_SQUARED, Peak, SpeedUp, UslFit, fit_usl, speedup};
pub use student_t::{CONFIDENCE_LEVEL, TWO_SIDED_QUANTILE_PROBABILITY, t_cdf, t_quantile_95};
pub use summary::{Summary, summarize};
