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
    /// `compare --fail-if-slower` found a regression: 3.
    Regression,
}

impl ExitStatus {
    /// The numeric code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Interrupted => 130,
            ExitStatus::Regression => 3,
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

/// Opens (or creates) the store at `path`, or at the default location,
/// whose directory is created if missing.
pub fn open_store(path: Option<std::path::PathBuf>) -> anyhow::Result<crate::store::Store> {
    Ok(match path {
        Some(path) => crate::store::Store::open(&path)?,
        None => crate::store::Store::open_default()?,
    })
}

/// Opens the existing store at `path`, or at the default location, for a
/// command that only reads it. A missing store is
/// [`StoreError::NoStore`](crate::store::StoreError::NoStore) and nothing
/// is created.
pub fn open_existing_store(
    path: Option<std::path::PathBuf>,
) -> anyhow::Result<crate::store::Store> {
    let path = path.unwrap_or_else(crate::store::Store::default_path);
    Ok(crate::store::Store::open_existing(&path)?)
}
