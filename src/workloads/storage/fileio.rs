//! `fileio`: sysbench 1.0.20's fileio test.
//!
//! `prepare` writes `file_num` files (the total size split evenly) in
//! blocks of `block_size` and fsyncs each, as `sysbench fileio prepare`
//! does; every trial is one `sysbench fileio run`: threads take requests
//! from one shared generator (see `fileio_requests`) and issue one
//! pread/pwrite/fsync per request until the time or event limit, then each
//! thread fsyncs every file (`fsync_end`, skipped in the read-only modes).
//! An event is one request, fsyncs included, and its latency is what the
//! histogram records, so events/s, latency and the per-kind rates mean what
//! they mean in sysbench. Only sysbench's synchronous I/O mode is
//! implemented (not `async` or `mmap`).
//!
//! Where sysbench and this workload differ: when `total_size` is not a
//! multiple of `file_num × block_size`, sysbench rounds each file *up* to
//! whole blocks but addresses only the first `total_size / file_num` bytes;
//! here each file is rounded *down* to whole blocks, so the files are
//! exactly the data set that is addressed.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use hdrhistogram::Histogram;

use super::fileio_requests::{Generator, Layout, Mode, Request};
use super::io::{self, AlignedBuf, OpenFlags};
use crate::engine::{
    Cancelled, Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params,
    TrialContext, TrialOutput, Workload,
};
use crate::stats::latency_histogram;
use crate::workloads::common::event_loop::latency_metrics;
use crate::workloads::common::params;
use crate::workloads::common::rng::Xoroshiro128Plus;
use crate::workloads::common::workdir::{self, ScratchDir, remove_scratch};

const MIB: f64 = 1024.0 * 1024.0;
/// O_DIRECT transfers must be multiples of the logical block size, which
/// is 512 bytes on most devices (4096 on some; the open or the first
/// transfer then fails with a clear error).
const DIRECT_IO_GRANULE: u64 = 512;

/// The `fileio` workload.
pub struct FileIo;

impl Workload for FileIo {
    /// sysbench fileio's usual table: a mode per row, a block size per
    /// column.
    fn pivot(&self) -> Option<(&'static str, &'static str)> {
        Some(("mode", "block_size"))
    }
    fn id(&self) -> &'static str {
        "fileio"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "file I/O in seq/random read/write modes with periodic fsync; compatible with `sysbench fileio`"
    }
    fn params(&self) -> Vec<ParamSpec> {
        FileIoParams::specs()
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = FileIoParams::from_set(p);
        let mode = p.mode;
        let num_files = p.file_num as usize;
        let block_size = p.block_size;
        let total_size = p.total_size;
        let file_size = total_size / num_files as u64 / block_size * block_size;
        if file_size == 0 {
            bail!(
                "fileio: total_size {} split over {num_files} files is less than one block of {} per file; raise total_size or lower file_num / block_size",
                total_size,
                block_size
            );
        }
        let direct = p.direct;
        if direct && !block_size.is_multiple_of(DIRECT_IO_GRANULE) {
            bail!(
                "fileio: direct I/O needs block_size to be a multiple of {DIRECT_IO_GRANULE} bytes (got {block_size})"
            );
        }
        let data_bytes = file_size * num_files as u64;
        let parent = workdir::check_dir("fileio", p.dir.as_str(), data_bytes)?;
        let fsync_all = p.fsync_all;
        let sync_writes = p.sync_writes;
        let warnings =
            workdir::data_set_warnings("fileio", data_bytes, env.memory_bytes, direct, &parent);
        Ok(Box::new(FileIoCase {
            layout: Layout {
                mode,
                num_files,
                file_size,
                block_size: block_size as usize,
                rw_ratio: p.rw_ratio,
                // sysbench: fsync_all overrides fsync_freq and fsync_end.
                fsync_freq: if fsync_all { 0 } else { p.fsync_freq },
            },
            fsync_end: p.fsync_end && !fsync_all,
            fsync_all,
            data_only: p.fsync_mode == FsyncMode::Fdatasync,
            flags: OpenFlags {
                direct,
                sync: sync_writes == SyncWrites::Sync,
                dsync: sync_writes == SyncWrites::Dsync,
            },
            threads: p.threads as usize,
            time: params::trial_time(p.time),
            max_events: p.events,
            parent,
            scratch: None,
            files: Vec::new(),
            trials: 0,
            warnings,
        }))
    }
}

