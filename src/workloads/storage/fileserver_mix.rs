//! The built-in file-server mix that `fileserver` and `fileserver.net`
//! replay: a fixed script of SMB-style operations, generated once from a
//! fixed seed, that every client replays in its own tree, in a loop.
//!
//! dbench replays a recorded trace (`client.txt`, a NetBench run). We do
//! not ship that trace; instead the script below is built to have its
//! shape, measured from the trace: per 100 operations about 27 reads, 17
//! opens (a quarter of them of names that do not exist), 16 path lookups,
//! 13 closes, 9 writes, 6 directory listings, 3–4 unlinks, 3 fs-info and 3
//! file-info queries, 1–2 set-info calls, 1 flush, under 1 rename and a few
//! lock/unlock pairs per thousand. Reads are mostly 4 KiB with some 60 KiB;
//! writes are 64 KiB, 4 KiB, 1 byte and a few other sizes; about 59% of the
//! payload is read and 41% written (the script reads about 55%: its reads
//! stop at the end of the file, so that what a read asks for is what it
//! returns). Operation names are dbench's, so the per-operation latency
//! tables line up.

use crate::workloads::common::rng::Xoroshiro128Plus;

/// Operation kinds, named as dbench names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    NtCreateX,
    Close,
    Rename,
    Unlink,
    Deltree,
    Mkdir,
    QPathInfo,
    QFileInfo,
    QFsInfo,
    SFileInfo,
    Find,
    WriteX,
    ReadX,
    LockX,
    UnlockX,
    Flush,
}

impl OpKind {
    /// Every kind, in dbench's table order.
    pub const ALL: [OpKind; 16] = [
        OpKind::NtCreateX,
        OpKind::Close,
        OpKind::Rename,
        OpKind::Unlink,
        OpKind::Deltree,
        OpKind::Mkdir,
        OpKind::QPathInfo,
        OpKind::QFileInfo,
        OpKind::QFsInfo,
        OpKind::SFileInfo,
        OpKind::Find,
        OpKind::WriteX,
        OpKind::ReadX,
        OpKind::LockX,
        OpKind::UnlockX,
        OpKind::Flush,
    ];

    /// The metric-friendly name (`ntcreatex`, `readx`...).
    pub fn name(self) -> &'static str {
        match self {
            OpKind::NtCreateX => "ntcreatex",
            OpKind::Close => "close",
            OpKind::Rename => "rename",
            OpKind::Unlink => "unlink",
            OpKind::Deltree => "deltree",
            OpKind::Mkdir => "mkdir",
            OpKind::QPathInfo => "qpathinfo",
            OpKind::QFileInfo => "qfileinfo",
            OpKind::QFsInfo => "qfsinfo",
            OpKind::SFileInfo => "sfileinfo",
            OpKind::Find => "find",
            OpKind::WriteX => "writex",
            OpKind::ReadX => "readx",
            OpKind::LockX => "lockx",
            OpKind::UnlockX => "unlockx",
            OpKind::Flush => "flush",
        }
    }

    /// Index into [`OpKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// One operation. Paths are relative to the client's tree; handles are
/// small integers naming open files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Remove the client's tree and everything in it.
    Deltree,
    /// Create a directory.
    Mkdir { path: String },
    /// Open an existing file (`create` false) or create / truncate one.
    Open {
        path: String,
        handle: usize,
        create: bool,
    },
    /// Open a name that does not exist: must fail.
    OpenMissing { path: String },
    /// Close a handle.
    Close { handle: usize },
    /// Write `len` bytes at `offset`.
    Write {
        handle: usize,
        offset: u64,
        len: usize,
    },
    /// Read `len` bytes at `offset`; the script never reads past the end
    /// of the file, so the whole `len` comes back.
    Read {
        handle: usize,
        offset: u64,
        len: usize,
    },
    /// Look up a path: stat, and when it does not exist, scan its
    /// directory for a case-insensitive match, as a Windows-facing server
    /// does (and dbench's `resolve_name`).
    QPathInfo { path: String },
    /// fstat a handle.
    QFileInfo { handle: usize },
    /// statvfs of the tree.
    QFsInfo,
    /// Set a file's times.
    SFileInfo { path: String },
    /// List a directory and stat every entry.
    Find { dir: String },
    /// Rename a file.
    Rename { from: String, to: String },
    /// Remove a file.
    Unlink { path: String },
    /// fsync a handle.
    Flush { handle: usize },
    /// Take a byte-range lock.
    Lock {
        handle: usize,
        offset: u64,
        len: u64,
    },
    /// Release it.
    Unlock {
        handle: usize,
        offset: u64,
        len: u64,
    },
}

