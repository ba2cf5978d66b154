//! Profiles (named lists of cases) and the planning of a run.

pub mod ab;
mod bad_request;
pub mod battery;
pub mod battery_file;
mod battery_values;
pub mod defaults;
pub mod execute;
pub mod fallback;
pub mod import;
pub mod interrupt;
pub mod leftovers;
pub mod notes;
pub mod overrides;
pub mod plan;
pub mod plan_error;
pub mod plan_estimate;
pub mod planning_history;
pub mod preflight;
pub mod profile;
pub mod profiles;
pub mod run_request;
pub mod subprocess;

pub use defaults::defaults_for;
pub use execute::{RunOptions, StoreFailedMidRun, execute};
pub use fallback::StoreLostMidRun;
pub use plan::{DEFAULT_PROFILE, Plan, PlanError, plan};
pub use preflight::CaseCannotRun;
pub use profiles::{Profile, find as find_profile};
pub use run_request::{BadRequest, Prepared, Repetition, RunRequest};
