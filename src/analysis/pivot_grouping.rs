//! Pivot tables: a sweep over two parameters of one workload as the
//! articles print it, one parameter down and one across (openssl speed's
//! algorithm × block size, a web server's page size × concurrency), each
//! cell the headline's mean with its 95% CI.
//!
//! Each workload names its natural table ([`Workload::pivot`]); `--pivot
//! ROW,COLUMN` chooses another pair for every workload that has both. A
//! table needs two values at least on each axis; the workload's other
//! parameters that vary split its cases into one table per combination
//! (`copies=1` and `copies=2` are two tables). The terminal text, the
//! Markdown and the CSV are `report::pivot`'s; the HTML report draws its
//! own from the same [`PivotTable`]s.
//!
//! [`Workload::pivot`]: crate::engine::Workload::pivot

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use super::scaling_fit::headline;
use super::varying::varying_params;
use super::verdicts::reads_all;
use crate::results::{CaseRecord, RunRecord, Unit};
use crate::stats::Direction;

/// Which tables to make.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PivotChoice {
    /// Each workload's own table, where it has one.
    #[default]
    Natural,
    /// These two parameters, for every workload that varies both.
    Given {
        /// The parameter down the rows.
        row: String,
        /// The parameter across the columns.
        column: String,
    },
}

/// What `--pivot` takes: `ROW,COLUMN` or `auto` (each workload's own).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--pivot takes two different parameter names as ROW,COLUMN (for example \
     `algorithm,block_size`) or `auto` (each workload's own table); got `{0}`"
)]
pub struct BadPivot(pub String);

impl std::str::FromStr for PivotChoice {
    type Err = BadPivot;

    fn from_str(text: &str) -> Result<Self, BadPivot> {
        let text = text.trim();
        if text == "auto" {
            return Ok(PivotChoice::Natural);
        }
        let bad = || BadPivot(text.to_string());
        let (row, column) = text.split_once(',').ok_or_else(bad)?;
        let (row, column) = (row.trim(), column.trim());
        let name = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        };
        if !name(row) || !name(column) || row == column {
            return Err(bad());
        }
        Ok(PivotChoice::Given {
            row: row.to_string(),
            column: column.to_string(),
        })
    }
}

impl PivotChoice {
    /// Refuses a `--pivot ROW,COLUMN` that no workload of `plan` could
    /// make a table of: one without both parameters (a typo, most often),
    /// naming each selected workload's parameters.
    pub fn check_for(&self, plan: &crate::suite::Plan) -> Result<(), String> {
        let PivotChoice::Given { row, column } = self else {
            return Ok(());
        };
        let mut workloads: Vec<&dyn crate::engine::Workload> = Vec::new();
        for case in &plan.cases {
            if !workloads.iter().any(|w| w.id() == case.workload.id()) {
                workloads.push(case.workload);
            }
        }
        let has = |w: &&dyn crate::engine::Workload, name: &str| {
            w.params().iter().any(|p| p.name == name)
        };
        if workloads.iter().any(|w| has(w, row) && has(w, column)) {
            return Ok(());
        }
        let listed: Vec<String> = workloads
            .iter()
            .map(|w| {
                let names: Vec<&str> = w.params().iter().map(|p| p.name).collect();
                format!("{}: {}", w.id(), names.join(", "))
            })
            .collect();
        Err(format!(
            "--pivot {row},{column}: no selected workload has both parameters; theirs are:\n{}",
            listed.join("\n")
        ))
    }

    /// The (row, column) parameters of `workload`'s table, if it has one.
    fn axes(&self, workload: &str) -> Option<(String, String)> {
        match self {
            PivotChoice::Natural => {
                let (row, column) = crate::workloads::find(workload)?.pivot()?;
                Some((row.to_string(), column.to_string()))
            }
            PivotChoice::Given { row, column } => Some((row.clone(), column.clone())),
        }
    }
}

/// One cell of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// The case's headline.
    Value {
        /// Its mean.
        mean: f64,
        /// The 95% CI's low end.
        ci_low: f64,
        /// The 95% CI's high end.
        ci_high: f64,
        /// Trials counted.
        n: usize,
        /// The case's index in the run.
        case: usize,
    },
    /// The case failed (its error is the run's).
    Failed {
        /// The case's index in the run.
        case: usize,
    },
    /// The run has no case for this row and column.
    Missing,
}

