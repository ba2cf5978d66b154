//! What one hackbench task does: the fd pairs, the start handshake, a
//! sender's spray of messages and a receiver's reads, and the shared slot
//! where each task leaves its outcome.
//!
//! These are rt-tests' hackbench's definitions. A task writes one byte to
//! the ready pipe and waits in `poll` on the wake pipe; the main task reads
//! one byte per task, takes the start time and writes one byte to the wake
//! pipe, which wakes every task at once (the byte is never consumed). Each
//! sender then writes `loops` times one `datasize`-byte message to each of
//! its group's receivers in turn (round robin), finishing partial writes;
//! each receiver reads `fds x loops` messages, finishing partial reads.
//!
//! The same code runs in forked children and in threads, so it only makes
//! raw system calls and touches only memory prepared before the fork (see
//! [`super::worker_processes`]). Interrupted calls (`EINTR`) are retried unless the
//! task was asked to stop, which is how threads are stopped early (see
//! [`super::wake_signal`]); processes are simply killed.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};

use crate::sys::anon_map::{AnonMap, Sharing};

crate::param_choice! {
    /// What carries the messages.
    pub enum Ipc {
        /// `socketpair(AF_UNIX, SOCK_STREAM)` (hackbench's default).
        Socket = "socket",
        /// `pipe` (hackbench `-p`).
        Pipe = "pipe",
    }
}

/// A connected pair: (read end, write end), hackbench's `fds[0]` and
/// `fds[1]`.
pub fn fd_pair(ipc: Ipc) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: both calls write two fds into the array we pass.
    let ret = unsafe {
        match ipc {
            Ipc::Pipe => libc::pipe(fds.as_mut_ptr()),
            Ipc::Socket => libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()),
        }
    };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// How a task ended (or that it has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Outcome {
    /// Still running, or never started.
    Pending = 0,
    /// Sent or received everything.
    Done = 1,
    /// Writing the ready byte failed.
    ReadyWrite = 2,
    /// Waiting for the start failed.
    StartPoll = 3,
    /// A message write failed.
    Write = 4,
    /// A message read failed.
    Read = 5,
    /// The peer closed before every message arrived.
    EndOfFile = 6,
    /// Asked to stop before finishing.
    Stopped = 7,
}

impl Outcome {
    fn from_u32(v: u32) -> Outcome {
        match v {
            1 => Outcome::Done,
            2 => Outcome::ReadyWrite,
            3 => Outcome::StartPoll,
            4 => Outcome::Write,
            5 => Outcome::Read,
            6 => Outcome::EndOfFile,
            7 => Outcome::Stopped,
            _ => Outcome::Pending,
        }
    }

    /// What went wrong, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Outcome::Pending => "did not finish",
            Outcome::Done => "finished",
            Outcome::ReadyWrite => "could not say it was ready",
            Outcome::StartPoll => "could not wait for the start",
            Outcome::Write => "failed writing a message",
            Outcome::Read => "failed reading a message",
            Outcome::EndOfFile => "saw its sender close before every message arrived",
            Outcome::Stopped => "was stopped",
        }
    }
}

/// Where one task leaves its outcome, in memory shared with forked
/// children.
#[derive(Debug, Default)]
#[repr(C)]
pub struct TaskSlot {
    outcome: AtomicU32,
    errno: AtomicI32,
    /// Message bytes sent or received.
    bytes: AtomicU64,
}

impl TaskSlot {
    /// The task's outcome so far.
    pub fn outcome(&self) -> Outcome {
        Outcome::from_u32(self.outcome.load(Ordering::Acquire))
    }
    /// The OS error of a failed call (0 if none).
    pub fn errno(&self) -> i32 {
        self.errno.load(Ordering::Relaxed)
    }
    /// Message bytes the task sent or received.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
    fn finish(&self, result: Result<u64, Failure>) {
        let (outcome, errno, bytes) = match result {
            Ok(bytes) => (Outcome::Done, 0, bytes),
            Err(f) => (f.outcome, f.errno, f.bytes),
        };
        self.bytes.store(bytes, Ordering::Relaxed);
        self.errno.store(errno, Ordering::Relaxed);
        self.outcome.store(outcome as u32, Ordering::Release);
    }
}

/// One slot per task in an anonymous shared mapping: forked children
/// write into the same pages the parent reads.
pub struct Slots {
    map: AnonMap,
    len: usize,
}

impl Slots {
    /// `len` zeroed (pending) slots.
    pub fn new(len: usize) -> io::Result<Slots> {
        let bytes = len.max(1) * std::mem::size_of::<TaskSlot>();
        let map = AnonMap::new(bytes, std::mem::align_of::<TaskSlot>(), Sharing::Shared)?;
        // Anonymous mappings are zero-filled: every slot is Pending.
        Ok(Slots { map, len })
    }

