//! Profiles (named lists of cases) and the planning of a run.

pub mod execute;
pub mod plan;
pub mod preflight;
pub mod profiles;

pub use execute::{RunOptions, execute};
pub use plan::{DEFAULT_PROFILE, Plan, PlanError, plan};
pub use preflight::CaseCannotRun;
pub use profiles::{Profile, find as find_profile};
