//! `disk`: a disk test in bonnie++'s spirit.
//!
//! One trial runs bonnie++'s phases in its order on one file: block write
//! (sequential `chunk_size` writes), rewrite (read a chunk, change it,
//! write it back in place), block read, then random seeks (`seek_workers`
//! threads share `seeks` tickets; each reads a random chunk and rewrites
//! one in ten, bonnie++'s 10%), then `files` empty files created, stat'ed
//! and deleted, first in name order and then in random order. Each phase
//! reports its rate (KiB/s, seeks/s or files/s) and the CPU it used in
//! bonnie++'s way, as CPU time over wall time (%).
//!
//! The file is 2 × RAM by default, bonnie++'s rule for keeping the page
//! cache out; with `direct=true` the cache is bypassed and 1 GiB suffices.
//! Unlike bonnie++, the write and rewrite phases end with an fsync that is
//! timed, so data still in the page cache is never counted as written, and
//! the per-character (putc/getc) phases are left out, as `bonnie++ -f`
//! does. These are our own numbers: they are not bonnie++'s.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, anyhow, bail};

use super::io::{self, AlignedBuf, OpenFlags};
use crate::engine::{
    Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params, TrialContext,
    TrialOutput, Workload,
};
use crate::workloads::common::rng::Xoroshiro128Plus;
use crate::workloads::common::workdir::{self, ScratchDir, remove_scratch};

/// bonnie++ rewrites one seek in ten (its `UpdateSeek`).
const REWRITE_EVERY: u64 = 10;
/// File size with direct I/O when none is given.
const DIRECT_DEFAULT_SIZE: u64 = 1 << 30;

/// What the plan assumes of a disk it has no history of: sequential
/// bytes, random seeks and file creations or deletions a second.
const PLAN_BYTES_PER_SEC: f64 = 400e6;
const PLAN_SEEKS_PER_SEC: f64 = 2_000.0;
const PLAN_FILE_OPS_PER_SEC: f64 = 50_000.0;

/// The `disk` workload.
pub struct Disk;

/// The file's size in whole chunks: the `size` given, or by default 2 ×
/// RAM (1 GiB with direct I/O).
fn file_size(p: &DiskParams, env: &CaseEnv) -> u64 {
    let chunk = p.chunk_size;
    let size = match p.size {
        0 if p.direct => DIRECT_DEFAULT_SIZE,
        0 => env.memory_bytes.saturating_mul(2).max(DIRECT_DEFAULT_SIZE),
        given => given,
    };
    size / chunk * chunk
}

impl Workload for Disk {
    fn id(&self) -> &'static str {
        "disk"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "block write / rewrite / read, random seeks and file create / stat / delete, in bonnie++'s spirit (own numbers)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        DiskParams::specs()
    }
    /// Four sweeps of the file (write, rewrite's read and write, read) at
    /// [`PLAN_BYTES_PER_SEC`], the seeks at [`PLAN_SEEKS_PER_SEC`] and six
    /// metadata operations per file at [`PLAN_FILE_OPS_PER_SEC`]: a
    /// plain SSD's order of magnitude, for a plan without history.
    fn trial_seconds(&self, p: &ParamSet, env: &CaseEnv) -> Option<f64> {
        let p = DiskParams::from_set(p);
        let sweeps = 4.0 * file_size(&p, env) as f64 / PLAN_BYTES_PER_SEC;
        let seeks = p.seeks as f64 / PLAN_SEEKS_PER_SEC;
        let files = 6.0 * p.files as f64 / PLAN_FILE_OPS_PER_SEC;
        Some(sweeps + seeks + files)
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = DiskParams::from_set(p);
        let direct = p.direct;
        let chunk = p.chunk_size;
        let size = file_size(&p, env);
        if size == 0 {
            bail!("disk: size must be at least one chunk ({chunk} bytes)");
        }
        let files = p.files;
        // Empty files still cost an inode and a directory entry.
        let parent = workdir::check_dir("disk", p.dir.as_str(), size + files * 512)?;
        let warnings = workdir::data_set_warnings("disk", size, env.memory_bytes, direct, &parent);
        Ok(Box::new(DiskCase {
            size,
            chunk: chunk as usize,
            flags: OpenFlags {
                direct,
                ..OpenFlags::default()
            },
            seeks: p.seeks,
            seek_workers: p.seek_workers as usize,
            files,
            parent,
            scratch: None,
            trials: 0,
            warnings,
        }))
    }
}

