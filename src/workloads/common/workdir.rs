//! Where workloads write: a scratch subdirectory of the directory the user
//! names, checked before anything is written and always removed. The
//! storage, build, latency and UnixBench families all write there, so it
//! lives with the pieces the families share rather than in one of them.
//!
//! A disk benchmark that dies halfway through must not leave gigabytes
//! behind, and one that cannot finish should say so before it has filled
//! the disk. So every storage case first checks that the directory exists,
//! is writable (for root too: a read-only mount or an immutable directory
//! is refused) and has room for the data plus a margin; only then does it
//! create its own subdirectory, which `cleanup` (and, as a last resort,
//! `Drop`) removes with everything in it.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::engine::params::format_size;
use crate::engine::{ParamKind, ParamRole, ParamSpec};
use crate::monitor::maker_mark::MARKED_PREFIX;
use crate::sys::fs_space::fs_space;

/// Free space kept beyond the data set: filesystems need room for their
/// metadata (inodes, extent trees, journal growth), and filling a disk to
/// the last block hurts everything else on the machine. 64 MiB plus 2% of
/// the data covers ext4's and xfs's metadata for the file counts used here.
pub const SPACE_MARGIN_FIXED: u64 = 64 << 20;
/// The proportional part of the margin, as a divisor (1/50 = 2%).
pub const SPACE_MARGIN_DIVISOR: u64 = 50;

/// The margin added to a data set of `bytes`.
pub fn space_margin(bytes: u64) -> u64 {
    SPACE_MARGIN_FIXED + bytes / SPACE_MARGIN_DIVISOR
}

/// The `dir` parameter every storage workload takes.
pub fn dir_param() -> ParamSpec {
    ParamSpec {
        name: "dir",
        role: ParamRole::ScratchDir,
        help: "directory to test in (a scratch subdirectory is created and removed); default: the current directory",
        kind: ParamKind::Text,
        default: ".",
    }
}

/// Checks `dir` for a workload that will write `bytes` (plus the margin):
/// it must exist, be a directory, be writable and have the free space.
/// Returns the canonical path. Nothing is written.
pub fn check_dir(workload: &str, dir: &str, bytes: u64) -> anyhow::Result<PathBuf> {
    let path = Path::new(if dir.is_empty() { "." } else { dir });
    let meta = std::fs::metadata(path).map_err(|e| {
        anyhow::anyhow!(
            "{workload}: directory `{}` is not usable: {e} (set --param dir=PATH to an existing directory)",
            path.display()
        )
    })?;
    if !meta.is_dir() {
        bail!(
            "{workload}: `{}` is not a directory (set --param dir=PATH to an existing directory)",
            path.display()
        );
    }
    let canonical = std::fs::canonicalize(path)
        .with_context(|| format!("{workload}: resolving `{}`", path.display()))?;
    let stat = fs_space(&canonical)
        .with_context(|| format!("{workload}: statvfs on `{}`", canonical.display()))?;
    if stat.read_only {
        bail!(
            "{workload}: directory `{}` is on a read-only filesystem; nothing was written",
            canonical.display()
        );
    }
    if let Err(e) = access_writable(&canonical) {
        bail!(
            "{workload}: directory `{}` is not writable: {e}; nothing was written",
            canonical.display()
        );
    }
    let needed = bytes.saturating_add(space_margin(bytes));
    if stat.available < needed {
        bail!(
            "{workload}: not enough free space in `{}`: the test needs {} ({} of data + {} margin) but only {} is available; nothing was written (use a smaller size or another dir)",
            canonical.display(),
            human(needed),
            human(bytes),
            human(space_margin(bytes)),
            human(stat.available),
        );
    }
    Ok(canonical)
}

/// Bytes in binary units for messages: `1.5 GiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (scale, unit) in UNITS {
        if bytes >= scale {
            return format!("{:.1} {unit}", bytes as f64 / scale as f64);
        }
    }
    format!("{bytes} B")
}

/// A warning when the data set fits in RAM and the page cache is in the
/// way, or `None`.
pub fn page_cache_warning(
    workload: &str,
    data_bytes: u64,
    memory_bytes: u64,
    direct: bool,
) -> Option<String> {
    (!direct && memory_bytes > 0 && data_bytes < memory_bytes).then(|| {
        format!(
            "{workload}: the data set ({}) is smaller than RAM ({}) and direct I/O is off: the page cache is measured, not the disk (use direct=true or a size above RAM)",
            format_size(data_bytes),
            human(memory_bytes)
        )
    })
}

