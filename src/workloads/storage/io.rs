//! Plain positional file I/O for the storage workloads: page-aligned
//! buffers (O_DIRECT needs them), open flags spelled as sysbench spells
//! them, and reads and writes that either move the whole block or fail
//! with an error naming the file.
//!
//! These are thin wrappers over pread(2)/pwrite(2)/fsync(2) on purpose: the
//! workloads must issue exactly one system call per request, as the
//! classic tools do, so that their request counts mean the same thing.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use anyhow::{Context, anyhow, bail};

/// Buffers are aligned to 4 KiB: the page size, and a multiple of every
/// logical block size O_DIRECT asks for on Linux.
pub const BUFFER_ALIGN: usize = 4096;

/// Extra open flags, as sysbench's `--file-extra-flags`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenFlags {
    /// O_DIRECT: bypass the page cache.
    pub direct: bool,
    /// O_SYNC: every write waits for data and metadata.
    pub sync: bool,
    /// O_DSYNC: every write waits for data.
    pub dsync: bool,
}

impl OpenFlags {
    /// The flags for open(2).
    pub fn bits(self) -> i32 {
        let mut bits = 0;
        if self.direct {
            bits |= libc::O_DIRECT;
        }
        if self.sync {
            bits |= libc::O_SYNC;
        }
        if self.dsync {
            bits |= libc::O_DSYNC;
        }
        bits
    }
}

/// Opens `path` read-write with `flags`, creating it when `create`.
pub fn open(path: &Path, flags: OpenFlags, create: bool) -> anyhow::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .custom_flags(flags.bits())
        .mode(0o600)
        .open(path)
        .map_err(|e| {
            let hint = if flags.direct && e.raw_os_error() == Some(libc::EINVAL) {
                " (this filesystem does not support direct I/O; use direct=false)"
            } else {
                ""
            };
            anyhow::anyhow!("opening `{}`: {e}{hint}", path.display())
        })
}

/// Writes all of `buf` at `offset`: one pwrite, which must be complete.
pub fn write_at(file: &File, path: &Path, buf: &[u8], offset: u64) -> anyhow::Result<()> {
    let n = file.write_at(buf, offset).map_err(|e| {
        anyhow!(
            "writing {} bytes to `{}` at offset {offset}: {e}{}",
            buf.len(),
            path.display(),
            direct_io_hint(file, path, &e)
        )
    })?;
    if n != buf.len() {
        bail!(
            "short write to `{}` at offset {offset}: {n} of {} bytes (is the disk full?)",
            path.display(),
            buf.len()
        );
    }
    Ok(())
}

/// Reads `buf.len()` bytes at `offset`: one pread, which must be complete.
pub fn read_at(file: &File, path: &Path, buf: &mut [u8], offset: u64) -> anyhow::Result<()> {
    let want = buf.len();
    let n = file.read_at(buf, offset).map_err(|e| {
        anyhow!(
            "reading {want} bytes from `{}` at offset {offset}: {e}{}",
            path.display(),
            direct_io_hint(file, path, &e)
        )
    })?;
    if n != want {
        bail!(
            "short read from `{}` at offset {offset}: {n} of {want} bytes (was the file changed?)",
            path.display()
        );
    }
    Ok(())
}

/// What to add to a read or write error: for EINVAL on a file opened
/// with O_DIRECT (whose cause is nearly always a misaligned request), what
/// direct I/O needs, with the device's logical block size when known.
fn direct_io_hint(file: &File, path: &Path, e: &std::io::Error) -> String {
    if e.raw_os_error() != Some(libc::EINVAL) || !opened_direct(file) {
        return String::new();
    }
    let rule = "direct I/O needs block_size and every offset to be multiples of the device's logical block size";
    match logical_block_size(path) {
        Some((disk, size)) => format!(
            " ({rule}: {size} bytes for {disk}, /sys/block/{disk}/queue/logical_block_size)"
        ),
        None => format!(
            " ({rule}, which is unknown here (see /sys/block/DEVICE/queue/logical_block_size; often 512 or 4096 bytes))"
        ),
    }
}

/// Whether `file` was opened with O_DIRECT.
fn opened_direct(file: &File) -> bool {
    // SAFETY: F_GETFL only reads the flags of a descriptor we own.
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    flags != -1 && flags & libc::O_DIRECT != 0
}

/// The disk holding `path` and its logical block size in bytes, when
/// sysfs tells.
fn logical_block_size(path: &Path) -> Option<(String, u64)> {
    let disk = crate::probe::filesystem_of(path)?.block_device?;
    let text = std::fs::read_to_string(format!("/sys/class/block/{disk}/queue/logical_block_size"))
        .ok()?;
    Some((disk, text.trim().parse().ok()?))
}

/// fsync(2) or fdatasync(2).
pub fn sync(file: &File, path: &Path, data_only: bool) -> anyhow::Result<()> {
    let result = if data_only {
        file.sync_data()
    } else {
        file.sync_all()
    };
    result.with_context(|| format!("fsync of `{}`", path.display()))
}

/// A zeroed, page-aligned byte buffer.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer owns its memory exclusively; it is plain bytes.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of `len` bytes (at least 1).
    pub fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(1), BUFFER_ALIGN).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialised bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }

    /// The bytes, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `self` is borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned_and_zeroed() {
        let buf = AlignedBuf::new(16384);
        assert_eq!(buf.as_slice().as_ptr() as usize % BUFFER_ALIGN, 0);
        assert!(buf.as_slice().iter().all(|&b| b == 0));
        assert_eq!(buf.as_slice().len(), 16384);
    }

    #[test]
    fn writes_and_reads_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        let file = open(&path, OpenFlags::default(), true).unwrap();
        let mut buf = AlignedBuf::new(4096);
        buf.as_mut_slice()[0] = 7;
        write_at(&file, &path, buf.as_slice(), 4096).unwrap();
        let mut back = AlignedBuf::new(4096);
        read_at(&file, &path, back.as_mut_slice(), 4096).unwrap();
        assert_eq!(back.as_slice()[0], 7);
        let err = read_at(&file, &path, back.as_mut_slice(), 8192).unwrap_err();
        assert!(err.to_string().contains("short read"), "{err}");
    }

    #[test]
    fn a_misaligned_direct_write_says_what_direct_io_needs() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        let direct = OpenFlags {
            direct: true,
            ..OpenFlags::default()
        };
        let Ok(file) = open(&path, direct, true) else {
            // This filesystem has no direct I/O: nothing to misalign.
            return;
        };
        let buf = AlignedBuf::new(4096);
        // 100 bytes at offset 100: a multiple of no logical block size.
        match write_at(&file, &path, &buf.as_slice()[..100], 100) {
            // Some filesystems (tmpfs) take unaligned direct I/O.
            Ok(()) => {}
            Err(e) => {
                let e = e.to_string();
                assert!(e.contains("Invalid argument"), "{e}");
                assert!(
                    e.contains("multiples of the device's logical block size"),
                    "{e}"
                );
                assert!(e.contains("logical_block_size"), "{e}");
            }
        }
        // A buffered file gets no such hint, whatever its error.
        let plain = open(&tmp.path().join("g"), OpenFlags::default(), true).unwrap();
        assert!(!opened_direct(&plain));
        assert!(opened_direct(&file));
    }
}
