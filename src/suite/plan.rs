//! Turns what the user asked for (profiles, workloads, families and
//! `--param` overrides) into the list of cases to run.

use std::collections::BTreeMap;

use super::battery_file::BatteryFile;
use super::overrides::Overrides;
pub use super::plan_error::PlanError;
use super::profiles::{self, Entry};
use crate::engine::params::{resolve_cases, split_assignment};
use crate::engine::{Methodology, PlannedCase};
use crate::workloads;

/// The profile name of a run whose selection names any workload.
pub const CUSTOM_PROFILE: &str = "custom";

/// The cases of one run and the rule they run under.
pub struct Plan {
    /// The profile's name, or `custom` when workloads were named.
    pub profile: String,
    /// The cases, in order.
    pub cases: Vec<PlannedCase>,
    /// The repetition rule of the (first) profile, or the default.
    pub methodology: Methodology,
    /// The battery files among the targets, with their names: their
    /// notes go with the run.
    pub batteries: Vec<(String, BatteryFile)>,
}

impl Plan {
    /// The notes a run of this plan carries besides the user's: each
    /// battery file's name, hash and text.
    pub fn notes(&self) -> Vec<String> {
        self.batteries
            .iter()
            .flat_map(|(name, file)| file.notes(name))
            .collect()
    }
}

/// The default profile when nothing is named.
pub const DEFAULT_PROFILE: &str = "quick";

/// Resolves `targets` (profile names, workload ids or families such as
/// `cpu`) and `overrides` (`name=v1,v2`) into cases. `cpus` is the number of
/// CPUs the run may use (what `all` means).
pub fn plan(targets: &[String], overrides: &[String], cpus: usize) -> Result<Plan, PlanError> {
    let targets: Vec<String> = if targets.is_empty() {
        vec![DEFAULT_PROFILE.to_string()]
    } else {
        targets.to_vec()
    };

    let mut entries: Vec<(String, Vec<String>)> = Vec::new();
    let mut methodology: Option<Methodology> = None;
    let mut batteries = Vec::new();
    let mut names = Vec::new();
    for target in &targets {
        if let Some(profile) = profiles::find(target)? {
            methodology.get_or_insert(profile.methodology.clone());
            entries.extend(profile.entries.iter().map(entry_strings));
            names.push(profile.name.clone());
            if let Some(file) = profile.file {
                batteries.push((profile.name, file));
            }
        } else {
            let family = workloads::family(target);
            if family.is_empty() {
                return Err(unknown_target(target));
            }
            entries.extend(family.iter().map(|w| (w.id().to_string(), Vec::new())));
        }
    }
    // A run of profiles only is named after them; naming any workload
    // makes it a custom selection.
    let profile = if names.len() == targets.len() {
        names.join("+")
    } else {
        CUSTOM_PROFILE.to_string()
    };

    let overrides = Overrides::parse(overrides)?;
    let selected: Vec<&str> = entries.iter().map(|(id, _)| id.as_str()).collect();
    overrides.check_used(&selected)?;

    let mut cases = Vec::new();
    for (id, assignments) in entries {
        let workload = workloads::find(&id).ok_or_else(|| unknown_target(&id))?;
        let mut merged: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for text in &assignments {
            let (name, values) = split_assignment(text)?;
            merged.insert(name, values);
        }
        overrides.apply(workload, &mut merged);
        let specs = workload.params_given(&merged);
        for params in resolve_cases(workload.id(), &specs, &merged, cpus)? {
            cases.push(PlannedCase { workload, params });
        }
    }
    Ok(Plan {
        profile,
        cases,
        methodology: methodology.unwrap_or_default(),
        batteries,
    })
}

fn entry_strings(entry: &Entry) -> (String, Vec<String>) {
    (
        entry.workload.id().to_string(),
        entry.params.iter().map(|s| s.to_string()).collect(),
    )
}

