//! Each workload's default parameters as a stored case would hold them, so
//! that the summary can leave out what the user did not change.

use std::collections::BTreeMap;

use crate::engine::params::resolve_cases;
use crate::results::RunRecord;

/// Per workload, its default parameters: name to canonical value.
pub type Defaults = BTreeMap<String, BTreeMap<String, String>>;

/// The canonical default parameters of every workload the run used, with
/// `all` resolved for the run's CPU count. Workloads this build does not
/// know (an imported run from a newer sledge) are left out.
pub fn defaults_for(run: &RunRecord) -> Defaults {
    let mut defaults = Defaults::new();
    for case in &run.cases {
        if defaults.contains_key(&case.workload) {
            continue;
        }
        let Some(workload) = crate::workloads::find(&case.workload) else {
            continue;
        };
        let resolved = resolve_cases(
            workload.id(),
            &workload.params(),
            &BTreeMap::new(),
            run.cpus.len().max(1),
        );
        if let Ok(cases) = resolved
            && let Some(first) = cases.first()
        {
            defaults.insert(case.workload.clone(), first.to_strings());
        }
    }
    defaults
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_canonical_and_resolved_for_the_runs_cpus() {
        use crate::report::fixtures::{case, demo_run, metric};
        let mut run = demo_run(1, "a", 1.0);
        run.cpus = vec![0, 1, 2];
        for workload in ["memory.stream", "made.up"] {
            let m = metric("x", "x", crate::stats::Direction::Higher, &[1.0]);
            run.cases.push(case(workload, &[], m));
        }
        let defaults = defaults_for(&run);
        let primes = &defaults["cpu.primes"];
        assert_eq!(primes["max_prime"], "10000");
        assert_eq!(primes["threads"], "1");
        // memory.stream's threads default to all CPUs: 3 here.
        assert_eq!(defaults["memory.stream"]["threads"], "3");
        assert!(!defaults.contains_key("made.up"));
    }
}