impl Op {
    /// The dbench operation this is.
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Deltree => OpKind::Deltree,
            Op::Mkdir { .. } => OpKind::Mkdir,
            Op::Open { .. } | Op::OpenMissing { .. } => OpKind::NtCreateX,
            Op::Close { .. } => OpKind::Close,
            Op::Write { .. } => OpKind::WriteX,
            Op::Read { .. } => OpKind::ReadX,
            Op::QPathInfo { .. } => OpKind::QPathInfo,
            Op::QFileInfo { .. } => OpKind::QFileInfo,
            Op::QFsInfo => OpKind::QFsInfo,
            Op::SFileInfo { .. } => OpKind::SFileInfo,
            Op::Find { .. } => OpKind::Find,
            Op::Rename { .. } => OpKind::Rename,
            Op::Unlink { .. } => OpKind::Unlink,
            Op::Flush { .. } => OpKind::Flush,
            Op::Lock { .. } => OpKind::LockX,
            Op::Unlock { .. } => OpKind::UnlockX,
        }
    }

    /// Payload bytes the operation asks to move (what dbench counts). The
    /// script's reads never run past the end of the file, so for it this
    /// is also what a read returns.
    pub fn payload(&self) -> u64 {
        match self {
            Op::Write { len, .. } | Op::Read { len, .. } => *len as u64,
            _ => 0,
        }
    }
}

/// Directories of a client's tree.
const DIRS: usize = 4;
/// Files kept in the tree: new ones are created, old ones unlinked.
const POOL_MIN: usize = 24;
const POOL_MAX: usize = 48;
/// Transactions per loop of the script.
const TRANSACTIONS: usize = 1500;
/// The script's seed: fixed, so every run replays the same operations.
const SEED: u64 = 0x5eed_f11e;
/// The largest file the script makes; bounds the space a client needs.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Space one client's tree can take at most.
pub const MAX_CLIENT_BYTES: u64 = POOL_MAX as u64 * MAX_FILE_BYTES + (1 << 20);

struct Builder {
    ops: Vec<Op>,
    rng: Xoroshiro128Plus,
    /// Existing files and their sizes.
    files: Vec<(String, u64)>,
    serial: usize,
}

impl Builder {
    fn pick(&mut self, n: usize) -> usize {
        self.rng.below(n as u64) as usize
    }

    /// A random existing file and its size.
    fn any_file(&mut self) -> (String, u64) {
        let i = self.pick(self.files.len());
        self.files[i].clone()
    }

    /// Removes a random existing file from the pool and returns its path.
    fn take_file(&mut self) -> String {
        let i = self.pick(self.files.len());
        self.files.remove(i).0
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.rng.below(100) < percent
    }

    fn new_name(&mut self) -> String {
        self.serial += 1;
        let dir = self.pick(DIRS);
        format!("d{dir}/file{:05}.doc", self.serial)
    }

    fn missing_name(&mut self) -> String {
        let dir = self.pick(DIRS);
        format!("d{dir}/~tmp{:05}.tmp", self.pick(100_000))
    }

    fn write_len(&mut self) -> usize {
        match self.rng.below(100) {
            0..=27 => 65536,
            28..=55 => 4096,
            56..=75 => 1,
            76..=87 => 2048,
            _ => 8192,
        }
    }

    /// Writes a new file of `size` bytes in 64 KiB blocks.
    fn create_file(&mut self, size: u64) {
        let path = self.new_name();
        self.ops.push(Op::Open {
            path: path.clone(),
            handle: 0,
            create: true,
        });
        let mut offset = 0;
        while offset < size {
            let len = (size - offset).min(65536) as usize;
            self.ops.push(Op::Write {
                handle: 0,
                offset,
                len,
            });
            offset += len as u64;
        }
        self.ops.push(Op::Close { handle: 0 });
        self.files.push((path, size));
    }

