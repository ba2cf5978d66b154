//! The request stream of `fileio`, as sysbench 1.0.20 generates it.
//!
//! sysbench's numbers depend as much on which requests it issues as on how
//! fast the disk serves them, so the rules are reproduced exactly:
//!
//! - Sequential modes walk the files in order, one block per request, and
//!   wrap around to the first file after the last.
//! - Random modes pick a uniformly random block of the whole data set.
//! - `rndrw` issues a read while (reads + 1) / (writes + 1) < ratio, counting
//!   requests that have *completed*, so with several threads the mix drifts
//!   the way sysbench's does.
//! - Once writes have dirtied the files, every `fsync_freq` requests the
//!   generator stops handing out reads and writes and issues one fsync per
//!   file, file 0 to the last, because its request counter does not move
//!   during fsyncs. With 128 files and the default of 100, that is 128
//!   fsyncs after every 100 requests. (The request counter counts reads and
//!   writes, not fsyncs.)
//!
//! The generator is shared by all threads behind one lock, as in sysbench.

use crate::workloads::common::rng::Xoroshiro128Plus;

crate::param_choice! {
    /// The test modes of `sysbench fileio --file-test-mode`, by the names
    /// sysbench uses.
    pub enum Mode {
        /// Sequential write into files that start empty.
        SeqWr = "seqwr",
        /// Sequential rewrite of prepared files.
        SeqRewr = "seqrewr",
        /// Sequential read.
        SeqRd = "seqrd",
        /// Random read.
        RndRd = "rndrd",
        /// Random write.
        RndWr = "rndwr",
        /// Random reads and writes in the rw ratio.
        RndRw = "rndrw",
    }
}

impl Mode {
    /// Whether requests walk the files in order.
    pub fn sequential(self) -> bool {
        matches!(self, Mode::SeqWr | Mode::SeqRewr | Mode::SeqRd)
    }

    /// Whether the mode only reads (no fsync at the end, as sysbench).
    pub fn read_only(self) -> bool {
        matches!(self, Mode::SeqRd | Mode::RndRd)
    }
}

/// One request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// Read `len` bytes of file `file` at `pos`.
    Read { file: usize, pos: u64, len: usize },
    /// Write `len` bytes of file `file` at `pos`.
    Write { file: usize, pos: u64, len: usize },
    /// fsync file `file`.
    Fsync { file: usize },
}

/// The shape of the data set and the rules.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The mode.
    pub mode: Mode,
    /// Number of files.
    pub num_files: usize,
    /// Bytes per file (a multiple of `block_size`).
    pub file_size: u64,
    /// Bytes per request.
    pub block_size: usize,
    /// rndrw's reads-to-writes ratio.
    pub rw_ratio: f64,
    /// Requests between fsync rounds; 0 disables them.
    pub fsync_freq: u64,
}

/// The generator's state, reset at the start of every trial.
#[derive(Debug, Clone)]
pub struct Generator {
    layout: Layout,
    position: u64,
    current_file: usize,
    fsynced_file: usize,
    requests: u64,
    dirty: bool,
    /// Reads completed (rndrw's ratio rule counts these).
    pub reads_done: u64,
    /// Writes completed.
    pub writes_done: u64,
}

impl Generator {
    /// A fresh generator at the start of the first file.
    pub fn new(layout: Layout) -> Self {
        Generator {
            layout,
            position: 0,
            current_file: 0,
            fsynced_file: 0,
            requests: 0,
            dirty: false,
            reads_done: 0,
            writes_done: 0,
        }
    }

