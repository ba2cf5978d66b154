//! Why a plan could not be made: the user's mistakes in a selection or a
//! `--param`. Apart from the planner so that `overrides.rs`, which checks
//! the `--param`s, can name them without depending on the planner that
//! uses it.

use thiserror::Error;

use crate::engine::params::ParamError;

/// Why a plan could not be made. These are the user's mistakes: the CLI
/// exits with status 2 for them.
#[derive(Debug, Error)]
pub enum PlanError {
    #[error(
        "`{name}` is neither a profile nor a workload.\nProfiles: {profiles}\nWorkloads: {workloads}"
    )]
    UnknownTarget {
        name: String,
        profiles: String,
        workloads: String,
    },
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("battery file {0}")]
    Battery(#[from] super::battery::BatteryError),
    #[error(
        "--param {name}: no selected workload has a parameter `{name}` (selected: {selected}); `sledge workloads` lists every parameter"
    )]
    UnusedParam { name: String, selected: String },
    #[error(
        "--param {scope}:{name}: `{scope}` is not a workload; a scoped parameter is `WORKLOAD:NAME=VALUE` (`sledge workloads` lists them)"
    )]
    UnknownScope { scope: String, name: String },
    #[error("--param {scope}:{name}: `{scope}` is not selected in this run (selected: {selected})")]
    ScopeNotSelected {
        scope: String,
        name: String,
        selected: String,
    },
    #[error(
        "--param {scope}:{name}: `{scope}` has no parameter `{name}` (its parameters: {params})"
    )]
    ScopeLacksParam {
        scope: String,
        name: String,
        params: String,
    },
}
