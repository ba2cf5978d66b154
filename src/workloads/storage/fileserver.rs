//! `fileserver`: N clients replay the built-in file-server mix against the
//! local filesystem, each in its own tree, in dbench's spirit.
//!
//! Each operation becomes the system calls a Samba server would make for
//! it, as dbench's local (`fileio`) backend does: open/creat, pread,
//! pwrite, close, stat (with a directory scan when the name is missing),
//! fstat, statvfs, utimensat, readdir + stat, rename, unlink, fsync and
//! fcntl byte-range locks. Like dbench it measures the filesystem *with*
//! its page cache: writes are only forced to disk by the mix's flushes.
//! These are our own numbers: the mix has the trace's shape, not its
//! exact operations (see `fileserver_mix`).

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};

use super::fileserver_load::{Executor, LoadLimits, run_load};
use super::fileserver_mix::{self, MAX_CLIENT_BYTES, Op};
use crate::engine::{
    Case, CaseEnv, ParamKind, ParamRole, ParamSet, ParamSpec, Params, TrialContext, TrialOutput,
    Workload,
};
use crate::sys::fd_limit::ensure_open_files;
use crate::workloads::common::params;
use crate::workloads::common::workdir::{self, ScratchDir, remove_scratch};

/// Most clients any fileserver workload accepts.
pub const MAX_CLIENTS: u64 = 4096;

/// Descriptors needed beyond the clients' own: the results store,
/// standard streams and the like.
const SPARE_FDS: u64 = 64;

/// `clients`, shared with `fileserver.net`.
pub fn clients_param() -> ParamSpec {
    ParamSpec {
        name: "clients",
        role: ParamRole::CpuCount,
        help: "concurrent clients, each in its own tree (dbench's NPROCS); `all`: one per CPU",
        kind: ParamKind::Threads { max: MAX_CLIENTS },
        default: "1",
    }
}

/// `warmup`, shared with `fileserver.net`.
pub fn warmup_param() -> ParamSpec {
    ParamSpec {
        name: "warmup",
        role: ParamRole::Other,
        help: "seconds of load before measuring starts (dbench's --warmup)",
        kind: ParamKind::Seconds {
            min: 0.0,
            max: 86_400.0,
        },
        default: "2",
    }
}

/// The limits of a fileserver case: `clients`, and its `warmup` and
/// `time` in seconds.
pub fn load_limits(clients: u64, warmup: f64, time: f64) -> LoadLimits {
    LoadLimits {
        clients: clients as usize,
        warmup: Duration::from_secs_f64(warmup),
        time: params::trial_time(time),
    }
}

/// The `fileserver` workload.
pub struct FileServer;

impl Workload for FileServer {
    fn id(&self) -> &'static str {
        "fileserver"
    }
    fn version(&self) -> u32 {
        // 2: reads no longer run past the end of a file and MB/s counts
        // the bytes reads returned, so version 1's MB/s was overstated.
        2
    }
    fn summary(&self) -> &'static str {
        "N clients replay a file-server operation mix in their own trees, in dbench's spirit, page cache included as in dbench (own numbers)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        FileServerParams::specs()
    }
    /// Each trial's warm-up, then its measured `time`.
    fn trial_seconds(&self, p: &ParamSet, _env: &CaseEnv) -> Option<f64> {
        let p = FileServerParams::from_set(p);
        Some(p.warmup + p.time)
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = FileServerParams::from_set(p);
        let limits = load_limits(p.clients, p.warmup, p.time);
        let bytes = limits.clients as u64 * MAX_CLIENT_BYTES;
        let parent = workdir::check_dir("fileserver", p.dir.as_str(), bytes)?;
        // A client holds up to three files open and briefly a fourth (a
        // directory listing, a probe for a missing name).
        let needed = 4 * limits.clients as u64 + SPARE_FDS;
        ensure_open_files(needed).map_err(|e| {
            anyhow!(
                "fileserver: {} clients need {needed} open files (up to 4 each): {e:#}",
                limits.clients
            )
        })?;
        // No page-cache warning: like dbench, this workload measures the
        // filesystem with its cache by design (its summary says so), and
        // a warning on every run would be about that choice, not the run.
        let warnings: Vec<String> = workdir::filesystem_note(&parent).into_iter().collect();
        Ok(Box::new(FileServerCase {
            limits,
            parent,
            scratch: None,
            script: fileserver_mix::script(),
            warnings,
        }))
    }
}

