//! The engine runs cases: in rounds (each a fresh start, the cases' order
//! shuffled between rounds), each round a prepare, a warm-up, counted
//! trials and a cleanup, until the confidence interval of the round means
//! is tight or the budget is spent. It owns repetition, timing, trial
//! health and cancellation; workloads only know how to exercise the
//! system. `ab_runner.rs` runs the same plan under two settings in
//! interleaved rounds (`sledge ab`).

pub mod ab_runner;
mod clock_drop;
pub mod context;
mod energy_metric;
pub mod estimate;
pub mod executor;
pub mod host_lacks;
pub mod index_entry;
pub mod methodology;
pub mod params;
pub mod planner;
pub mod precision;
pub mod progress;
mod record;
pub mod round;
pub mod run_section;
pub mod runner;
#[cfg(test)]
mod sensor_tests;
pub mod shared_data;
mod shared_pool;
#[cfg(test)]
mod shared_tests;
#[cfg(test)]
pub(crate) mod test_fixtures;
pub mod trial_monitor;
pub mod typed_params;
#[cfg(test)]
mod warmup_tests;
pub mod workload;

pub use ab_runner::{AbOutcome, AbSetup, AbSide, run_ab_plan};
pub use context::{CancelToken, Cancelled, Deadline, TrialContext};
pub use executor::{InProcess, RoundExecutor, RoundOutcome, TrialResult};
pub use host_lacks::{HostLacks, is_host_lacks};
pub use index_entry::{IndexEntry, IndexEntryOf};
pub use methodology::Methodology;
pub use params::{ParamKind, ParamRole, ParamSet, ParamSpec, ParamValue};
pub use planner::{History, NoHistory, VarianceHint};
pub use progress::{Progress, Silent};
pub use round::{Round, RoundRequest};
pub use run_section::RunSection;
pub use runner::{CaseOutcome, PlanOutcome, RunSetup, run_case, run_plan};
pub use shared_data::SharedPreparation;
pub use trial_monitor::{ProcMonitor, ScriptedMonitor, TrialMonitor, host_sensors};
pub use typed_params::{FromParam, Params};
pub use workload::{
    Case, CaseEnv, LaterParam, Metric, PlannedCase, TrialOutput, UntimedWork, Workload,
};
