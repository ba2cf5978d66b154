//! What a running case can see: the CPUs it may use and whether the user
//! asked to stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Set when the user pressed Ctrl-C (or a test asks to stop). Workload
/// loops poll it so that a cancellation takes effect within a fraction of a
/// second.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks everything holding this token to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether a stop was asked for.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The error a workload returns when it stopped because of a cancellation.
#[derive(Debug, thiserror::Error)]
#[error("cancelled by the user")]
pub struct Cancelled;

/// Context passed to every case call.
#[derive(Debug, Clone)]
pub struct TrialContext {
    /// The CPUs the run may use; workers that pin themselves use these.
    pub cpus: Vec<usize>,
    /// The user's stop request.
    pub cancel: CancelToken,
    /// Which round of the case this is, from 0 (see the engine's rounds).
    pub round: u32,
    /// Where to find what the case prepared once for all its rounds
    /// ([`super::shared_data`]), when it did.
    pub shared: Option<String>,
}

impl TrialContext {
    /// A context for round 0 on `cpus`.
    pub fn new(cpus: Vec<usize>, cancel: CancelToken) -> Self {
        TrialContext {
            cpus,
            cancel,
            round: 0,
            shared: None,
        }
    }

    /// Returns `Err(Cancelled)` when the user asked to stop.
    pub fn check_cancelled(&self) -> Result<(), Cancelled> {
        if self.cancel.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }
}

/// A deadline for time-bounded loops: `expired` is cheap to call often and
/// also turns true on cancellation.
#[derive(Debug, Clone)]
pub struct Deadline {
    end: Instant,
    cancel: CancelToken,
}

impl Deadline {
    /// A deadline `duration` from now.
    pub fn after(duration: Duration, cancel: &CancelToken) -> Self {
        Deadline {
            end: Instant::now() + duration,
            cancel: cancel.clone(),
        }
    }
    /// True once the time is up or the user cancelled.
    pub fn expired(&self) -> bool {
        Instant::now() >= self.end || self.cancel.is_cancelled()
    }
    /// Whether the user cancelled (as opposed to the time running out).
    pub fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}
