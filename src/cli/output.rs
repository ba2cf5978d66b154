//! Exit statuses, the error kinds that map to them, and writing to stdout.

/// How the process should exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Everything worked: 0.
    Success,
    /// Something failed (a case, the store): 1.
    Failure,
    /// The user stopped the run with Ctrl-C: 130, as shells report SIGINT.
    Interrupted,
    /// `compare --fail-if-slower` found a regression: 3.
    Regression,
    /// `fleet run` stored some hosts' runs but not every host's complete
    /// run: 4.
    PartialFleet,
}

impl ExitStatus {
    /// The numeric code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Interrupted => 130,
            ExitStatus::Regression => 3,
            ExitStatus::PartialFleet => 4,
        }
    }
}

/// A mistake in the command line (unknown workload, bad parameter): exit
/// status 2, like clap's own usage errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

use crate::analysis::pivot_grouping::{self, PivotChoice};
pub use crate::engine::Cancelled;
use crate::report::export::{Format, RunShown, RunView, View};
use crate::store::StoreLocation;

/// Writes `text` to stdout. A closed pipe (`sledge show 1 | head`) is not
/// an error.
pub fn print(text: &str) -> anyhow::Result<()> {
    Ok(crate::visible::print_text(text)?)
}

/// Opens (or creates) the store at `location`, or at the default
/// location, whose directory is created if missing.
pub fn open_store(location: Option<StoreLocation>) -> anyhow::Result<crate::store::Store> {
    Ok(match location {
        Some(location) => crate::store::Store::open_at(&location)?,
        None => crate::store::Store::open_default()?,
    })
}

/// Opens the existing store at `location`, or at the default location,
/// read-only, for a command that only reads it. A missing store is
/// [`StoreError::NoStore`](crate::store::StoreError::NoStore); nothing is
/// created, upgraded or written.
pub fn open_existing_store(location: Option<StoreLocation>) -> anyhow::Result<crate::store::Store> {
    let location = crate::store::Store::location_or_default(location);
    Ok(crate::store::Store::open_read_only(&location)?)
}

/// Resolves run references (ids, `last`, `last~N`, UUIDs) to distinct run
/// ids in the order given. A reference that names no run is a usage error
/// (exit status 2): the user asked for something that is not there.
pub fn resolve_runs(
    store: &crate::store::Store,
    references: &[String],
) -> anyhow::Result<Vec<i64>> {
    use crate::store::StoreError;
    let mut ids = Vec::with_capacity(references.len());
    for reference in references {
        let id = store.resolve_run(reference).map_err(|e| match e {
            StoreError::NoSuchRun { .. }
            | StoreError::NoRunAt { .. }
            | StoreError::BadRunRef { .. }
            | StoreError::NoSuchUuid { .. }
            | StoreError::AmbiguousUuid { .. }
            | StoreError::AmbiguousRunRef { .. } => anyhow::Error::new(UsageError(e.to_string())),
            other => anyhow::Error::new(other),
        })?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Which metrics the run table shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MetricsShown {
    /// The headline metric of each case (the first it reports): the
    /// scorecard, or with `--full` one line per case with scaling blocks
    /// for sweeps.
    #[default]
    Headline,
    /// Every metric of every case.
    All,
}

/// The view of a run that `--full` and `--metrics` ask for: every metric
/// whenever `--metrics all` is given (it is a full view already).
pub fn run_view(full: bool, metrics: MetricsShown) -> RunView {
    match (metrics, full) {
        (MetricsShown::All, _) => RunView::AllMetrics,
        (MetricsShown::Headline, true) => RunView::Full,
        (MetricsShown::Headline, false) => RunView::Scorecard,
    }
}

/// A run in `format` (`run`, `show`), after saying on stderr when the
/// `--pivot` given made no table (in the formats that show pivot tables).
pub fn run_in(
    run: &crate::results::RunRecord,
    format: Format,
    shown: RunShown<'_>,
) -> anyhow::Result<String> {
    if format.shows_pivot_tables()
        && let Some(choice) = shown.pivot
    {
        warn_if_no_pivot_table(run, choice);
    }
    format.render(&View::Run { run, shown })
}

/// Says on stderr that `--pivot` made no table of `run`, and why.
pub fn warn_if_no_pivot_table(run: &crate::results::RunRecord, choice: &PivotChoice) {
    if pivot_grouping::tables(run, choice).is_empty() {
        crate::say!(
            "note: --pivot {choice}: no workload of run {} has two values at least of both \
             parameters, so there is no table",
            run.id
        );
    }
}