fn unknown_target(name: &str) -> PlanError {
    PlanError::UnknownTarget {
        name: name.to_string(),
        profiles: profiles::all_with_files()
            .0
            .iter()
            .map(|p| p.name.clone())
            .collect::<Vec<_>>()
            .join(", "),
        workloads: workloads::all()
            .iter()
            .map(|w| w.id())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn no_target_means_the_quick_profile() {
        let plan = plan(&[], &[], 2).unwrap();
        assert_eq!(plan.profile, "quick");
        // One headline case per family, three of them at 1 and at 2
        // (all) CPUs, to a ±3% target.
        assert_eq!(plan.cases.len(), 15);
        let m = &plan.methodology;
        assert_eq!((m.min_rounds, m.max_rounds, m.max_trials), (5, 30, 1));
        assert_eq!(m.ci_target, 0.03);
        assert!(m.run_budget.is_some_and(|b| b.as_secs() <= 180));
    }

    #[test]
    fn a_workload_with_a_sweep_expands() {
        let plan = plan(&strings(&["cpu.primes"]), &strings(&["threads=1,2,4"]), 4).unwrap();
        assert_eq!(plan.profile, "custom");
        assert_eq!(plan.cases.len(), 3);
    }

    #[test]
    fn a_family_selects_its_workloads() {
        let plan = plan(&strings(&["cpu"]), &[], 2).unwrap();
        let ids: Vec<&str> = plan.cases.iter().map(|c| c.workload.id()).collect();
        assert_eq!(ids, vec!["cpu.primes", "cpu.threads", "cpu.mutex"]);
    }

    #[test]
    fn unknown_targets_list_what_exists() {
        let err = plan(&strings(&["cpu.prime"]), &[], 2)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("`cpu.prime` is neither"), "{err}");
        assert!(err.contains("cpu.primes") && err.contains("quick"), "{err}");
    }

    #[test]
    fn overrides_must_belong_to_a_selected_workload() {
        let err = plan(&strings(&["cpu.primes"]), &strings(&["block_size=1K"]), 2)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("no selected workload has a parameter `block_size`"),
            "{err}"
        );
    }

    #[test]
    fn out_of_range_values_are_rejected() {
        let err = plan(&strings(&["cpu.primes"]), &strings(&["max_prime=0"]), 2)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("max_prime") && err.contains("from 3"), "{err}");
    }

    /// The raw values of parameter `name` over the cases of `workload`.
    fn values_of(plan: &Plan, workload: &str, name: &str) -> Vec<String> {
        plan.cases
            .iter()
            .filter(|c| c.workload.id() == workload)
            .map(|c| c.params.to_raw_strings()[name].clone())
            .collect()
    }

    #[test]
    fn a_scoped_override_reaches_its_workload_alone() {
        let plan = plan(
            &strings(&["memory.block", "crypto.speed"]),
            &strings(&["crypto.speed:block_size=16,8192", "time=0.5"]),
            2,
        )
        .unwrap();
        assert_eq!(values_of(&plan, "crypto.speed", "block_size"), ["16", "8K"]);
        // memory.block keeps its own default block size...
        assert_eq!(values_of(&plan, "memory.block", "block_size"), ["1K"]);
        // ... and still takes the unscoped override.
        assert_eq!(values_of(&plan, "memory.block", "time"), ["0.5"]);
    }

    #[test]
    fn a_scoped_override_wins_over_an_unscoped_one_and_repeats_add_to_it() {
        let plan = plan(
            &strings(&["cpu.primes", "cpu.threads"]),
            &strings(&["threads=2", "cpu.primes:threads=1", "cpu.primes:threads=3"]),
            4,
        )
        .unwrap();
        assert_eq!(values_of(&plan, "cpu.primes", "threads"), ["1", "3"]);
        assert_eq!(values_of(&plan, "cpu.threads", "threads"), ["2"]);
    }

    #[test]
    fn a_scoped_override_names_a_selected_workload_that_has_the_parameter() {
        let error = |overrides: &[&str]| {
            plan(&strings(&["cpu.primes"]), &strings(overrides), 2)
                .err()
                .unwrap()
                .to_string()
        };
        let unknown = error(&["cpu.prime:threads=1"]);
        assert!(
            unknown.contains("`cpu.prime` is not a workload"),
            "{unknown}"
        );
        let unselected = error(&["memory.block:threads=1"]);
        assert!(
            unselected.contains("`memory.block` is not selected")
                && unselected.contains("selected: cpu.primes"),
            "{unselected}"
        );
        let lacking = error(&["cpu.primes:block_size=1K"]);
        assert!(
            lacking.contains("`cpu.primes` has no parameter `block_size`")
                && lacking.contains("max_prime"),
            "{lacking}"
        );
    }
}
