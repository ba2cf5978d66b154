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

use crate::engine::{CaseEnv, PlannedCase, is_host_lacks};

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
    check_cases_skipping(cases, env, false).map(|_| ())
}

/// As [`check_cases`], but when `skip_lacking`, a case that fails only
/// because the host lacks something ([`crate::engine::HostLacks`]) is not
/// an error: its index and the reason are returned instead, for the run to
/// leave it out and say so (a profile is a menu for any host).
pub fn check_cases_skipping(
    cases: &[PlannedCase],
    env: &CaseEnv,
    skip_lacking: bool,
) -> Result<Vec<(usize, String)>, CaseCannotRun> {
    let mut skipped = Vec::new();
    for (index, planned) in cases.iter().enumerate() {
        if let Err(err) = planned.workload.build(&planned.params, env) {
            if skip_lacking && is_host_lacks(&err) {
                skipped.push((index, format!("{err:#}")));
                continue;
            }
            return Err(CaseCannotRun {
                position: index + 1,
                total: cases.len(),
                label: planned.label(),
                reason: format!("{err:#}"),
            });
        }
    }
    Ok(skipped)
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

    /// A workload whose cases need a tool: value 1 has it, value 2 lacks
    /// it, value 3 is a wrong parameter.
    struct NeedsATool;

    impl crate::engine::Workload for NeedsATool {
        fn id(&self) -> &'static str {
            "test.needs_a_tool"
        }
        fn version(&self) -> u32 {
            1
        }
        fn summary(&self) -> &'static str {
            "test"
        }
        fn params(&self) -> Vec<crate::engine::ParamSpec> {
            Vec::new()
        }
        fn build(
            &self,
            params: &crate::engine::ParamSet,
            _env: &CaseEnv,
        ) -> anyhow::Result<Box<dyn crate::engine::Case>> {
            match params.value("which").to_string().as_str() {
                "lacks" => Err(crate::engine::HostLacks(
                    "needs `make`; on Debian: apt-get install make".into(),
                )
                .into()),
                "wrong" => anyhow::bail!("which=wrong is not allowed"),
                _ => anyhow::bail!("built (stands for a case that can run)"),
            }
        }
    }

    #[test]
    fn a_case_the_host_lacks_a_tool_for_is_skipped_only_when_asked() {
        static WORKLOAD: NeedsATool = NeedsATool;
        let case = |which: &str| PlannedCase {
            workload: &WORKLOAD,
            params: crate::engine::ParamSet::from_values(
                [(
                    "which".to_string(),
                    crate::engine::ParamValue::Text(which.to_string()),
                )]
                .into(),
            ),
        };
        let cases = vec![case("lacks")];
        let skipped = check_cases_skipping(&cases, &env(1 << 30), true).unwrap();
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].0, 0);
        assert!(skipped[0].1.contains("apt-get install make"), "{skipped:?}");
        // Named by the user: refused, with the reason.
        let err = check_cases_skipping(&cases, &env(1 << 30), false).unwrap_err();
        assert!(err.reason.contains("needs `make`"), "{err}");
        // A wrong parameter is refused even from a profile.
        let err = check_cases_skipping(&[case("wrong")], &env(1 << 30), true).unwrap_err();
        assert!(err.reason.contains("not allowed"), "{err}");
    }
}
