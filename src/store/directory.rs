//! The store file's directory: checked when the user named the path,
//! created only for the default location.

use std::fs;
use std::path::{Path, PathBuf};

use super::error::StoreError;

/// Checks that the directory of `path` exists (an empty parent is the
/// current directory). Nothing is created: see
/// [`Store::open_default`](super::handle::Store::open_default).
pub(super) fn check_parent_dir(path: &Path) -> Result<(), StoreError> {
    let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) else {
        return Ok(());
    };
    if dir.is_dir() {
        return Ok(());
    }
    Err(match blocking_file(dir) {
        Some(blocker) => StoreError::NotADirectory {
            path: path.to_path_buf(),
            blocker,
        },
        None => StoreError::NoDirectory {
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
        },
    })
}

/// The nearest existing ancestor of `dir` (itself included) if it is not
/// a directory: the file that stops the directory from being there.
fn blocking_file(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|a| !a.as_os_str().is_empty() && a.exists())
        .filter(|a| !a.is_dir())
        .map(Path::to_path_buf)
}

/// Creates the default store location's directory if it is missing.
pub(super) fn create_default_dir(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::DirBuilderExt as _;
    let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) else {
        return Ok(());
    };
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(blocker) = blocking_file(dir) {
        return Err(StoreError::NotADirectory {
            path: path.to_path_buf(),
            blocker,
        });
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|cause| StoreError::CreateDir {
            dir: dir.to_path_buf(),
            cause,
        })
}
