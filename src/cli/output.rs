//! Exit statuses, the error kinds that map to them, and writing to stdout.

use std::io::Write;

/// How the process should exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Everything worked: 0.
    Success,
    /// Something failed (a case, the store): 1.
    Failure,
    /// The user stopped the run with Ctrl-C: 130, as shells report SIGINT.
    Interrupted,
}

impl ExitStatus {
    /// The numeric code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Interrupted => 130,
        }
    }
}

/// A mistake in the command line (unknown workload, bad parameter): exit
/// status 2, like clap's own usage errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

pub use crate::engine::Cancelled;

/// Writes `text` to stdout. A closed pipe (`sledge show 1 | head`) is not
/// an error.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Opens the store at `path`, or at the default location.
pub fn open_store(path: Option<std::path::PathBuf>) -> anyhow::Result<crate::store::Store> {
    let path = path.unwrap_or_else(crate::store::Store::default_path);
    Ok(crate::store::Store::open(&path)?)
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
            | StoreError::AmbiguousUuid { .. } => anyhow::Error::new(UsageError(e.to_string())),
            other => anyhow::Error::new(other),
        })?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Writes `text` to `path` whole or not at all: into a temporary file
/// beside it, renamed over `path` once complete, so a failed write leaves
/// neither a half-written file nor the temporary one. Ctrl-C (or SIGTERM)
/// is held off from here to the end of the command, which is only this
/// write: killed between creating and renaming the temporary file, the
/// process would leave it behind.
pub fn write_file_atomically(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    // Fails only if a handler is already set (then that one decides).
    let _ = ctrlc::set_handler(|| {});
    if path.is_dir() {
        anyhow::bail!(
            "{} is a directory; give a file name for the output",
            path.display()
        );
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => std::path::Path::new("."),
    };
    // 0666 before the umask, as for any new file (tempfile's default is
    // 0600, too strict for a report meant to be shared).
    let mut temp = tempfile::Builder::new()
        .prefix(".sledge-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a file in {}", dir.display()))?;
    temp.write_all(text.as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    temp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Which metrics the run table shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MetricsShown {
    /// One line per case: its headline metric (the first it reports), with
    /// scaling blocks for sweeps.
    #[default]
    Headline,
    /// Every metric of every case.
    All,
}

/// The run as a terminal table: the one-screen summary, or every metric.
pub fn run_text(run: &crate::results::RunRecord, shown: MetricsShown) -> String {
    match shown {
        MetricsShown::Headline => {
            crate::report::summary::render(run, &crate::suite::defaults_for(run))
        }
        MetricsShown::All => crate::report::run_table::render(run),
    }
}
