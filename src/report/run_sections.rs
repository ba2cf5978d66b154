//! The sections the workloads of a run add to its report (UnixBench's
//! index after a run with UnixBench's tests), asked of the workloads
//! ([`crate::engine::Workload::run_section`]) so that the report names no
//! family. Each section is shown once, in the order of the run's first
//! case that adds it; a workload this sledge does not have (a run stored
//! by another version) adds none. A section is handed what each case
//! stands for in its family's index ([`crate::workloads::index_entry_of`]),
//! which an index kept by a family cannot ask the registry for itself:
//! the registry lists that family.

use crate::engine::RunSection;
use crate::results::RunRecord;
use crate::visible::Escaped;

/// The distinct sections of the run's workloads, in the order of their
/// first cases.
pub fn sections(run: &RunRecord) -> Vec<&'static dyn RunSection> {
    let mut found: Vec<&'static dyn RunSection> = Vec::new();
    for case in &run.cases {
        let section = crate::workloads::find(&case.workload).and_then(|w| w.run_section());
        if let Some(section) = section
            && !found.iter().any(|s| s.id() == section.id())
        {
            found.push(section);
        }
    }
    found
}

/// The sections as the full views print them, one after the other; empty
/// when the run's workloads add none.
pub fn text(run: &Escaped<RunRecord>) -> String {
    sections(run)
        .iter()
        .map(|s| s.text(run, crate::workloads::index_entry_of))
        .collect()
}

/// The sections' lines for the scorecard.
pub fn lines(run: &Escaped<RunRecord>) -> Vec<String> {
    sections(run)
        .iter()
        .filter_map(|s| s.line(run, crate::workloads::index_entry_of))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Direction;
    use crate::report::fixtures::{case, demo_run, metric};

    #[test]
    fn a_section_several_workloads_add_is_shown_once() {
        let mut run = demo_run(1, "a", 1.0);
        let none: Vec<&str> = sections(&run).iter().map(|s| s.id()).collect();
        assert!(none.is_empty(), "{none:?}");
        for workload in ["unixbench.pipe", "made.up", "unixbench.dhrystone"] {
            let m = metric("lps", "lps", Direction::Higher, &[1.0]);
            run.cases.push(case(workload, &[], m));
        }
        let ids: Vec<&str> = sections(&run).iter().map(|s| s.id()).collect();
        assert_eq!(ids, ["unixbench.index"]);
        let run = Escaped::new(run);
        assert!(text(&run).contains("UnixBench index"), "{}", text(&run));
        assert_eq!(lines(&run).len(), 1);
    }
}