crate::workload_params! {
    /// The parameters of `fileserver`.
    pub struct FileServerParams {
        clients: u64 = clients_param(),
        time: f64 = params::time("10"),
        warmup: f64 = warmup_param(),
        dir: String = workdir::dir_param(),
    }
}

struct FileServerCase {
    limits: LoadLimits,
    parent: PathBuf,
    scratch: Option<ScratchDir>,
    script: Vec<Op>,
    warnings: Vec<String>,
}

impl Case for FileServerCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        self.scratch = Some(ScratchDir::create(&self.parent, "fileserver")?);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let dir = self
            .scratch
            .as_ref()
            .ok_or_else(|| anyhow!("fileserver: trial before prepare"))?
            .path()
            .to_path_buf();
        run_load(&self.limits, &ctx.cancel, &self.script, |client| {
            Ok(LocalClient::new(dir.join(format!("client{client}"))))
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        remove_scratch(&mut self.scratch)
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// One client working in its own tree.
pub struct LocalClient {
    root: PathBuf,
    handles: Vec<Option<(File, PathBuf)>>,
    buf: Vec<u8>,
}

impl LocalClient {
    /// A client whose tree is `root` (created by the script's first Mkdir).
    pub fn new(root: PathBuf) -> Self {
        LocalClient {
            root,
            handles: (0..4).map(|_| None).collect(),
            buf: vec![0x5a; fileserver_mix::MAX_FILE_BYTES.min(1 << 17) as usize],
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        if relative.is_empty() {
            self.root.clone()
        } else {
            self.root.join(relative)
        }
    }

    fn handle(&self, handle: usize) -> anyhow::Result<&(File, PathBuf)> {
        self.handles
            .get(handle)
            .and_then(Option::as_ref)
            .ok_or_else(|| anyhow!("fileserver: handle {handle} is not open"))
    }
}

impl Executor for LocalClient {
    fn execute(&mut self, op: &Op) -> anyhow::Result<u64> {
        let mut moved = 0;
        match op {
            Op::Deltree => {
                self.handles.iter_mut().for_each(|h| *h = None);
                match std::fs::remove_dir_all(&self.root) {
                    Err(e) if e.kind() != ErrorKind::NotFound => {
                        return Err(e)
                            .with_context(|| format!("removing `{}`", self.root.display()));
                    }
                    _ => {}
                }
            }
            Op::Mkdir { path } => {
                let path = self.path(path);
                std::fs::create_dir(&path)
                    .with_context(|| format!("creating directory `{}`", path.display()))?;
            }
            Op::Open {
                path,
                handle,
                create,
            } => {
                let path = self.path(path);
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(*create)
                    .truncate(*create)
                    .open(&path)
                    .with_context(|| format!("opening `{}`", path.display()))?;
                self.handles[*handle] = Some((file, path));
            }
            Op::OpenMissing { path } => {
                let path = self.path(path);
                if File::open(&path).is_ok() {
                    bail!("`{}` exists but the mix expects it not to", path.display());
                }
            }
            Op::Close { handle } => {
                self.handles[*handle] = None;
            }
            Op::Write {
                handle,
                offset,
                len,
            } => {
                let (file, path) = self.handle(*handle)?;
                let data = &self.buf[..*len];
                file.write_all_at(data, *offset).with_context(|| {
                    format!("writing {len} bytes to `{}` at {offset}", path.display())
                })?;
                moved = *len as u64;
            }
            Op::Read {
                handle,
                offset,
                len,
            } => {
                let (file, path) = self
                    .handles
                    .get(*handle)
                    .and_then(Option::as_ref)
                    .ok_or_else(|| anyhow!("fileserver: handle {handle} is not open"))?;
                // One pread, as a server makes; count what it returned
                // (the script never reads past the end of a file, so this
                // is normally all of `len`).
                let n = file
                    .read_at(&mut self.buf[..*len], *offset)
                    .with_context(|| format!("reading `{}` at {offset}", path.display()))?;
                moved = n as u64;
            }
            Op::QPathInfo { path } => {
                let path = self.path(path);
                resolve_name(&path)?;
            }
            Op::QFileInfo { handle } => {
                let (file, path) = self.handle(*handle)?;
                file.metadata()
                    .with_context(|| format!("fstat of `{}`", path.display()))?;
            }
            Op::QFsInfo => {
                statvfs(&self.root)?;
            }
            Op::SFileInfo { path } => {
                let path = self.path(path);
                touch(&path)?;
            }
            Op::Find { dir } => {
                let dir = self.path(dir);
                for entry in std::fs::read_dir(&dir)
                    .with_context(|| format!("listing `{}`", dir.display()))?
                {
                    let entry = entry?;
                    // A file may vanish between readdir and stat on a busy
                    // server; only the lookup cost matters.
                    let _ = entry.metadata();
                }
            }
            Op::Rename { from, to } => {
                let (from, to) = (self.path(from), self.path(to));
                std::fs::rename(&from, &to).with_context(|| {
                    format!("renaming `{}` to `{}`", from.display(), to.display())
                })?;
            }
            Op::Unlink { path } => {
                let path = self.path(path);
                std::fs::remove_file(&path)
                    .with_context(|| format!("removing `{}`", path.display()))?;
            }
            Op::Flush { handle } => {
                let (file, path) = self.handle(*handle)?;
                file.sync_all()
                    .with_context(|| format!("fsync of `{}`", path.display()))?;
            }
            Op::Lock {
                handle,
                offset,
                len,
            } => {
                let (file, path) = self.handle(*handle)?;
                byte_lock(file, libc::F_WRLCK, *offset, *len)
                    .with_context(|| format!("locking `{}`", path.display()))?;
            }
            Op::Unlock {
                handle,
                offset,
                len,
            } => {
                let (file, path) = self.handle(*handle)?;
                byte_lock(file, libc::F_UNLCK, *offset, *len)
                    .with_context(|| format!("unlocking `{}`", path.display()))?;
            }
        }
        Ok(moved)
    }
}

/// stat, and when the name is missing, a case-insensitive scan of its
/// directory (what a server for Windows clients must do).
fn resolve_name(path: &Path) -> anyhow::Result<()> {
    if std::fs::metadata(path).is_ok() {
        return Ok(());
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(());
    };
    let name = name.to_string_lossy().to_lowercase();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().to_lowercase() == name {
                break;
            }
        }
    }
    Ok(())
}

fn c_path(path: &Path) -> anyhow::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| anyhow!("path `{}` contains a NUL byte", path.display()))
}