    /// Slot `i`.
    pub fn get(&self, i: usize) -> &TaskSlot {
        assert!(i < self.len, "slot {i} of {}", self.len);
        // SAFETY: in bounds; zeroed memory is a valid TaskSlot (atomics).
        unsafe { &*self.map.ptr().cast::<TaskSlot>().add(i) }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no slots.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A failed step: which, the OS error, and the bytes moved until then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    pub outcome: Outcome,
    pub errno: i32,
    pub bytes: u64,
}

fn errno() -> i32 {
    // SAFETY: reading the thread's errno is async-signal-safe.
    unsafe { *libc::__errno_location() }
}

/// Says "ready" on `ready_out` and blocks until `wake_in` is readable.
pub fn ready(ready_out: RawFd, wake_in: RawFd, stop: &AtomicBool) -> Result<(), Failure> {
    let fail = |outcome| Failure {
        outcome,
        errno: errno(),
        bytes: 0,
    };
    let dummy = b'*';
    loop {
        // SAFETY: writes one byte from a local.
        let n = unsafe { libc::write(ready_out, (&raw const dummy).cast(), 1) };
        if n == 1 {
            break;
        }
        if n < 0 && errno() == libc::EINTR && !stop.load(Ordering::Relaxed) {
            continue;
        }
        return Err(fail(Outcome::ReadyWrite));
    }
    let mut pollfd = libc::pollfd {
        fd: wake_in,
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Failure {
                outcome: Outcome::Stopped,
                errno: 0,
                bytes: 0,
            });
        }
        // SAFETY: one pollfd, ours.
        let n = unsafe { libc::poll(&mut pollfd, 1, -1) };
        if n == 1 {
            return Ok(());
        }
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        return Err(fail(Outcome::StartPoll));
    }
}

/// Sends `loops` rounds of `message`, one to each of `outs` in turn,
/// finishing partial writes. `write` is `write(2)` (a fake in tests).
pub fn send(
    outs: &[RawFd],
    loops: u64,
    message: &[u8],
    stop: &AtomicBool,
    mut write: impl FnMut(RawFd, &[u8]) -> isize,
) -> Result<u64, Failure> {
    let mut sent: u64 = 0;
    for _ in 0..loops {
        for &fd in outs {
            let mut done = 0usize;
            while done < message.len() {
                let n = write(fd, &message[done..]);
                if n > 0 {
                    done += n as usize;
                    sent += n as u64;
                    continue;
                }
                let e = errno();
                if n < 0 && e == libc::EINTR && !stop.load(Ordering::Relaxed) {
                    continue;
                }
                let outcome = if n < 0 && e == libc::EINTR {
                    Outcome::Stopped
                } else {
                    Outcome::Write
                };
                return Err(Failure {
                    outcome,
                    errno: if n < 0 { e } else { 0 },
                    bytes: sent,
                });
            }
        }
    }
    Ok(sent)
}

/// Receives `messages` messages of `buf.len()` bytes from `input`,
/// finishing partial reads. `read` is `read(2)` (a fake in tests).
pub fn receive(
    input: RawFd,
    messages: u64,
    buf: &mut [u8],
    stop: &AtomicBool,
    mut read: impl FnMut(RawFd, &mut [u8]) -> isize,
) -> Result<u64, Failure> {
    let mut received: u64 = 0;
    let size = buf.len();
    for _ in 0..messages {
        let mut done = 0usize;
        while done < size {
            let n = read(input, &mut buf[done..]);
            if n > 0 {
                done += n as usize;
                received += n as u64;
                continue;
            }
            let e = errno();
            if n < 0 && e == libc::EINTR && !stop.load(Ordering::Relaxed) {
                continue;
            }
            let outcome = match n {
                0 => Outcome::EndOfFile,
                _ if e == libc::EINTR => Outcome::Stopped,
                _ => Outcome::Read,
            };
            return Err(Failure {
                outcome,
                errno: if n < 0 { e } else { 0 },
                bytes: received,
            });
        }
    }
    Ok(received)
}

/// `write(2)`.
pub fn sys_write(fd: RawFd, buf: &[u8]) -> isize {
    // SAFETY: writes from a valid slice.
    unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) }
}

/// `read(2)`.
pub fn sys_read(fd: RawFd, buf: &mut [u8]) -> isize {
    // SAFETY: reads into a valid slice.
    unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) }
}

/// A sender task from start to end; its result goes to `slot`.
pub struct SenderTask<'a> {
    pub ready_out: RawFd,
    pub wake_in: RawFd,
    pub outs: &'a [RawFd],
    pub loops: u64,
    pub message: &'a [u8],
}