    /// The next request; `rng` is the calling thread's generator.
    pub fn next(&mut self, rng: &mut Xoroshiro128Plus) -> Request {
        let l = &self.layout;
        let write = match l.mode {
            Mode::SeqWr | Mode::SeqRewr | Mode::RndWr => true,
            Mode::SeqRd | Mode::RndRd => false,
            Mode::RndRw => {
                (self.reads_done + 1) as f64 / (self.writes_done + 1) as f64 >= l.rw_ratio
            }
        };
        // sysbench checks for an fsync round only before writes in the
        // sequential modes, and before any request in the random ones;
        // either way only once something is dirty.
        let may_fsync = !l.mode.sequential() || write;
        if l.fsync_freq != 0
            && self.dirty
            && may_fsync
            && self.requests.is_multiple_of(l.fsync_freq)
        {
            let file = self.fsynced_file;
            self.fsynced_file += 1;
            if self.fsynced_file == l.num_files {
                self.fsynced_file = 0;
                self.dirty = false;
            }
            return Request::Fsync { file };
        }
        self.requests += 1;
        if write {
            self.dirty = true;
        }
        let (file, pos) = if l.mode.sequential() {
            if self.current_file == l.num_files {
                self.current_file = 0;
                self.position = 0;
            }
            let at = (self.current_file, self.position);
            self.position += l.block_size as u64;
            if self.position >= l.file_size {
                self.current_file += 1;
                self.position = 0;
            }
            at
        } else {
            let total = l.file_size * l.num_files as u64;
            let block = l.block_size as u64;
            let mut offset = (rng.next_f64() * total as f64) as u64;
            offset -= offset % block;
            ((offset / l.file_size) as usize, offset % l.file_size)
        };
        let len = l.block_size;
        if write {
            Request::Write { file, pos, len }
        } else {
            Request::Read { file, pos, len }
        }
    }

    /// Records that `request` completed.
    pub fn complete(&mut self, request: &Request) {
        match request {
            Request::Read { .. } => self.reads_done += 1,
            Request::Write { .. } => self.writes_done += 1,
            Request::Fsync { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(mode: Mode) -> Layout {
        Layout {
            mode,
            num_files: 4,
            file_size: 64 * 1024,
            block_size: 16 * 1024,
            rw_ratio: 1.5,
            fsync_freq: 100,
        }
    }

    fn run(mode: Mode, n: usize) -> (u64, u64, u64) {
        let mut g = Generator::new(layout(mode));
        let mut rng = Xoroshiro128Plus::seeded(1);
        let (mut r, mut w, mut f) = (0, 0, 0);
        for _ in 0..n {
            let req = g.next(&mut rng);
            match req {
                Request::Read { .. } => r += 1,
                Request::Write { .. } => w += 1,
                Request::Fsync { .. } => f += 1,
            }
            g.complete(&req);
        }
        (r, w, f)
    }

    #[test]
    fn rndrw_keeps_the_ratio_and_fsyncs_every_file_each_hundred_requests() {
        // 100 requests, then 4 fsyncs, repeated: 104 events per round.
        let (r, w, f) = run(Mode::RndRw, 104 * 50);
        assert_eq!(r + w, 100 * 50);
        assert_eq!(f, 4 * 50);
        // (reads + 1) / (writes + 1) < 1.5 decides each request: 3 reads
        // for every 2 writes.
        assert_eq!((r, w), (3000, 2000));
    }

    #[test]
    fn read_only_modes_never_fsync() {
        assert_eq!(run(Mode::RndRd, 1000), (1000, 0, 0));
        assert_eq!(run(Mode::SeqRd, 1000), (1000, 0, 0));
    }

    #[test]
    fn sequential_requests_walk_the_files_and_wrap() {
        let mut g = Generator::new(layout(Mode::SeqRd));
        let mut rng = Xoroshiro128Plus::seeded(1);
        let seen: Vec<Request> = (0..17).map(|_| g.next(&mut rng)).collect();
        assert_eq!(
            seen[0],
            Request::Read {
                file: 0,
                pos: 0,
                len: 16384
            }
        );
        assert_eq!(
            seen[3],
            Request::Read {
                file: 0,
                pos: 49152,
                len: 16384
            }
        );
        assert_eq!(
            seen[4],
            Request::Read {
                file: 1,
                pos: 0,
                len: 16384
            }
        );
        assert_eq!(
            seen[16],
            Request::Read {
                file: 0,
                pos: 0,
                len: 16384
            }
        );
    }

    #[test]
    fn random_requests_are_block_aligned_and_inside_the_files() {
        let mut g = Generator::new(layout(Mode::RndWr));
        let mut rng = Xoroshiro128Plus::seeded(9);
        let mut files = [0u32; 4];
        for _ in 0..4000 {
            if let Request::Write { file, pos, len } = g.next(&mut rng) {
                assert_eq!(pos % 16384, 0);
                assert!(pos + len as u64 <= 64 * 1024);
                files[file] += 1;
            }
        }
        assert!(files.iter().all(|&n| n > 800), "{files:?}");
    }

    #[test]
    fn seqwr_fsyncs_only_after_writes() {
        let (r, w, f) = run(Mode::SeqWr, 104 * 3);
        assert_eq!((r, w, f), (0, 300, 12));
    }
}
