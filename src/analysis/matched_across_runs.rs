//! Several runs lined up: each run's cases, scaling sweeps and pivot
//! tables matched with the other runs' by workload and parameters, so that
//! a report shows each once with every run that has it. A per-CPU count
//! given as `all` matches `all`, whatever count each run resolved it to
//! (the rule of [`super::verdicts`]): 2 threads on a 2-CPU run and 8 on an
//! 8-CPU one are the same case when both were asked for as `all`.

use std::collections::{BTreeMap, HashMap};

use super::pivot_grouping::{PivotChoice, PivotTable, tables};
use super::scaling_fit::Sweep;
use super::verdicts::reads_all;
use crate::results::{CaseRecord, RunRecord};

/// What cases are matched on across runs: workload, version and
/// parameters, a parameter given as `all` read as `all`.
pub type CaseKey = (String, u32, BTreeMap<String, String>);

/// One case across runs.
#[derive(Debug, Clone)]
pub struct MatchedCase<'a> {
    /// What the runs' cases were matched on.
    pub key: CaseKey,
    /// (run index, its case) per run that has the case, in run order.
    pub cases: Vec<(usize, &'a CaseRecord)>,
}

/// Every run's cases matched by [`CaseKey`], per workload: workloads in
/// the order the runs first have them, each with its cases in the order
/// first seen. One pass over the cases: the report takes time in
/// proportion to them.
pub fn match_cases(runs: &[RunRecord]) -> Vec<(&str, Vec<MatchedCase<'_>>)> {
    let mut workloads: Vec<(&str, Vec<MatchedCase>)> = Vec::new();
    let mut workload_index: HashMap<&str, usize> = HashMap::new();
    // Where each key's cases are: (workload, position among its cases).
    let mut key_index: HashMap<CaseKey, (usize, usize)> = HashMap::new();
    for (i, run) in runs.iter().enumerate() {
        for case in &run.cases {
            let key = case_key(case, run);
            if let Some(&(w, k)) = key_index.get(&key) {
                workloads[w].1[k].cases.push((i, case));
                continue;
            }
            let w = *workload_index
                .entry(case.workload.as_str())
                .or_insert_with(|| {
                    workloads.push((case.workload.as_str(), Vec::new()));
                    workloads.len() - 1
                });
            let own = &mut workloads[w].1;
            key_index.insert(key.clone(), (w, own.len()));
            own.push(MatchedCase {
                key,
                cases: vec![(i, case)],
            });
        }
    }
    workloads
}

/// The key `case` of `run` is matched on.
fn case_key(case: &CaseRecord, run: &RunRecord) -> CaseKey {
    (
        case.workload.clone(),
        case.workload_version,
        all_cpus_as_all(&case.params, case, run),
    )
}

/// `params` (of `case` of `run`, or a part of them) with each one given as
/// `all` read as `all`.
fn all_cpus_as_all(
    params: &BTreeMap<String, String>,
    case: &CaseRecord,
    run: &RunRecord,
) -> BTreeMap<String, String> {
    params
        .iter()
        .map(|(k, v)| {
            let all = reads_all(case, run, k, v);
            (k.clone(), if all { "all".into() } else { v.clone() })
        })
        .collect()
}

/// What sweeps are matched on across runs: the parameter swept and the
/// fixed parameters (a per-CPU count given as `all` read as `all`).
pub type SweepKey = (String, BTreeMap<String, String>);

/// One sweep across runs.
#[derive(Debug, Clone)]
pub struct SweepGroup {
    /// What the runs' sweeps were matched on.
    pub key: SweepKey,
    /// (run index, index of the sweep among that run's sweeps) per run
    /// that has it, in run order.
    pub members: Vec<(usize, usize)>,
}

/// Every run's sweeps (`all_sweeps[i]` are run `i`'s) matched by
/// [`SweepKey`], per workload, sweeps in the order first seen.
pub fn match_sweeps(
    runs: &[RunRecord],
    all_sweeps: &[Vec<Sweep>],
) -> HashMap<String, Vec<SweepGroup>> {
    let mut groups: HashMap<String, Vec<SweepGroup>> = HashMap::new();
    let mut index: HashMap<(&str, SweepKey), usize> = HashMap::new();
    for (i, sweeps) in all_sweeps.iter().enumerate() {
        for (s, sweep) in sweeps.iter().enumerate() {
            // The fixed parameters are those of every step's case.
            let Some(step) = sweep.steps.first() else {
                continue;
            };
            let case = &runs[i].cases[step.case];
            let key = (
                sweep.param.clone(),
                all_cpus_as_all(&sweep.fixed, case, &runs[i]),
            );
            let own = groups.entry(sweep.workload.clone()).or_default();
            let at = *index
                .entry((sweep.workload.as_str(), key.clone()))
                .or_insert_with(|| {
                    own.push(SweepGroup {
                        key,
                        members: Vec::new(),
                    });
                    own.len() - 1
                });
            own[at].members.push((i, s));
        }
    }
    groups
}

/// One pivot table across runs: (run index, its table) per run that has
/// it, in run order.
pub type TableGroup = Vec<(usize, PivotTable)>;

/// Every run's pivot tables (as `choice` makes them) matched by workload,
/// metric, axes and the other parameters (a per-CPU count given as `all`
/// matches `all`), per workload, tables in the order first seen.
pub fn match_tables(runs: &[RunRecord], choice: &PivotChoice) -> HashMap<String, Vec<TableGroup>> {
    let mut groups: HashMap<String, Vec<TableGroup>> = HashMap::new();
    let mut at: HashMap<_, (String, usize)> = HashMap::new();
    for (i, run) in runs.iter().enumerate() {
        for table in tables(run, choice) {
            let own = groups.entry(table.workload.clone()).or_default();
            let (_, g) = at
                .entry(table.key())
                .or_insert_with(|| {
                    own.push(Vec::new());
                    (table.workload.clone(), own.len() - 1)
                })
                .clone();
            own[g].push((i, table));
        }
    }
    groups
}

/// The (run index, case index) of every case the group's tables show.
pub fn table_cases(group: &TableGroup) -> impl Iterator<Item = (usize, usize)> + '_ {
    group.iter().flat_map(|(i, table)| {
        table
            .cells
            .iter()
            .flatten()
            .filter_map(move |cell| Some((*i, cell.case()?)))
    })
}
