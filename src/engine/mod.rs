//! The engine runs cases: prepare, warm-up, counted trials until the
//! confidence interval is tight, cleanup. It owns repetition, timing of the
//! whole case, cancellation and the honest-run checks; workloads only know
//! how to exercise the system.

pub mod affinity;
pub mod context;
pub mod methodology;
pub mod params;
pub mod progress;
pub mod runner;
pub mod workload;

pub use context::{CancelToken, Cancelled, Deadline, TrialContext};
pub use methodology::Methodology;
pub use params::{ParamKind, ParamSet, ParamSpec, ParamValue};
pub use progress::{Progress, Silent};
pub use runner::{CaseOutcome, PlanOutcome, PlannedCase, run_case, run_plan};
pub use workload::{Case, CaseEnv, Metric, TrialOutput, Workload};