impl Cell {
    /// The case it shows, if any.
    pub fn case(&self) -> Option<usize> {
        match self {
            Cell::Value { case, .. } | Cell::Failed { case } => Some(*case),
            Cell::Missing => None,
        }
    }
}

/// One table: a workload's cases at one combination of its other
/// varying parameters, `row` down and `column` across.
#[derive(Debug, Clone, PartialEq)]
pub struct PivotTable {
    /// Workload id.
    pub workload: String,
    /// The headline's name, unit and direction.
    pub metric: (String, Unit, Direction),
    /// The parameter down the rows.
    pub row: String,
    /// The parameter across the columns.
    pub column: String,
    /// The workload's other varying parameters and their values here
    /// (empty when only the two vary).
    pub fixed: BTreeMap<String, String>,
    /// The same, with a per-CPU count given as `all` written `all`, so
    /// that the tables of runs on different hosts match.
    pub fixed_as_given: BTreeMap<String, String>,
    /// The rows' values, in order (numbers and sizes ascending, else as
    /// the run first has them).
    pub rows: Vec<String>,
    /// The columns' values, in the same order.
    pub columns: Vec<String>,
    /// `cells[r][c]`.
    pub cells: Vec<Vec<Cell>>,
}

impl PivotTable {
    /// What tells this table from the same workload's others, and from
    /// runs', for matching across runs.
    pub fn key(&self) -> (String, String, String, String, BTreeMap<String, String>) {
        (
            self.workload.clone(),
            self.metric.0.clone(),
            self.row.clone(),
            self.column.clone(),
            self.fixed_as_given.clone(),
        )
    }
}

/// The run's tables, workloads in the order they first ran.
pub fn tables(run: &RunRecord, choice: &PivotChoice) -> Vec<PivotTable> {
    let mut by_workload: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for (i, case) in run.cases.iter().enumerate() {
        let w = *at.entry(case.workload.as_str()).or_insert_with(|| {
            by_workload.push((case.workload.as_str(), Vec::new()));
            by_workload.len() - 1
        });
        by_workload[w].1.push(i);
    }
    let mut out = Vec::new();
    for (workload, indexes) in by_workload {
        if let Some((row, column)) = choice.axes(workload) {
            out.extend(workload_tables(run, workload, &indexes, &row, &column));
        }
    }
    out
}

/// The tables of one workload's cases (`indexes`).
fn workload_tables(
    run: &RunRecord,
    workload: &str,
    indexes: &[usize],
    row: &str,
    column: &str,
) -> Vec<PivotTable> {
    let cases: Vec<&CaseRecord> = indexes.iter().map(|&i| &run.cases[i]).collect();
    let others: Vec<String> = varying_params(&cases)
        .into_iter()
        .filter(|p| p != row && p != column)
        .collect();
    // The cases that have both parameters, split by the other varying
    // parameters and the headline, in first-seen order. A failed case
    // has no headline: it joins the first group of its parameters.
    type GroupKey = (BTreeMap<String, String>, Option<String>);
    let mut groups: Vec<(GroupKey, Vec<usize>)> = Vec::new();
    for &i in indexes {
        let case = &run.cases[i];
        if !case.params.contains_key(row) || !case.params.contains_key(column) {
            continue;
        }
        let fixed: BTreeMap<String, String> = others
            .iter()
            .filter_map(|p| Some((p.clone(), case.params.get(p)?.clone())))
            .collect();
        let metric = headline(case).map(|m| m.name.clone());
        let found = groups.iter().position(|((f, m), _)| {
            *f == fixed && (metric.is_none() || m.is_none() || *m == metric)
        });
        match found {
            Some(g) => {
                if groups[g].0.1.is_none() {
                    groups[g].0.1 = metric;
                }
                groups[g].1.push(i);
            }
            None => groups.push(((fixed, metric), vec![i])),
        }
    }
    groups
        .into_iter()
        .filter_map(|((fixed, _), members)| table(run, workload, row, column, fixed, &members))
        .collect()
}