impl SenderTask<'_> {
    /// Runs the task; returns an exit code (0 on success).
    pub fn run(&self, stop: &AtomicBool, slot: &TaskSlot) -> i32 {
        let result = ready(self.ready_out, self.wake_in, stop)
            .and_then(|()| send(self.outs, self.loops, self.message, stop, sys_write));
        let code = exit_code(&result);
        slot.finish(result);
        code
    }
}

/// A receiver task from start to end; its result goes to `slot`.
pub struct ReceiverTask<'a> {
    pub ready_out: RawFd,
    pub wake_in: RawFd,
    pub input: RawFd,
    pub messages: u64,
    pub buf: &'a mut [u8],
}

impl ReceiverTask<'_> {
    /// Runs the task; returns an exit code (0 on success).
    pub fn run(&mut self, stop: &AtomicBool, slot: &TaskSlot) -> i32 {
        let result = ready(self.ready_out, self.wake_in, stop)
            .and_then(|()| receive(self.input, self.messages, self.buf, stop, sys_read));
        let code = exit_code(&result);
        slot.finish(result);
        code
    }
}

fn exit_code(result: &Result<u64, Failure>) -> i32 {
    match result {
        Ok(_) => 0,
        Err(f) => 10 + f.outcome as i32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    static NO_STOP: AtomicBool = AtomicBool::new(false);

    #[test]
    fn a_sender_writes_round_robin_and_finishes_partial_writes() {
        // Three receivers, two loops, 10-byte messages; the fake accepts at
        // most 4 bytes per call, so each message takes three writes.
        let outs = [30, 31, 32];
        let mut calls: Vec<(RawFd, usize)> = Vec::new();
        let sent = send(&outs, 2, &[b'-'; 10], &NO_STOP, |fd, buf| {
            let n = buf.len().min(4);
            calls.push((fd, n));
            n as isize
        })
        .unwrap();
        assert_eq!(sent, 2 * 3 * 10);
        let order: Vec<RawFd> = calls.iter().map(|c| c.0).collect();
        let one_round = [30, 30, 30, 31, 31, 31, 32, 32, 32];
        assert_eq!(order, [one_round, one_round].concat());
        assert_eq!(calls.iter().map(|c| c.1).sum::<usize>(), 60);
    }

    #[test]
    fn a_receiver_reads_exactly_its_messages_and_reports_an_early_close() {
        let (r, w) = fd_pair(Ipc::Pipe).unwrap();
        // 5 messages of 8 bytes plus 3 extra bytes that must stay unread.
        assert_eq!(sys_write(w.as_raw_fd(), &[7u8; 43]), 43);
        let mut buf = [0u8; 8];
        let got = receive(r.as_raw_fd(), 5, &mut buf, &NO_STOP, sys_read).unwrap();
        assert_eq!(got, 40);
        let mut rest = [0u8; 16];
        assert_eq!(sys_read(r.as_raw_fd(), &mut rest), 3);
        // A sixth message never comes: the writer closes after 3 bytes.
        assert_eq!(sys_write(w.as_raw_fd(), &[7u8; 3]), 3);
        drop(w);
        let err = receive(r.as_raw_fd(), 1, &mut buf, &NO_STOP, sys_read).unwrap_err();
        assert_eq!(err.outcome, Outcome::EndOfFile);
        assert_eq!(err.bytes, 3);
    }

    #[test]
    fn socket_pairs_carry_messages_both_ways_like_pipes() {
        for ipc in [Ipc::Socket, Ipc::Pipe] {
            let (r, w) = fd_pair(ipc).unwrap();
            let outs = [w.as_raw_fd()];
            assert_eq!(
                send(&outs, 3, b"abcd", &NO_STOP, sys_write).unwrap(),
                12,
                "{ipc:?}"
            );
            let mut buf = [0u8; 4];
            assert_eq!(
                receive(r.as_raw_fd(), 3, &mut buf, &NO_STOP, sys_read).unwrap(),
                12
            );
            assert_eq!(&buf, b"abcd");
        }
    }

    #[test]
    fn slots_start_pending_and_keep_outcomes() {
        let slots = Slots::new(3).unwrap();
        assert_eq!(slots.get(2).outcome(), Outcome::Pending);
        slots.get(1).finish(Ok(400));
        slots.get(2).finish(Err(Failure {
            outcome: Outcome::Write,
            errno: libc::EPIPE,
            bytes: 100,
        }));
        assert_eq!(
            (slots.get(1).outcome(), slots.get(1).bytes()),
            (Outcome::Done, 400)
        );
        assert_eq!(slots.get(2).outcome(), Outcome::Write);
        assert_eq!(slots.get(2).errno(), libc::EPIPE);
    }
}