crate::workload_params! {
    /// The parameters of `disk`.
    pub struct DiskParams {
        size: u64 = ParamSpec {
            name: "size",
            role: ParamRole::Other,
            help: "file size; 0 = 2 × RAM (bonnie++'s rule), or 1 GiB with direct I/O",
            kind: ParamKind::Size {
                min: 0,
                max: 1 << 50,
                power_of_two: false,
            },
            default: "0",
        },
        chunk_size: u64 = ParamSpec {
            name: "chunk_size",
            role: ParamRole::Other,
            help: "bytes per read or write (bonnie++'s chunk size)",
            kind: ParamKind::Size {
                min: 512,
                max: 1 << 30,
                power_of_two: true,
            },
            default: "8K",
        },
        direct: bool = ParamSpec {
            name: "direct",
            role: ParamRole::Other,
            help: "open the file with O_DIRECT, bypassing the page cache",
            kind: ParamKind::Bool,
            default: "false",
        },
        seeks: u64 = ParamSpec {
            name: "seeks",
            role: ParamRole::Other,
            help: "random seeks per trial (bonnie++: 8000)",
            kind: ParamKind::Int {
                min: 0,
                max: 1 << 40,
            },
            default: "8000",
        },
        seek_workers: u64 = ParamSpec {
            name: "seek_workers",
            role: ParamRole::Other,
            help: "threads sharing the seeks (bonnie++'s seeker processes: 3)",
            kind: ParamKind::Int { min: 1, max: 1024 },
            default: "3",
        },
        files: u64 = ParamSpec {
            name: "files",
            role: ParamRole::Other,
            help: "empty files to create, stat and delete; 0 skips those phases (bonnie++ -n 16: 16384)",
            kind: ParamKind::Int {
                min: 0,
                max: 10_000_000,
            },
            default: "16384",
        },
        dir: String = workdir::dir_param(),
    }
}

struct DiskCase {
    size: u64,
    chunk: usize,
    flags: OpenFlags,
    seeks: u64,
    seek_workers: usize,
    files: u64,
    parent: PathBuf,
    scratch: Option<ScratchDir>,
    trials: u64,
    warnings: Vec<String>,
}

/// Wall and CPU time of one phase.
struct Phase {
    wall: Instant,
    cpu: f64,
}

impl Phase {
    fn start() -> Self {
        Phase {
            wall: Instant::now(),
            cpu: cpu_seconds(),
        }
    }

    /// (seconds, CPU %) since the start.
    fn stop(self) -> (f64, f64) {
        let seconds = self.wall.elapsed().as_secs_f64().max(1e-9);
        let cpu = (cpu_seconds() - self.cpu).max(0.0);
        (seconds, 100.0 * cpu / seconds)
    }
}

