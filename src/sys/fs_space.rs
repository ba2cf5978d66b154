//! The size, free space and read-only flag of a file system, from
//! `statvfs(3)`: what the host inventory reports, what the storage
//! workloads check before writing, and one of the file server's operations.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What `statvfs` says of the file system holding a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsSpace {
    /// Size in bytes.
    pub total: u64,
    /// Bytes an unprivileged user may still write (`f_bavail`).
    pub available: u64,
    /// Mounted read-only.
    pub read_only: bool,
}

/// `statvfs` of `path`.
// The statvfs field types differ between targets; `as u64` is a no-op on some.
#[allow(clippy::unnecessary_cast)]
pub fn fs_space(path: &Path) -> std::io::Result<FsSpace> {
    let c_path = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: statvfs is plain old data; all-zero is a valid value.
    let mut buf: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c_path` is NUL-terminated and `buf` is valid and writable.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut buf) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Sizes are counted in fragments; old file systems leave f_frsize 0.
    let fragment = if buf.f_frsize > 0 {
        buf.f_frsize as u64
    } else {
        buf.f_bsize as u64
    };
    Ok(FsSpace {
        total: (buf.f_blocks as u64).saturating_mul(fragment),
        available: (buf.f_bavail as u64).saturating_mul(fragment),
        read_only: (buf.f_flag as u64) & (libc::ST_RDONLY as u64) != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_directory_has_a_size_and_a_missing_path_is_an_error() {
        let space = fs_space(&std::env::temp_dir()).unwrap();
        assert!(
            space.total > 0 && space.available <= space.total,
            "{space:?}"
        );
        let err = fs_space(Path::new("/no/such/sledge/path")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        assert!(fs_space(Path::new("a\0b")).is_err());
    }
}
