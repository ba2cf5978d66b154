//! Builds every case of a run before the first one runs, so that a case
//! that cannot run here is refused before anything is measured.
//!
//! Each value of a sweep is checked when the plan is made, but some checks
//! need the whole case or the host: a CBC block size that is not a
//! multiple of 16, a `db` URL that does not parse, a directory that is
//! missing or too full for the data, arrays too large for this host's
//! memory. Without this pass such a case fails only when its turn comes,
//! possibly after an hour of other cases. Building is cheap and has no
//! effect beyond the check (see [`Workload::build`]); the cases built here
//! are dropped, and each is built again when it runs.
//!
//! [`Workload::build`]: crate::engine::Workload::build

use crate::engine::{CaseEnv, PlannedCase};

/// A case of the plan that cannot run here.
#[derive(Debug, thiserror::Error)]
#[error("case {position} of {total} ({label}) cannot run: {reason}; nothing was measured")]
pub struct CaseCannotRun {
    /// 1-based position of the case in the plan.
    pub position: usize,
    /// How many cases the plan has.
    pub total: usize,
    /// The case as a user would type it.
    pub label: String,
    /// Why, with its causes.
    pub reason: String,
}

/// Builds each case of `cases` under `env` and drops it; the first that
/// fails to build is returned.
pub fn check_cases(cases: &[PlannedCase], env: &CaseEnv) -> Result<(), CaseCannotRun> {
    for (index, planned) in cases.iter().enumerate() {
        if let Err(err) = planned.workload.build(&planned.params, env) {
            return Err(CaseCannotRun {
                position: index + 1,
                total: cases.len(),
                label: planned.label(),
                reason: format!("{err:#}"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(memory_bytes: u64) -> CaseEnv {
        CaseEnv {
            cpus: vec![0],
            total_cache_bytes: 1 << 20,
            memory_bytes,
        }
    }

    #[test]
    fn a_sweep_value_that_cannot_build_is_named_with_its_place() {
        // 16 and 64 are whole AES blocks; 100 is not.
        let plan = super::super::plan(
            &["crypto.speed".to_string()],
            &[
                "algorithm=aes-256-cbc".to_string(),
                "block_size=16,64,100".to_string(),
            ],
            1,
        )
        .unwrap();
        let err = check_cases(&plan.cases, &env(1 << 30)).unwrap_err();
        assert_eq!(err.position, 3);
        assert_eq!(err.total, 3);
        assert!(err.label.contains("block_size=100"), "{}", err.label);
        assert!(err.reason.contains("multiple of 16"), "{}", err.reason);
        assert!(err.to_string().ends_with("; nothing was measured"), "{err}");
    }

    #[test]
    fn cases_that_can_run_pass() {
        let plan = super::super::plan(
            &["crypto.speed".to_string()],
            &["block_size=16,64".to_string()],
            1,
        )
        .unwrap();
        check_cases(&plan.cases, &env(1 << 30)).unwrap();
    }

    #[test]
    fn the_host_is_taken_into_account() {
        // 3 arrays of 20 M doubles (480 MB) do not fit in half of 512 MiB.
        let plan = super::super::plan(
            &["memory.stream".to_string()],
            &["array_size=20000000".to_string()],
            1,
        )
        .unwrap();
        let err = check_cases(&plan.cases, &env(512 << 20)).unwrap_err();
        assert!(err.reason.contains("more than half"), "{}", err.reason);
        check_cases(&plan.cases, &env(16 << 30)).unwrap();
    }
}
