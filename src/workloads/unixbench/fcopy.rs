//! `unixbench.fcopy`: UnixBench's file copy (`fstime -c`), in KBps.
//!
//! Each copy creates two files of its own in the case's scratch directory
//! (its working directory), fills the first with `max_blocks` KiB written
//! `buffer` bytes at a time, reads it back, and syncs: what fstime's
//! two-second write and read passes leave behind before the copy test (a
//! file of that size in the page cache, written back). Then it copies for
//! the duration: read `buffer` bytes from the first file, write them to the
//! second; at the end of the first file both are rewound, so the second
//! never grows past `max_blocks` KiB either. The score is the bytes copied
//! per second in KiB (UnixBench's "KBps", counted in 256-byte units of
//! whole buffers here since no read or write is cut short by a signal).
//!
//! UnixBench's index runs three sizes: 256-byte buffers with at most 500
//! blocks, 1 KiB with 2000 and 4 KiB with 8000; each keeps 2000 buffers per
//! file, which is the default here for any buffer size.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::case::{UnixbenchCase, copies_param, time_param};
use super::libc_process;
use super::program::Program;
use super::protocol::Gate;
use super::score::Outcome;
use crate::engine::{
    Case, CaseEnv, IndexEntry, ParamKind, ParamRole, ParamSet, ParamSpec, Params, RunSection,
    Workload,
};
use crate::workloads::common::workdir::{check_dir, dir_param};

/// Smallest buffer fstime accepts (its `COUNTSIZE`).
pub const MIN_BUFFER: u64 = 256;
/// Largest buffer fstime accepts (its `MAX_BUFSIZE`).
pub const MAX_BUFFER: u64 = 8192;
/// Largest file fstime accepts, in KiB blocks.
pub const MAX_BLOCKS: u64 = 1024 * 1024;
/// Buffers per file in UnixBench's three index runs (500 blocks of 1 KiB at
/// 256 B, 2000 at 1 KiB, 8000 at 4 KiB).
pub const BUFFERS_PER_FILE: u64 = 2000;

/// Copies between two looks at the clock.
const COPIES_PER_CHECK: u32 = 8;

/// UnixBench's `max_blocks` for a buffer size: 2000 buffers per file.
pub fn default_max_blocks(buffer: u64) -> u64 {
    (BUFFERS_PER_FILE * buffer / 1024).clamp(1, MAX_BLOCKS)
}

/// fstime keeps its buffer in static storage, which gcc aligns; an aligned
/// buffer also keeps the kernel's copies on their fast path.
#[repr(C, align(64))]
struct Buffer([u8; MAX_BUFFER as usize]);

/// The copy's two files, removed when dropped (fstime's `clean_up`).
struct Files {
    names: [PathBuf; 2],
    from: File,
    to: File,
}

impl Files {
    fn create() -> anyhow::Result<Self> {
        let pid = std::process::id();
        let names = [
            PathBuf::from(format!("fcopy0-{pid}")),
            PathBuf::from(format!("fcopy1-{pid}")),
        ];
        let open = |name: &PathBuf| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(name)
                .with_context(|| format!("fcopy: creating `{}`", name.display()))
        };
        let from = open(&names[0])?;
        let to = match open(&names[1]) {
            Ok(file) => file,
            Err(err) => {
                let _ = std::fs::remove_file(&names[0]);
                return Err(err);
            }
        };
        Ok(Files { names, from, to })
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        for name in &self.names {
            let _ = std::fs::remove_file(name);
        }
    }
}

/// The `unixbench.fcopy` workload.
pub struct FileCopyWorkload;

impl Workload for FileCopyWorkload {
    fn id(&self) -> &'static str {
        "unixbench.fcopy"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "copy a file with fixed-size reads and writes, KBps; UnixBench's fstime -c (\"File Copy 1024 bufsize 2000 maxblocks\", 256/500, 4096/8000)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        FileCopyWorkloadParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = FileCopyWorkloadParams::from_set(p);
        let buffer = p.buffer;
        let max_blocks = effective_max_blocks(buffer, p.max_blocks);
        // Each copy has two files of at most max_blocks KiB.
        let bytes = p.copies * 2 * max_blocks * 1024;
        let dir = check_dir(self.id(), p.dir.as_str(), bytes)?;
        let program = Program::FileCopy {
            buffer: buffer as usize,
            max_blocks: max_blocks as usize,
        };
        Ok(Box::new(UnixbenchCase::new(
            self.id(),
            program,
            p.copies,
            p.time,
            Some(dir),
        )?))
    }

    /// The index has three sizes (fstime, fsbuffer, fsdisk); other sizes
    /// are titled as UnixBench's `Run` would title them.
    fn index_entry(&self, p: &ParamSet) -> Option<IndexEntry> {
        let p = FileCopyWorkloadParams::from_set(p);
        let buffer = p.buffer;
        // 0 stands for UnixBench's limit: 2000 buffers per file.
        let max_blocks = effective_max_blocks(buffer, p.max_blocks);
        Some(match (buffer, max_blocks) {
            (1024, 2000) => IndexEntry::Test("fstime"),
            (256, 500) => IndexEntry::Test("fsbuffer"),
            (4096, 8000) => IndexEntry::Test("fsdisk"),
            _ => IndexEntry::Variant(format!("File Copy {buffer} bufsize {max_blocks} maxblocks")),
        })
    }
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        Some(&super::index::SystemIndex)
    }
}

