//! Judgement over stored runs: what the reports show, decided apart from
//! how they show it. Each file computes one typed, serializable view that
//! `report` renders: comparisons and their verdicts (`verdicts`), the host
//! facts that differ between runs (`host_facts`), a host's history and its
//! change points (`change_points`, asked for through `history_request`),
//! the outlier hosts of a fleet (`host_outliers`), pivot tables
//! (`pivot_grouping`, over the parameters that vary: `varying`), scaling
//! sweeps and their fits (`scaling_fit`), run-to-run noise from the store
//! (`noise_history`), performance per unit of price (`price_ratio`), the
//! latency percentile spectrum of a stored histogram (`latency_spectrum`).
//! Cases, sweeps and pivot tables of several runs are lined up in
//! `matched_across_runs`, and `report_view` gathers all a report of
//! several runs shows into one view.
//!
//! The statistics themselves are `stats`'s; this layer picks what they
//! are applied to (which cases match, which trials count, which hosts
//! form a population). The words of the statistics that the views carry
//! (a direction, a verdict, a fit, the thresholds the reports name) are
//! re-exported here, so that `report` reads them from the views' layer
//! and calls no statistics of its own.

pub mod change_points;
pub mod history_request;
pub mod host_facts;
pub mod host_outliers;
pub mod latency_spectrum;
pub mod matched_across_runs;
pub mod noise_history;
pub mod pivot_grouping;
pub mod price_ratio;
pub mod report_view;
pub mod scaling_fit;
pub mod varying;
pub mod verdicts;

pub use crate::stats::{
    CiBasis, Comparison, Direction, HostValue, MAX_P_VALUE, MAX_RUN_NOISE_SD_LOG, MIN_HISTORY_RUNS,
    MIN_SIDE, MIN_USL_STEPS, NO_HISTORY_THRESHOLD, NOISE_THRESHOLD, POOR_FIT_R_SQUARED, RunNoise,
    SpeedUp, SpreadBasis, UslFit, Verdict, VerdictBasis,
};
