//! Profiles (named lists of cases) and the planning of a run.

pub mod defaults;
pub mod execute;
pub mod plan;
pub mod profiles;

pub use defaults::defaults_for;
pub use execute::{RunOptions, execute};
pub use plan::{DEFAULT_PROFILE, Plan, PlanError, plan};
pub use profiles::{Profile, find as find_profile};
