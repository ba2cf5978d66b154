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

pub use crate::engine::Cancelled;
use crate::visible::Escaped;

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

/// Writes `text` to a regular file `path` whole or not at all: into a
/// temporary file beside it, renamed over `path` once complete, so a failed
/// write leaves neither a half-written file nor the temporary one. An
/// existing device, pipe or symbolic link is written through instead. Ctrl-C (or SIGTERM)
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
    // A device, a pipe or a symbolic link is written through, never
    // replaced: renaming over `/dev/null` or a link would put a plain file
    // in its place.
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.file_type().is_file()
    {
        return std::fs::File::create(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write {}", path.display()));
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
pub fn run_text(run: &Escaped<crate::results::RunRecord>, shown: MetricsShown) -> String {
    match shown {
        MetricsShown::Headline => {
            let mut text = crate::report::summary::render(run, &crate::suite::defaults_for(run));
            // A run with UnixBench's tests ends with its index, as UnixBench's does.
            text.push_str(&crate::report::unixbench_index::render(run));
            text
        }
        MetricsShown::All => crate::report::run_table::render(run),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_file_remains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, "old").unwrap();
        write_file_atomically(&path, "new text").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new text");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
        let err = write_file_atomically(dir.path(), "x").unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
    }

    #[test]
    fn links_and_pipes_are_written_through_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.html");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_file_atomically(&link, "through the link").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "through the link"
        );

        let fifo = dir.path().join("pipe");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_file_atomically(&fifo, "through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        use std::os::unix::fs::FileTypeExt as _;
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
    }
}