crate::param_choice! {
    /// `fsync_mode`: how a file is flushed.
    pub enum FsyncMode {
        Fsync = "fsync",
        Fdatasync = "fdatasync",
    }
}

crate::param_choice! {
    /// `sync_writes`: the flag the files are opened with.
    pub enum SyncWrites {
        None = "none",
        Sync = "sync",
        Dsync = "dsync",
    }
}

crate::workload_params! {
    /// The parameters of `fileio`.
    pub struct FileIoParams {
        mode: Mode = ParamSpec {
            name: "mode",
            role: ParamRole::Other,
            help: "test mode (sysbench's --file-test-mode)",
            kind: ParamKind::Choice(Mode::NAMES),
            default: "rndrw",
        },
        file_num: u64 = ParamSpec {
            name: "file_num",
            role: ParamRole::Other,
            help: "number of files (--file-num)",
            kind: ParamKind::Int {
                min: 1,
                max: 100_000,
            },
            default: "128",
        },
        total_size: u64 = ParamSpec {
            name: "total_size",
            role: ParamRole::Other,
            help: "total size of the files (--file-total-size)",
            kind: ParamKind::Size {
                min: 1,
                max: 1 << 50,
                power_of_two: false,
            },
            default: "2G",
        },
        block_size: u64 = ParamSpec {
            name: "block_size",
            role: ParamRole::Other,
            help: "bytes per read or write (--file-block-size)",
            kind: ParamKind::Size {
                min: 1,
                max: 1 << 30,
                power_of_two: false,
            },
            default: "16K",
        },
        rw_ratio: f64 = ParamSpec {
            name: "rw_ratio",
            role: ParamRole::Other,
            help: "reads per write in rndrw (--file-rw-ratio)",
            kind: ParamKind::Float { min: 0.0, max: 1e9 },
            default: "1.5",
        },
        fsync_freq: u64 = ParamSpec {
            name: "fsync_freq",
            role: ParamRole::Other,
            help: "fsync every file after this many requests; 0 = never (--file-fsync-freq)",
            kind: ParamKind::Int {
                min: 0,
                max: u32::MAX as u64,
            },
            default: "100",
        },
        fsync_end: bool = ParamSpec {
            name: "fsync_end",
            role: ParamRole::Other,
            help: "fsync every file at the end of a trial (--file-fsync-end)",
            kind: ParamKind::Bool,
            default: "true",
        },
        fsync_all: bool = ParamSpec {
            name: "fsync_all",
            role: ParamRole::Other,
            help: "fsync after every write; turns off fsync_freq and fsync_end (--file-fsync-all)",
            kind: ParamKind::Bool,
            default: "false",
        },
        fsync_mode: FsyncMode = ParamSpec {
            name: "fsync_mode",
            role: ParamRole::Other,
            help: "fsync or fdatasync (--file-fsync-mode)",
            kind: ParamKind::Choice(FsyncMode::NAMES),
            default: "fsync",
        },
        direct: bool = ParamSpec {
            name: "direct",
            role: ParamRole::Other,
            help: "open with O_DIRECT, bypassing the page cache (--file-extra-flags=direct)",
            kind: ParamKind::Bool,
            default: "false",
        },
        sync_writes: SyncWrites = ParamSpec {
            name: "sync_writes",
            role: ParamRole::Other,
            help: "open with O_SYNC or O_DSYNC (--file-extra-flags=sync / dsync)",
            kind: ParamKind::Choice(SyncWrites::NAMES),
            default: "none",
        },
        threads: u64 = params::threads("1"),
        time: f64 = params::time("10"),
        events: u64 = params::events(),
        dir: String = workdir::dir_param(),
    }
}