crate::workload_params! {
    /// The parameters of `unixbench.fcopy`.
    pub struct FileCopyWorkloadParams {
        copies: u64 = copies_param(),
        time: f64 = time_param("30"),
        buffer: u64 = ParamSpec {
            name: "buffer",
            role: ParamRole::Other,
            help: "bytes per read and write (UnixBench's index: 256, 1024, 4096)",
            kind: ParamKind::Size {
                min: MIN_BUFFER,
                max: MAX_BUFFER,
                power_of_two: false,
            },
            default: "1024",
        },
        max_blocks: u64 = ParamSpec {
            name: "max_blocks",
            role: ParamRole::Other,
            help: "largest file in KiB; 0 = UnixBench's limit for the buffer (2000 buffers: 500 at 256, 2000 at 1K, 8000 at 4K)",
            kind: ParamKind::Int {
                min: 0,
                max: MAX_BLOCKS,
            },
            default: "0",
        },
        dir: String = dir_param(),
    }
}

/// The `max_blocks` a case uses: the parameter, or UnixBench's limit for
/// the buffer when it is 0.
pub fn effective_max_blocks(buffer: u64, max_blocks: u64) -> u64 {
    if max_blocks == 0 {
        default_max_blocks(buffer)
    } else {
        max_blocks
    }
}

/// One copy: prepare the files, then copy for `seconds`.
pub fn run_copy(
    buffer: usize,
    max_blocks: usize,
    seconds: f64,
    gate: &mut Gate,
) -> anyhow::Result<Outcome> {
    if !(MIN_BUFFER as usize..=MAX_BUFFER as usize).contains(&buffer) {
        bail!("fcopy: the buffer must be {MIN_BUFFER} to {MAX_BUFFER} bytes, not {buffer}");
    }
    let buffers = (max_blocks * 1024 / buffer).max(1);
    let mut storage = Box::new(Buffer([0; MAX_BUFFER as usize]));
    let buf = &mut storage.0[..buffer];
    for (i, byte) in buf.iter_mut().enumerate() {
        *byte = (i & 0xff) as u8;
    }
    let mut files = Files::create()?;
    prime(&mut files, buf, buffers)?;
    libc_process::sync_all();
    gate.open()?;
    copy_for(&mut files, buf, Duration::from_secs_f64(seconds))
}

/// What fstime's write and read passes leave: the first file written in
/// full, then read back.
fn prime(files: &mut Files, buf: &mut [u8], buffers: usize) -> anyhow::Result<()> {
    for _ in 0..buffers {
        files
            .from
            .write_all(buf)
            .context("fcopy: writing the source file")?;
    }
    files.from.seek(SeekFrom::Start(0))?;
    while files
        .from
        .read(buf)
        .context("fcopy: reading the source file")?
        == buf.len()
    {}
    Ok(())
}

/// fstime's `c_test`: copy buffer by buffer, rewinding both files at the
/// end of the first; counts whole buffers copied.
fn copy_for(files: &mut Files, buf: &mut [u8], duration: Duration) -> anyhow::Result<Outcome> {
    files.from.seek(SeekFrom::Start(0))?;
    let size = buf.len();
    let mut bytes: u64 = 0;
    let start = Instant::now();
    let elapsed = loop {
        for _ in 0..COPIES_PER_CHECK {
            let n = files.from.read(buf).context("fcopy: copy read")?;
            if n != size {
                // End of the file (or a short read): rewind both.
                files.from.seek(SeekFrom::Start(0))?;
                files.to.seek(SeekFrom::Start(0))?;
                continue;
            }
            let written = files.to.write(buf).context("fcopy: copy write")?;
            if written != size {
                bail!("fcopy: copy write: {written} of {size} bytes written (disk full?)");
            }
            bytes += size as u64;
        }
        let elapsed = start.elapsed();
        if elapsed >= duration {
            break elapsed;
        }
    };
    let seconds = elapsed.as_secs_f64();
    Ok(Outcome {
        count: bytes as f64 / 1024.0 / seconds,
        seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unixbench_pairs_keep_2000_buffers_per_file() {
        assert_eq!(default_max_blocks(256), 500);
        assert_eq!(default_max_blocks(1024), 2000);
        assert_eq!(default_max_blocks(4096), 8000);
    }

    #[test]
    fn a_copy_copies_whole_buffers_and_rewinds() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = {
            // Files are created in the working directory; build them by
            // hand in the temporary directory instead.
            let names = [dir.path().join("a"), dir.path().join("b")];
            let open = |p: &PathBuf| {
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(p)
                    .unwrap()
            };
            Files {
                from: open(&names[0]),
                to: open(&names[1]),
                names,
            }
        };
        let mut buf = vec![7u8; 1024];
        prime(&mut files, &mut buf, 4).unwrap();
        assert_eq!(files.from.metadata().unwrap().len(), 4096);
        let outcome = copy_for(&mut files, &mut buf, Duration::from_millis(20)).unwrap();
        assert!(outcome.count > 0.0 && outcome.seconds >= 0.02);
        // The destination never grows past the source.
        assert_eq!(files.to.metadata().unwrap().len(), 4096);
        let names = files.names.clone();
        drop(files);
        assert!(names.iter().all(|n| !n.exists()));
    }
}
