//! The `io` load: one thread streaming writes to a file (flushed every
//! 16 MiB) and one reading another file back from the disk, in a scratch
//! directory (Interbench's "Write" and "Read" together).
//!
//! Interbench reads a file the size of RAM so that the page cache cannot
//! hold it; sledge's reader drops the file from the page cache before
//! every pass instead (`posix_fadvise(DONTNEED)`), which keeps the file
//! small (`io_size`) and the reads real.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::Context;

use crate::engine::CancelToken;

/// Bytes per read or write call.
const BLOCK: usize = 1 << 20;
/// The writer flushes to the disk after this many bytes.
const FLUSH_EVERY: u64 = 16 << 20;

/// The file the reader reads.
pub const READ_FILE: &str = "read.dat";
/// The file the writer rewrites.
pub const WRITE_FILE: &str = "write.dat";

/// Writes the reader's file (`size` bytes) and flushes it; untimed.
pub fn prepare(dir: &Path, size: u64) -> anyhow::Result<()> {
    let path = dir.join(READ_FILE);
    let mut file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let block = vec![0x33u8; BLOCK];
    let mut written = 0u64;
    while written < size {
        let n = (size - written).min(BLOCK as u64) as usize;
        file.write_all(&block[..n])
            .with_context(|| format!("writing {}", path.display()))?;
        written += n as u64;
    }
    file.sync_all()
        .with_context(|| format!("flushing {}", path.display()))?;
    Ok(())
}

/// Rewrites the writer's file of `size` bytes until `stop` is set.
pub fn write_until_stopped(dir: &Path, size: u64, stop: &CancelToken) -> anyhow::Result<()> {
    let path = dir.join(WRITE_FILE);
    let block = vec![0x77u8; BLOCK];
    loop {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        let (mut written, mut unflushed) = (0u64, 0u64);
        while written < size {
            if stop.is_cancelled() {
                return Ok(());
            }
            let n = (size - written).min(BLOCK as u64) as usize;
            file.write_all(&block[..n])
                .with_context(|| format!("writing {}", path.display()))?;
            written += n as u64;
            unflushed += n as u64;
            if unflushed >= FLUSH_EVERY {
                file.sync_data()
                    .with_context(|| format!("flushing {}", path.display()))?;
                unflushed = 0;
            }
        }
    }
}

/// Reads the reader's file from the disk, pass after pass, until `stop`
/// is set.
pub fn read_until_stopped(dir: &Path, stop: &CancelToken) -> anyhow::Result<()> {
    let path = dir.join(READ_FILE);
    let mut block = vec![0u8; BLOCK];
    loop {
        let mut file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
        // SAFETY: advice on our own open file; offset 0, length 0 = all.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        loop {
            if stop.is_cancelled() {
                return Ok(());
            }
            let n = file
                .read(&mut block)
                .with_context(|| format!("reading {}", path.display()))?;
            if n == 0 {
                break;
            }
        }
    }
}
