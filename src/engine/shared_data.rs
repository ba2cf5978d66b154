//! What cases prepare once for all their rounds, in the run's own process.
//!
//! A round starts from nothing (see `executor.rs`), and most workloads
//! prepare in each round what they need. Loading a database is the
//! exception: its tables take longer to load than the trials take to run,
//! the classic tools load them once (`sysbench prepare`, `pgbench -i`) and
//! run on them many times, and a transaction mix that keeps the tables'
//! shape leaves them as fit for the next round as they were for the first.
//! So a workload may name the data a case needs
//! ([`Workload::shared_key`](super::Workload::shared_key)): the first
//! round of the first case needing it prepares it
//! ([`Workload::prepare_shared`](super::Workload::prepare_shared)), in the
//! process that runs the plan, and every round of every case naming the
//! same data (a sweep of `threads` over one table set) is told where to
//! find it: a text that travels to the round's process with its request
//! ([`TrialContext::shared`](super::TrialContext::shared)).
//!
//! Only one copy of each is kept, and only while a case still to run needs
//! it: before each round of the plan, data no case of the round uses is
//! removed (a case left out of a round has had its last), and the rest
//! when the plan ends, complete, failed, cancelled or unwound by an error
//! (dropping the pool removes it too): `shared_pool.rs`.

/// Data prepared for the rounds of the cases that share it; removed when
/// dropped.
pub trait SharedPreparation: Send {
    /// What each round is told to find it by, as text: it travels to the
    /// round's process with the round's request.
    fn for_rounds(&self) -> String;
    /// Removes it, saying why when it cannot.
    fn release(self: Box<Self>) -> anyhow::Result<()>;
}
