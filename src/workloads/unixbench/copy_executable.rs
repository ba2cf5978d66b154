//! The executable UnixBench's copies are started from.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The executable copies are started from, when not this process's own.
static COPY_PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Makes copies start from `path` instead of this process's executable:
/// for a program that embeds sledge's library (such as its test binaries)
/// and so cannot run copies itself. The first call wins.
pub fn use_copy_program(path: impl Into<PathBuf>) {
    let _ = COPY_PROGRAM.set(path.into());
}

/// The executable that runs copies: the one set by [`use_copy_program`],
/// else this process's own (through `/proc/self/exe` when the file was
/// replaced while sledge runs).
pub fn copy_program() -> anyhow::Result<PathBuf> {
    if let Some(path) = COPY_PROGRAM.get() {
        return Ok(path.clone());
    }
    Ok(crate::sys::own_exe::own_executable()?)
}
