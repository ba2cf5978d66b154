//! The parameters that tell a set of cases apart: what a label, a pivot
//! or a scorecard row must name, and what all the cases share.

use std::collections::BTreeMap;

use crate::results::CaseRecord;

/// The parameters whose values differ between `cases` (one that some
/// case lacks differs too), in name order. One pass over the cases'
/// parameters.
pub fn varying_params(cases: &[&CaseRecord]) -> Vec<String> {
    // Per name: the first value seen, how many cases have it, and whether
    // another value was seen.
    let mut seen: BTreeMap<&String, (&String, usize, bool)> = BTreeMap::new();
    for case in cases {
        for (name, value) in &case.params {
            let entry = seen.entry(name).or_insert((value, 0, false));
            entry.1 += 1;
            entry.2 |= entry.0 != value;
        }
    }
    seen.into_iter()
        .filter(|(_, (_, count, differs))| *differs || *count < cases.len())
        .map(|(name, _)| name.clone())
        .collect()
}