/// The warnings every storage case gives about its data set: the page
/// cache one (see [`page_cache_warning`]) and the filesystem note (see
/// [`filesystem_note`]).
pub fn data_set_warnings(
    workload: &str,
    data_bytes: u64,
    memory_bytes: u64,
    direct: bool,
    dir: &Path,
) -> Vec<String> {
    page_cache_warning(workload, data_bytes, memory_bytes, direct)
        .into_iter()
        .chain(filesystem_note(dir))
        .collect()
}

/// A note naming the filesystem under `dir` when it is not the one the
/// run's host inventory describes (that one is the working directory's).
pub fn filesystem_note(dir: &Path) -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    let here = crate::probe::filesystem_of(dir)?;
    let inventory = crate::probe::filesystem_of(&cwd);
    if inventory.as_ref().map(|f| &f.mount_point) == Some(&here.mount_point) {
        return None;
    }
    Some(format!(
        "files are in {} on {} ({}, device {}, options {}), not the filesystem the host inventory describes",
        here.path,
        here.mount_point,
        here.fs_type,
        here.block_device.as_deref().unwrap_or("none"),
        here.mount_options
    ))
}

/// access(2) with W_OK | X_OK: unlike a mode check it also refuses root on
/// a read-only mount and on an immutable directory.
fn access_writable(path: &Path) -> std::io::Result<()> {
    let c_path = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: `c_path` is NUL-terminated.
    if unsafe { libc::access(c_path.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The prefix of every scratch directory's name, so a user can find (and
/// remove) what a killed run left behind.
pub const SCRATCH_PREFIX: &str = MARKED_PREFIX;

/// A scratch subdirectory owned by one case,
/// `<parent>/sledge-<workload>-<pid>-<n>`, with this process's mark in it:
/// removed with its contents by `remove` or, failing that, on drop, and by
/// the next run should this process be killed first (see
/// [`crate::monitor::maker_mark`]).
pub use crate::monitor::maker_mark::MarkedDir as ScratchDir;

/// Removes the case's scratch directory, if it made one, and forgets it:
/// what every `Case::cleanup` that writes does, so a second cleanup (or
/// one after a failed `prepare`) finds nothing to do.
pub fn remove_scratch(scratch: &mut Option<ScratchDir>) -> anyhow::Result<()> {
    match scratch.take() {
        Some(mut dir) => dir.remove(),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_is_refused() {
        let err = check_dir("fileio", "/nonexistent/sledge-test", 1).unwrap_err();
        assert!(err.to_string().contains("is not usable"), "{err}");
    }

    #[test]
    fn a_path_under_a_regular_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        let err = check_dir("fileio", file.to_str().unwrap(), 1).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
        let under = file.join("sub");
        assert!(check_dir("fileio", under.to_str().unwrap(), 1).is_err());
    }

    #[test]
    fn too_little_space_is_refused_with_the_numbers() {
        let tmp = tempfile::tempdir().unwrap();
        let err = check_dir("fileio", tmp.path().to_str().unwrap(), 1 << 60).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("not enough free space"), "{msg}");
        assert!(msg.contains("nothing was written"), "{msg}");
    }

    #[test]
    fn scratch_directories_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let mut scratch = ScratchDir::create(tmp.path(), "fileio").unwrap();
        std::fs::write(scratch.path().join("f"), b"data").unwrap();
        scratch.remove().unwrap();
        scratch.remove().unwrap();
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        {
            let _dropped = ScratchDir::create(tmp.path(), "disk").unwrap();
        }
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn remove_scratch_removes_once_and_then_does_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let mut slot = Some(ScratchDir::create(tmp.path(), "disk").unwrap());
        std::fs::write(slot.as_ref().unwrap().path().join("f"), b"data").unwrap();
        remove_scratch(&mut slot).unwrap();
        assert!(slot.is_none());
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        remove_scratch(&mut slot).unwrap();
        assert!(slot.is_none());
    }

    #[test]
    fn the_warning_only_fires_below_ram_without_direct_io() {
        assert!(page_cache_warning("fileio", 1 << 30, 8 << 30, false).is_some());
        assert!(page_cache_warning("fileio", 1 << 30, 8 << 30, true).is_none());
        assert!(page_cache_warning("fileio", 16 << 30, 8 << 30, false).is_none());
    }
}