/// One table of `members`, if they make one: a headline, and two values
/// at least on each axis.
fn table(
    run: &RunRecord,
    workload: &str,
    row: &str,
    column: &str,
    fixed: BTreeMap<String, String>,
    members: &[usize],
) -> Option<PivotTable> {
    let metric = members
        .iter()
        .find_map(|&i| headline(&run.cases[i]))
        .map(|m| (m.name.clone(), m.unit.clone(), m.direction))?;
    let rows = ordered(members.iter().map(|&i| &run.cases[i].params[row]));
    let columns = ordered(members.iter().map(|&i| &run.cases[i].params[column]));
    if rows.len() < 2 || columns.len() < 2 {
        return None;
    }
    let mut cells = vec![vec![Cell::Missing; columns.len()]; rows.len()];
    for &i in members {
        let case = &run.cases[i];
        let r = rows.iter().position(|v| *v == case.params[row])?;
        let c = columns.iter().position(|v| *v == case.params[column])?;
        // A case met twice (a profile that lists it twice): the first.
        if cells[r][c] != Cell::Missing {
            continue;
        }
        cells[r][c] = match headline(case) {
            Some(m) if case.error.is_none() => Cell::Value {
                mean: m.summary.mean,
                ci_low: m.summary.ci_low,
                ci_high: m.summary.ci_high,
                n: m.summary.n,
                case: i,
            },
            _ => Cell::Failed { case: i },
        };
    }
    // `all` where the first case was given `all` (the rule of
    // `verdicts`), so that runs on hosts with different CPU counts
    // match.
    let first = &run.cases[members[0]];
    let fixed_as_given = fixed
        .iter()
        .map(|(k, v)| {
            let v = if reads_all(first, run, k, v) {
                "all"
            } else {
                v
            };
            (k.clone(), v.to_string())
        })
        .collect();
    Some(PivotTable {
        workload: workload.to_string(),
        metric,
        row: row.to_string(),
        column: column.to_string(),
        fixed,
        fixed_as_given,
        rows,
        columns,
        cells,
    })
}

/// The distinct values, numbers and sizes (`2K`, `8M`) ascending when
/// every value is one, else in first-seen order.
pub fn ordered<'a>(values: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut distinct: Vec<String> = Vec::new();
    for v in values {
        if !distinct.contains(v) {
            distinct.push(v.clone());
        }
    }
    let amount = |v: &str| {
        v.parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .or_else(|| crate::engine::params::parse_size(v).map(|n| n as f64))
    };
    if let Some(mut keyed) = distinct
        .iter()
        .map(|v| Some((amount(v)?, v.clone())))
        .collect::<Option<Vec<(f64, String)>>>()
    {
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
        distinct = keyed.into_iter().map(|(_, v)| v).collect();
    }
    distinct
}

impl fmt::Display for PivotChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PivotChoice::Natural => write!(f, "auto"),
            PivotChoice::Given { row, column } => write!(f, "{row},{column}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(row: &str, column: &str) -> PivotChoice {
        PivotChoice::Given {
            row: row.into(),
            column: column.into(),
        }
    }

    #[test]
    fn pivot_choices_parse_and_bad_ones_say_what_is_allowed() {
        assert_eq!("auto".parse::<PivotChoice>(), Ok(PivotChoice::Natural));
        assert_eq!(
            "size, concurrency".parse::<PivotChoice>(),
            Ok(given("size", "concurrency"))
        );
        for bad in ["size", "size,size", ",size", "size,", "Size,x", "a,b,c"] {
            let err = bad.parse::<PivotChoice>().unwrap_err();
            assert_eq!(err, BadPivot(bad.to_string()));
            assert!(err.to_string().contains("ROW,COLUMN"), "{err}");
        }
    }

    #[test]
    fn values_sort_as_numbers_and_sizes_else_keep_their_order() {
        let v = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            ordered(v(&["8192", "16", "1024", "16"]).iter()),
            v(&["16", "1024", "8192"])
        );
        assert_eq!(
            ordered(v(&["2M", "1", "200K"]).iter()),
            v(&["1", "200K", "2M"])
        );
        assert_eq!(
            ordered(v(&["sha256", "aes-128-gcm", "sha256"]).iter()),
            v(&["sha256", "aes-128-gcm"])
        );
    }

    #[test]
    fn a_given_pivot_is_checked_against_the_plans_workloads() {
        let plan = crate::suite::plan(&["cpu.primes".to_string()], &[], 1).unwrap();
        let names: Vec<&str> = plan.cases[0]
            .workload
            .params()
            .iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(PivotChoice::Natural.check_for(&plan), Ok(()));
        assert_eq!(given(names[0], names[1]).check_for(&plan), Ok(()));
        assert_eq!(
            given(names[0], "nope").check_for(&plan),
            Err(format!(
                "--pivot {},nope: no selected workload has both parameters; theirs are:\ncpu.primes: {}",
                names[0],
                names.join(", ")
            ))
        );
    }
}