    fn read_session(&mut self) {
        let (path, size) = self.any_file();
        self.ops.push(Op::Open {
            path,
            handle: 1,
            create: false,
        });
        if self.chance(30) {
            self.ops.push(Op::QFileInfo { handle: 1 });
        }
        let reads = 1 + self.pick(6);
        let mut offset = 0;
        for _ in 0..reads {
            let len = if self.chance(14) { 61440 } else { 4096 };
            if offset >= size {
                offset = 0;
            }
            // Never past the end of the file: a read there would return
            // fewer bytes than asked, and both fileserver workloads count
            // the bytes a read returns, which then would not agree.
            let len = len.min((size - offset) as usize);
            self.ops.push(Op::Read {
                handle: 1,
                offset,
                len,
            });
            offset += len as u64;
        }
        if self.rng.below(1000) < 5 {
            self.ops.push(Op::Lock {
                handle: 1,
                offset: 0,
                len: 1,
            });
            self.ops.push(Op::Unlock {
                handle: 1,
                offset: 0,
                len: 1,
            });
        }
        self.ops.push(Op::Close { handle: 1 });
    }

    fn write_session(&mut self) {
        // Rewrite an existing file in place or save a new document
        // through a temporary name and a rename, as editors do.
        let in_place = self.chance(55) && !self.files.is_empty();
        let (path, target) = if in_place {
            let (path, _) = self.any_file();
            (path, None)
        } else {
            (self.missing_name(), Some(self.new_name()))
        };
        self.ops.push(Op::Open {
            path: path.clone(),
            handle: 2,
            create: !in_place,
        });
        let writes = 1 + self.pick(4);
        let mut offset = 0;
        // Where the writes reach: the file's size afterwards (at least).
        let mut end = 0;
        for _ in 0..writes {
            let len = self.write_len();
            if offset + len as u64 > MAX_FILE_BYTES {
                offset = 0;
            }
            self.ops.push(Op::Write {
                handle: 2,
                offset,
                len,
            });
            offset += len as u64;
            end = end.max(offset);
        }
        if self.chance(35) {
            self.ops.push(Op::Flush { handle: 2 });
        }
        self.ops.push(Op::Close { handle: 2 });
        if self.chance(20) {
            self.ops.push(Op::SFileInfo { path: path.clone() });
        }
        match target {
            Some(target) if self.chance(40) => {
                self.ops.push(Op::Rename {
                    from: path,
                    to: target.clone(),
                });
                self.files.push((target, end));
            }
            Some(_) => self.ops.push(Op::Unlink { path }),
            None => {
                if let Some(entry) = self.files.iter_mut().find(|(p, _)| *p == path) {
                    entry.1 = entry.1.max(end);
                }
            }
        }
    }

    fn trim_pool(&mut self) {
        while self.files.len() > POOL_MAX {
            let path = self.take_file();
            self.ops.push(Op::Unlink { path });
        }
        while self.files.len() < POOL_MIN {
            let size = 4096 * (1 + self.rng.below(MAX_FILE_BYTES / 4096 / 2));
            self.create_file(size);
        }
    }
}

