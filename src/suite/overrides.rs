//! The `--param` overrides of a run. `name=values` applies to every
//! selected workload that has the parameter; `workload:name=values` to
//! that workload alone (a selection of `memory.block crypto.speed` can
//! sweep the cipher's block size without sweeping the memory block's), and
//! wins over an unscoped value for that workload. A repeated override adds
//! to its sweep: `-p threads=1 -p threads=2` is `threads=1,2`.

use std::collections::BTreeMap;

use super::plan_error::PlanError;
use crate::engine::Workload;
use crate::engine::params::split_assignment;
use crate::workloads;

/// Every override of a run, by scope.
#[derive(Debug, Default)]
pub struct Overrides {
    /// `name=values`: every selected workload with the parameter.
    everywhere: BTreeMap<String, Vec<String>>,
    /// `workload:name=values`, by (workload id, parameter name).
    scoped: BTreeMap<(String, String), Vec<String>>,
}

impl Overrides {
    /// Parses `--param` texts. A scope must name a workload (not a profile
    /// or family: it would be ambiguous which of its workloads is meant).
    pub fn parse(texts: &[String]) -> Result<Overrides, PlanError> {
        let mut overrides = Overrides::default();
        for text in texts {
            let (name, values) = split_assignment(text)?;
            match name.split_once(':') {
                Some((workload, param)) => {
                    let (workload, param) = (workload.trim(), param.trim());
                    if workloads::find(workload).is_none() {
                        return Err(PlanError::UnknownScope {
                            scope: workload.to_string(),
                            name: param.to_string(),
                        });
                    }
                    overrides
                        .scoped
                        .entry((workload.to_string(), param.to_string()))
                        .or_default()
                        .extend(values);
                }
                None => overrides.everywhere.entry(name).or_default().extend(values),
            }
        }
        Ok(overrides)
    }

    /// Checks that every override reaches some selected workload, so that a
    /// typo is an error rather than a silently default run. `selected` is
    /// the run's workload ids in order (repeats allowed).
    pub fn check_used(&self, selected: &[&str]) -> Result<(), PlanError> {
        let has_param =
            |id: &str, name: &str| workloads::find(id).is_some_and(|w| w.takes_param(name));
        let mut listed: Vec<&str> = selected.to_vec();
        listed.dedup();
        let listed = listed.join(", ");
        for name in self.everywhere.keys() {
            if !selected.iter().any(|id| has_param(id, name)) {
                return Err(PlanError::UnusedParam {
                    name: name.clone(),
                    selected: listed,
                });
            }
        }
        for (workload, name) in self.scoped.keys() {
            if !selected.contains(&workload.as_str()) {
                return Err(PlanError::ScopeNotSelected {
                    scope: workload.clone(),
                    name: name.clone(),
                    selected: listed,
                });
            }
            if !has_param(workload, name) {
                let params = workloads::find(workload)
                    .map(|w| w.params().iter().map(|p| p.name).collect::<Vec<_>>())
                    .unwrap_or_default();
                return Err(PlanError::ScopeLacksParam {
                    scope: workload.clone(),
                    name: name.clone(),
                    params: params.join(", "),
                });
            }
        }
        Ok(())
    }

    /// Puts the overrides that reach `workload` into `merged`, the case's
    /// parameter values so far: unscoped first, then the scoped ones over
    /// them.
    pub fn apply(&self, workload: &dyn Workload, merged: &mut BTreeMap<String, Vec<String>>) {
        for (name, values) in &self.everywhere {
            if workload.takes_param(name) {
                merged.insert(name.clone(), values.clone());
            }
        }
        for ((id, name), values) in &self.scoped {
            if id == workload.id() {
                merged.insert(name.clone(), values.clone());
            }
        }
    }
}
