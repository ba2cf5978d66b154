//! What one round of one case is handed: the case, what the round is to
//! do ([`RoundRequest`], the part that crosses to a round's own process),
//! and the run it belongs to ([`Round`]).
//!
//! Every [`RoundExecutor`](super::executor::RoundExecutor) needs the same
//! five things, and an executor that wraps another (a side of `sledge ab`
//! that sets its knobs first, a test that scales what comes back) passes
//! them on untouched. Held together they travel as one borrow, so a new
//! thing a round needs is one field here rather than one more argument
//! on every executor and every call.

use std::time::Duration;

use super::context::TrialContext;
use super::progress::Progress;
use super::workload::{CaseEnv, PlannedCase};

/// What a round is asked to do.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RoundRequest {
    /// Which round of the case this is, from 0.
    pub round: u32,
    /// Trials run first and not counted.
    pub warmup_trials: u32,
    /// Counted trials at least.
    pub min_trials: u32,
    /// Counted trials at most; above `min_trials`, trials stop early once
    /// the primary metric's CI is within `ci_target` of its mean.
    pub max_trials: u32,
    /// See `max_trials`.
    pub ci_target: f64,
    /// No counted trial starts past this (once `min_trials` ran).
    pub budget: Duration,
    /// A counted trial the monitor flagged (steal, swap, busy, throttled) is
    /// replaced by one more trial, at most this many times per round and
    /// never twice in a row; the flagged trial is kept, marked replaced,
    /// and left out of the statistics.
    pub max_replacements: u32,
    /// Where to find what the case prepared once for all its rounds
    /// ([`super::shared_data`]); absent from an older sledge's
    /// request (a side of `ab` run by another build).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<String>,
}

/// One round of one case, borrowed from the plan running it.
#[derive(Clone, Copy)]
pub struct Round<'a> {
    /// The case: its workload and parameters.
    pub planned: &'a PlannedCase,
    /// Which round this is and how many trials it runs.
    pub request: &'a RoundRequest,
    /// What the workload may know about the run.
    pub env: &'a CaseEnv,
    /// The CPUs the round runs on and the user's stop request.
    pub ctx: &'a TrialContext,
    /// Where the round's trials are reported as they finish.
    pub progress: &'a dyn Progress,
}