/// The script of one loop: reset the tree, fill it, then the transactions.
pub fn script() -> Vec<Op> {
    let mut b = Builder {
        ops: Vec::new(),
        rng: Xoroshiro128Plus::seeded(SEED),
        files: Vec::new(),
        serial: 0,
    };
    b.ops.push(Op::Deltree);
    b.ops.push(Op::Mkdir {
        path: String::new(),
    });
    for dir in 0..DIRS {
        b.ops.push(Op::Mkdir {
            path: format!("d{dir}"),
        });
    }
    b.trim_pool();
    for _ in 0..TRANSACTIONS {
        match b.rng.below(100) {
            0..=29 => b.read_session(),
            30..=40 => b.write_session(),
            41..=66 => {
                let path = if b.chance(60) {
                    b.any_file().0
                } else {
                    b.missing_name()
                };
                b.ops.push(Op::QPathInfo { path });
            }
            67..=76 => {
                let path = b.missing_name();
                b.ops.push(Op::QPathInfo { path: path.clone() });
                b.ops.push(Op::OpenMissing { path });
            }
            77..=87 => {
                let dir = format!("d{}", b.pick(DIRS));
                b.ops.push(Op::Find { dir });
            }
            88..=95 => b.ops.push(Op::QFsInfo),
            _ => {
                let (path, _) = b.any_file();
                b.ops.push(Op::QPathInfo { path: path.clone() });
                b.ops.push(Op::SFileInfo { path });
            }
        }
        if b.chance(14) && b.files.len() > POOL_MIN {
            let path = b.take_file();
            b.ops.push(Op::Unlink { path });
        }
        b.trim_pool();
    }
    b.ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_has_the_shape_of_the_netbench_trace() {
        let ops = script();
        let mut counts = [0usize; 16];
        let (mut read, mut written) = (0u64, 0u64);
        for op in &ops {
            counts[op.kind().index()] += 1;
            match op {
                Op::Read { len, .. } => read += *len as u64,
                Op::Write { len, .. } => written += *len as u64,
                _ => {}
            }
        }
        let share = |k: OpKind| 100.0 * counts[k.index()] as f64 / ops.len() as f64;
        let read_share = 100.0 * read as f64 / (read + written) as f64;
        let table: Vec<String> = OpKind::ALL
            .iter()
            .map(|&k| format!("{} {:.1}%", k.name(), share(k)))
            .collect();
        let shape = format!(
            "{} ops; {}; read share {read_share:.0}%",
            ops.len(),
            table.join(", ")
        );
        assert!((20.0..34.0).contains(&share(OpKind::ReadX)), "{shape}");
        assert!((12.0..22.0).contains(&share(OpKind::NtCreateX)), "{shape}");
        assert!((10.0..21.0).contains(&share(OpKind::QPathInfo)), "{shape}");
        assert!((5.0..13.0).contains(&share(OpKind::WriteX)), "{shape}");
        assert!((45.0..72.0).contains(&read_share), "{shape}");
        assert!(counts[OpKind::LockX.index()] > 0, "{shape}");
    }

    #[test]
    fn no_read_runs_past_the_end_of_its_file() {
        // Replays the script's effect on file sizes, independently of the
        // builder's bookkeeping.
        let mut sizes = std::collections::HashMap::<String, u64>::new();
        let mut open: [Option<String>; 3] = Default::default();
        for op in script() {
            match op {
                Op::Deltree => sizes.clear(),
                Op::Open {
                    path,
                    handle,
                    create,
                } => {
                    if create {
                        sizes.insert(path.clone(), 0);
                    }
                    assert!(sizes.contains_key(&path), "{path} opened but missing");
                    open[handle] = Some(path);
                }
                Op::Close { handle } => open[handle] = None,
                Op::Write {
                    handle,
                    offset,
                    len,
                } => {
                    let path = open[handle].as_ref().unwrap();
                    let size = sizes.get_mut(path).unwrap();
                    *size = (*size).max(offset + len as u64);
                }
                Op::Read {
                    handle,
                    offset,
                    len,
                } => {
                    let path = open[handle].as_ref().unwrap();
                    let size = sizes[path];
                    assert!(len > 0, "an empty read of {path}");
                    assert!(
                        offset + len as u64 <= size,
                        "reading {len} at {offset} of {path}, {size} bytes long"
                    );
                }
                Op::Rename { from, to } => {
                    let size = sizes.remove(&from).unwrap();
                    sizes.insert(to, size);
                }
                Op::Unlink { path } => {
                    sizes.remove(&path).unwrap();
                }
                _ => {}
            }
        }
    }

    #[test]
    fn every_handle_is_opened_before_use_and_closed() {
        let mut open = [false; 3];
        for op in script() {
            match op {
                Op::Open { handle, .. } => {
                    assert!(!open[handle]);
                    open[handle] = true;
                }
                Op::Close { handle } => {
                    assert!(open[handle]);
                    open[handle] = false;
                }
                Op::Read { handle, .. }
                | Op::Write { handle, .. }
                | Op::QFileInfo { handle }
                | Op::Flush { handle }
                | Op::Lock { handle, .. }
                | Op::Unlock { handle, .. } => assert!(open[handle]),
                _ => {}
            }
        }
        assert_eq!(open, [false; 3]);
    }
}
