//! What a stored case stands for in a score index its family keeps
//! (UnixBench's System Benchmarks Index), as its workload says
//! ([`crate::engine::Workload::index_entry`]), and how an index asks for
//! it ([`IndexEntryOf`]).

use crate::results::CaseRecord;

/// What a stored case stands for in a score index (see
/// [`crate::engine::Workload::index_entry`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexEntry {
    /// One of the index's tests, by the index's own name for it
    /// (`dhry2reg`).
    Test(&'static str),
    /// A variant of a test that the index lacks, titled as the index's own
    /// tool would title it (`Shell Scripts (4 concurrent)`).
    Variant(String),
}

/// What a case of a run on this many CPUs stands for in its family's
/// index; `None` for a case of no index, of a workload this sledge does
/// not have, or with parameters it no longer accepts. Read from the typed
/// values the case ran with where its record keeps them (a case this
/// process ran), else from its stored parameters read back against its
/// workload's own.
///
/// The registry answers it (it finds the case's workload by id): the
/// report hands it to a [`crate::engine::RunSection`], since the registry lists
/// the very workloads that hand their section back, and a section that
/// named the registry would close a loop through its family.
pub type IndexEntryOf = fn(&CaseRecord, usize) -> Option<IndexEntry>;