struct FileIoCase {
    layout: Layout,
    fsync_end: bool,
    fsync_all: bool,
    data_only: bool,
    flags: OpenFlags,
    threads: usize,
    time: Duration,
    max_events: u64,
    parent: PathBuf,
    scratch: Option<ScratchDir>,
    /// The open test files and their paths, index = file id.
    files: Vec<(File, PathBuf)>,
    trials: u64,
    warnings: Vec<String>,
}

/// The name sysbench gives file `i`.
pub fn file_name(i: usize) -> String {
    format!("test_file.{i}")
}

impl Case for FileIoCase {
    fn prepare(&mut self, ctx: &TrialContext) -> anyhow::Result<()> {
        let scratch = self
            .scratch
            .insert(ScratchDir::create(&self.parent, "fileio")?);
        let dir = scratch.path().to_path_buf();
        let block = AlignedBuf::new(self.layout.block_size);
        for i in 0..self.layout.num_files {
            let path = dir.join(file_name(i));
            let file = io::open(&path, self.flags, true)?;
            if self.layout.mode != Mode::SeqWr {
                write_file(&file, &path, &block, self.layout.file_size, ctx)?;
                io::sync(&file, &path, false)?;
            }
            self.files.push((file, path));
        }
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        if self.layout.mode == Mode::SeqWr {
            // sysbench's seqwr starts from empty files: its prepare step
            // removes them and the run creates them.
            for (file, path) in &self.files {
                file.set_len(0)
                    .map_err(|e| anyhow!("truncating `{}`: {e}", path.display()))?;
                io::sync(file, path, false)?;
            }
        }
        self.trials += 1;
        let totals = self.run(ctx)?;
        Ok(totals.output())
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.files.clear();
        remove_scratch(&mut self.scratch)
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// Writes `size` bytes in blocks, as sysbench's prepare does, checking for
/// a cancellation between blocks.
fn write_file(
    file: &File,
    path: &Path,
    block: &AlignedBuf,
    size: u64,
    ctx: &TrialContext,
) -> anyhow::Result<()> {
    let step = block.as_slice().len() as u64;
    let mut offset = 0;
    while offset < size {
        ctx.check_cancelled()?;
        io::write_at(file, path, block.as_slice(), offset)?;
        offset += step;
    }
    Ok(())
}

/// What the threads of one trial did.
#[derive(Debug, Default)]
struct Counts {
    reads: u64,
    writes: u64,
    fsyncs: u64,
    bytes_read: u64,
    bytes_written: u64,
    events: u64,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.reads += other.reads;
        self.writes += other.writes;
        self.fsyncs += other.fsyncs;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.events += other.events;
    }
}

struct Totals {
    counts: Counts,
    seconds: f64,
    latency_ns: Histogram<u64>,
}

impl Totals {
    fn output(self) -> TrialOutput {
        let s = self.seconds;
        let c = &self.counts;
        let mut metrics = vec![
            Metric::higher(
                "mib_per_sec",
                "MiB/s",
                (c.bytes_read + c.bytes_written) as f64 / MIB / s,
            ),
            Metric::higher("reads_per_sec", "reads/s", c.reads as f64 / s),
            Metric::higher("writes_per_sec", "writes/s", c.writes as f64 / s),
            Metric::higher("fsyncs_per_sec", "fsyncs/s", c.fsyncs as f64 / s),
            Metric::higher("read_mib_per_sec", "MiB/s", c.bytes_read as f64 / MIB / s),
            Metric::higher(
                "written_mib_per_sec",
                "MiB/s",
                c.bytes_written as f64 / MIB / s,
            ),
            Metric::higher("events_per_sec", "events/s", c.events as f64 / s),
        ];
        metrics.extend(latency_metrics(&self.latency_ns));
        metrics.push(Metric::lower(
            "latency_p99",
            "µs",
            self.latency_ns.value_at_quantile(0.99) as f64 / 1e3,
        ));
        TrialOutput {
            metrics,
            latency_ns: Some(self.latency_ns),
        }
    }
}

impl FileIoCase {
    fn run(&self, ctx: &TrialContext) -> anyhow::Result<Totals> {
        let generator = Mutex::new(Generator::new(self.layout.clone()));
        let failed = AtomicBool::new(false);
        let issued = AtomicU64::new(0);
        let barrier = Barrier::new(self.threads + 1);
        let (seconds, results) = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.threads)
                .map(|thread| {
                    let (generator, failed, issued, barrier) =
                        (&generator, &failed, &issued, &barrier);
                    scope.spawn(move || {
                        let seed = self.trials * 1_000_003 + thread as u64 + 1;
                        let result = self.worker(ctx, generator, issued, failed, barrier, seed);
                        if result.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        result
                    })
                })
                .collect();
            barrier.wait();
            let start = Instant::now();
            let results: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
            (start.elapsed().as_secs_f64(), results)
        });
        let mut counts = Counts::default();
        let mut latency_ns = latency_histogram();
        let mut first_error = None;
        for result in results {
            match result.map_err(|_| anyhow!("a fileio worker thread panicked"))? {
                Ok((c, h)) => {
                    counts.add(&c);
                    latency_ns
                        .add(&h)
                        .map_err(|e| anyhow!("merging latency histograms: {e:?}"))?;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if ctx.cancel.is_cancelled() {
            return Err(Cancelled.into());
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        if counts.events == 0 {
            bail!("fileio: no request completed within the trial");
        }
        Ok(Totals {
            counts,
            seconds,
            latency_ns,
        })
    }

    fn worker(
        &self,
        ctx: &TrialContext,
        generator: &Mutex<Generator>,
        issued: &AtomicU64,
        failed: &AtomicBool,
        barrier: &Barrier,
        seed: u64,
    ) -> anyhow::Result<(Counts, Histogram<u64>)> {
        let mut buf = AlignedBuf::new(self.layout.block_size);
        let mut rng = Xoroshiro128Plus::seeded(seed);
        let mut histogram = latency_histogram();
        let mut counts = Counts::default();
        barrier.wait();
        let end = Instant::now() + self.time;
        loop {
            // sysbench's sb_more_events: the time limit, then the event limit.
            if Instant::now() >= end || ctx.cancel.is_cancelled() || failed.load(Ordering::Relaxed)
            {
                break;
            }
            if self.max_events > 0 && issued.fetch_add(1, Ordering::Relaxed) >= self.max_events {
                break;
            }
            let request = lock(generator).next(&mut rng);
            let started = Instant::now();
            self.execute(&request, &mut buf, &mut counts)?;
            let ns = started.elapsed().as_nanos() as u64;
            histogram.saturating_record(ns.max(1));
            counts.events += 1;
            lock(generator).complete(&request);
        }
        if self.fsync_end
            && !self.layout.mode.read_only()
            && !ctx.cancel.is_cancelled()
            && !failed.load(Ordering::Relaxed)
        {
            for (file, path) in &self.files {
                io::sync(file, path, self.data_only)?;
                counts.fsyncs += 1;
            }
        }
        Ok((counts, histogram))
    }

    fn execute(
        &self,
        request: &Request,
        buf: &mut AlignedBuf,
        counts: &mut Counts,
    ) -> anyhow::Result<()> {
        match *request {
            Request::Read { file, pos, len } => {
                let (f, path) = &self.files[file];
                io::read_at(f, path, &mut buf.as_mut_slice()[..len], pos)?;
                counts.reads += 1;
                counts.bytes_read += len as u64;
            }
            Request::Write { file, pos, len } => {
                let (f, path) = &self.files[file];
                io::write_at(f, path, &buf.as_slice()[..len], pos)?;
                counts.writes += 1;
                counts.bytes_written += len as u64;
                if self.fsync_all {
                    io::sync(f, path, self.data_only)?;
                    counts.fsyncs += 1;
                }
            }
            Request::Fsync { file } => {
                let (f, path) = &self.files[file];
                io::sync(f, path, self.data_only)?;
                counts.fsyncs += 1;
            }
        }
        Ok(())
    }
}

/// Locks the generator; a poisoned lock only means another worker
/// panicked, which the join reports, so the state is still usable.
fn lock(generator: &Mutex<Generator>) -> std::sync::MutexGuard<'_, Generator> {
    generator
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