/// User + system CPU time of the whole process, seconds (bonnie++ measures
/// its process too; sledge's other threads are idle during a trial).
fn cpu_seconds() -> f64 {
    // SAFETY: rusage is plain old data; getrusage fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid and writable.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

impl Case for DiskCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.scratch = Some(ScratchDir::create(&self.parent, "disk")?);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        self.trials += 1;
        let dir = self
            .scratch
            .as_ref()
            .ok_or_else(|| anyhow!("disk: trial before prepare"))?
            .path()
            .to_path_buf();
        let path = dir.join("disk.data");
        let mut metrics = Vec::new();
        let kib = self.size as f64 / 1024.0;
        let result = (|| -> anyhow::Result<()> {
            let file = io::open(&path, self.flags, true)?;
            let mut buf = AlignedBuf::new(self.chunk);
            fill(buf.as_mut_slice(), self.trials);

            let phase = Phase::start();
            self.block_write(&file, &path, &buf, ctx)?;
            let (s, cpu) = phase.stop();
            push_phase(&mut metrics, "write", "KiB/s", kib / s, cpu);

            let phase = Phase::start();
            self.rewrite(&file, &path, &mut buf, ctx)?;
            let (s, cpu) = phase.stop();
            push_phase(&mut metrics, "rewrite", "KiB/s", kib / s, cpu);

            let phase = Phase::start();
            self.block_read(&file, &path, &mut buf, ctx)?;
            let (s, cpu) = phase.stop();
            push_phase(&mut metrics, "read", "KiB/s", kib / s, cpu);

            if self.seeks > 0 {
                let phase = Phase::start();
                self.random_seeks(&file, &path, ctx)?;
                let (s, cpu) = phase.stop();
                push_phase(&mut metrics, "seeks", "seeks/s", self.seeks as f64 / s, cpu);
            }
            Ok(())
        })();
        let removed = std::fs::remove_file(&path);
        result?;
        removed.with_context(|| format!("removing `{}`", path.display()))?;

        if self.files > 0 {
            self.file_phases(&dir, ctx, &mut metrics)?;
        }
        Ok(TrialOutput {
            metrics,
            latency_ns: None,
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        remove_scratch(&mut self.scratch)
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// One timed pass of bonnie++'s file tests: `op` on every item in turn,
/// recorded as files/s (and CPU) under `name`. Ctrl-C is looked at every
/// 256 files.
fn file_pass<T>(
    ctx: &TrialContext,
    metrics: &mut Vec<Metric>,
    name: &str,
    items: &[T],
    mut op: impl FnMut(&T) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let phase = Phase::start();
    for (k, item) in items.iter().enumerate() {
        if k % 256 == 0 {
            ctx.check_cancelled()?;
        }
        op(item)?;
    }
    let (s, cpu) = phase.stop();
    push_phase(metrics, name, "files/s", items.len() as f64 / s, cpu);
    Ok(())
}

fn push_phase(metrics: &mut Vec<Metric>, name: &str, unit: &'static str, rate: f64, cpu: f64) {
    let rate_name = if unit == "KiB/s" {
        format!("{name}_kib_per_sec")
    } else {
        format!("{name}_per_sec")
    };
    metrics.push(Metric::higher(rate_name, unit, rate));
    metrics.push(Metric::lower(format!("{name}_cpu"), "% CPU", cpu));
}

/// Fills a buffer with a pattern that compresses poorly enough not to
/// flatter compressing or deduplicating storage.
fn fill(buf: &mut [u8], seed: u64) {
    let mut rng = Xoroshiro128Plus::seeded(seed);
    for chunk in buf.chunks_mut(8) {
        let bytes = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

impl DiskCase {
    fn block_write(
        &self,
        file: &File,
        path: &Path,
        buf: &AlignedBuf,
        ctx: &TrialContext,
    ) -> anyhow::Result<()> {
        self.each_chunk(ctx, |offset| {
            io::write_at(file, path, buf.as_slice(), offset)
        })?;
        io::sync(file, path, false)
    }

    /// Calls `pass(offset)` for every chunk of the file in order, looking
    /// at the cancel flag before each.
    fn each_chunk(
        &self,
        ctx: &TrialContext,
        mut pass: impl FnMut(u64) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut offset = 0;
        while offset < self.size {
            ctx.check_cancelled()?;
            pass(offset)?;
            offset += self.chunk as u64;
        }
        Ok(())
    }

    fn rewrite(
        &self,
        file: &File,
        path: &Path,
        buf: &mut AlignedBuf,
        ctx: &TrialContext,
    ) -> anyhow::Result<()> {
        self.each_chunk(ctx, |offset| {
            io::read_at(file, path, buf.as_mut_slice(), offset)?;
            buf.as_mut_slice()[0] = buf.as_slice()[0].wrapping_add(1);
            io::write_at(file, path, buf.as_slice(), offset)
        })?;
        io::sync(file, path, false)
    }

    fn block_read(
        &self,
        file: &File,
        path: &Path,
        buf: &mut AlignedBuf,
        ctx: &TrialContext,
    ) -> anyhow::Result<()> {
        self.each_chunk(ctx, |offset| {
            io::read_at(file, path, buf.as_mut_slice(), offset)
        })
    }

    fn random_seeks(&self, file: &File, path: &Path, ctx: &TrialContext) -> anyhow::Result<()> {
        let tickets = AtomicU64::new(0);
        let failed = AtomicBool::new(false);
        let chunks = self.size / self.chunk as u64;
        let results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.seek_workers)
                .map(|worker| {
                    let (tickets, failed) = (&tickets, &failed);
                    scope.spawn(move || -> anyhow::Result<()> {
                        let mut buf = AlignedBuf::new(self.chunk);
                        let mut rng =
                            Xoroshiro128Plus::seeded(self.trials * 7919 + worker as u64 + 1);
                        while tickets.fetch_add(1, Ordering::Relaxed) < self.seeks {
                            if failed.load(Ordering::Relaxed) {
                                break;
                            }
                            ctx.check_cancelled()?;
                            let offset = rng.below(chunks) * self.chunk as u64;
                            let step = io::read_at(file, path, buf.as_mut_slice(), offset)
                                .and_then(|()| {
                                    if rng.below(REWRITE_EVERY) == 0 {
                                        buf.as_mut_slice()[0] ^= 0x5a;
                                        io::write_at(file, path, buf.as_slice(), offset)
                                    } else {
                                        Ok(())
                                    }
                                });
                            if let Err(e) = step {
                                failed.store(true, Ordering::Relaxed);
                                return Err(e);
                            }
                        }
                        Ok(())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow!("a seek worker panicked")))
                })
                .collect()
        });
        results.into_iter().collect()
    }

    /// bonnie++'s file tests: sequential create / stat / delete, then
    /// random create / stat / delete, of empty files in one directory.
    fn file_phases(
        &self,
        dir: &Path,
        ctx: &TrialContext,
        metrics: &mut Vec<Metric>,
    ) -> anyhow::Result<()> {
        let tree = dir.join("files");
        std::fs::create_dir(&tree).with_context(|| format!("creating `{}`", tree.display()))?;
        let n = self.files as usize;
        // Names in creation order: a counter plus a fixed random tail, as
        // bonnie++ names its files.
        let mut rng = Xoroshiro128Plus::seeded(self.trials + 17);
        let names: Vec<String> = (0..n)
            .map(|i| format!("{i:010}{:08x}", rng.next_u64() as u32))
            .collect();
        let result = (|| -> anyhow::Result<()> {
            for (label, random) in [("seq", false), ("rnd", true)] {
                let mut order: Vec<usize> = (0..n).collect();
                if random {
                    shuffle(&mut order, &mut rng);
                }
                file_pass(ctx, metrics, &format!("{label}_create"), &order, |&i| {
                    let path = tree.join(&names[i]);
                    File::create(&path)
                        .with_context(|| format!("creating `{}`", path.display()))?;
                    Ok(())
                })?;

                // Sequential stat and delete go in directory order, as
                // bonnie++'s readdir loop; random ones shuffle again.
                let order: Vec<PathBuf> = if random {
                    shuffle(&mut order, &mut rng);
                    order.iter().map(|&i| tree.join(&names[i])).collect()
                } else {
                    std::fs::read_dir(&tree)
                        .with_context(|| format!("listing `{}`", tree.display()))?
                        .map(|e| e.map(|e| e.path()))
                        .collect::<Result<_, _>>()?
                };
                file_pass(ctx, metrics, &format!("{label}_stat"), &order, |path| {
                    std::fs::metadata(path)
                        .with_context(|| format!("stat of `{}`", path.display()))?;
                    Ok(())
                })?;
                file_pass(ctx, metrics, &format!("{label}_delete"), &order, |path| {
                    std::fs::remove_file(path)
                        .with_context(|| format!("deleting `{}`", path.display()))
                })?;
            }
            Ok(())
        })();
        let removed = std::fs::remove_dir_all(&tree);
        result?;
        removed.with_context(|| format!("removing `{}`", tree.display()))
    }
}

/// Fisher-Yates.
fn shuffle<T>(items: &mut [T], rng: &mut Xoroshiro128Plus) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_is_a_permutation() {
        let mut v: Vec<u32> = (0..100).collect();
        shuffle(&mut v, &mut Xoroshiro128Plus::seeded(3));
        assert_ne!(v, (0..100).collect::<Vec<_>>());
        v.sort_unstable();
        assert_eq!(v, (0..100).collect::<Vec<_>>());
    }
}
