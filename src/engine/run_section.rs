//! A section of a run's report that belongs to a family of workloads, not
//! to the report: UnixBench's System Benchmarks Index is computed over the
//! cases of nine `unixbench.*` workloads and printed the way UnixBench
//! prints it. The report asks the workloads of a run for their sections
//! ([`crate::engine::Workload::run_section`]) and shows each one once, so
//! that no renderer names a family, and a family that keeps an index of
//! its own adds it in its own folder.

use super::index_entry::IndexEntryOf;
use crate::results::RunRecord;
use crate::visible::Escaped;

/// What a family adds to the report of a run that has its cases. The
/// report hands each method `index_entry_of`, what a stored case stands
/// for in its family's index, for a section that is such an index.
pub trait RunSection: Sync {
    /// A stable name: several workloads hand back the same section, and
    /// the report shows it once.
    fn id(&self) -> &'static str;
    /// The section as the full views print it below their table (`--full`,
    /// `--metrics all`), starting with its own blank line; empty when no
    /// case of the run counts in it (all failed, say).
    fn text(&self, run: &Escaped<RunRecord>, index_entry_of: IndexEntryOf) -> String;
    /// The section in one line for the scorecard, which has one screen
    /// for the whole run; `None` when it has nothing to say there.
    fn line(&self, run: &Escaped<RunRecord>, index_entry_of: IndexEntryOf) -> Option<String>;
}
