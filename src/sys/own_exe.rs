//! The path that starts this same program again, for the processes sledge
//! runs of itself (rounds, UnixBench copies).
//!
//! `current_exe` names the file this process was started from. When that
//! file is replaced while sledge runs (an upgrade during a long run, or
//! another sledge installing the same binary to the same path) the name
//! reads "... (deleted)" and starting it fails; `/proc/self/exe` still
//! opens the file this process runs, so it is used then.

use std::io;
use std::path::PathBuf;

/// This process's executable, by a path that can be started now.
pub fn own_executable() -> io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    Ok(if exe.exists() {
        exe
    } else {
        PathBuf::from("/proc/self/exe")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_names_a_file_that_exists() {
        let exe = own_executable().unwrap();
        assert!(exe.exists(), "{}", exe.display());
    }
}