fn statvfs(path: &Path) -> anyhow::Result<()> {
    crate::sys::fs_space::fs_space(path)
        .map(drop)
        .with_context(|| format!("statvfs of `{}`", path.display()))
}

/// Sets a file's access and modification times to now.
fn touch(path: &Path) -> anyhow::Result<()> {
    let c = c_path(path)?;
    // SAFETY: `c` is NUL-terminated; a null times pointer means "now".
    if unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), std::ptr::null(), 0) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("setting the times of `{}`", path.display()));
    }
    Ok(())
}

fn byte_lock(file: &File, kind: i32, offset: u64, len: u64) -> std::io::Result<()> {
    // SAFETY: flock is plain old data; all-zero is a valid value.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = offset as libc::off_t;
    lock.l_len = len as libc::off_t;
    // SAFETY: the descriptor is open and `lock` is a valid flock.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &lock) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_client_replays_a_whole_loop_of_the_script() {
        let tmp = tempfile::tempdir().unwrap();
        let mut client = LocalClient::new(tmp.path().join("client0"));
        let script = fileserver_mix::script();
        for _ in 0..2 {
            for op in &script {
                let moved = client
                    .execute(op)
                    .unwrap_or_else(|e| panic!("{op:?}: {e:#}"));
                // Every read returns all it asks for, so the bytes counted
                // here are what fileserver.net (which knows no files)
                // counts for the same script.
                assert_eq!(moved, op.payload(), "{op:?}");
            }
        }
    }
}
