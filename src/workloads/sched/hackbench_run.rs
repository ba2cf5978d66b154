//! One hackbench run: set up the groups, start every task at once, time
//! until the last has finished, as rt-tests' hackbench does.
//!
//! Every group has `fds` receivers, each with its own fd pair, and `fds`
//! senders that each write `loops` messages to every receiver of the
//! group. The clock starts when every task has said it is ready, just
//! before the start byte is written, and stops when the last task has been
//! reaped (processes) or joined (threads): the same span hackbench's
//! `gettimeofday` pair covers. Forking or spawning the tasks is not timed.
//!
//! Stopping early (Ctrl-C, or a task that failed) never leaves a task
//! behind: processes are killed as a group and reaped (see
//! [`super::worker_processes`]), threads are told to stop and interrupted in their
//! blocking calls (see [`super::wake_signal`]), then joined.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};

use super::hackbench_tasks::{
    Ipc, Outcome, ReceiverTask, SenderTask, Slots, fd_pair, sys_read, sys_write,
};
use super::wake_signal;
use super::worker_processes::{ChildStatus, ProcessGroup};
use crate::engine::{CancelToken, Cancelled};
use crate::sys::affinity;

crate::param_choice! {
    /// How the tasks run.
    pub enum Mode {
        /// Forked processes (hackbench's default, `-P`).
        Process = "process",
        /// Threads of this process (hackbench `-T`).
        Thread = "thread",
    }
}

/// Stack of each task thread. hackbench asks for `PTHREAD_STACK_MIN`
/// (16 KiB); Rust code built without optimisation needs a little more.
const THREAD_STACK: usize = 64 << 10;

/// How often a waiting main task looks at the stop request, and how often
/// it repeats the interrupting signal.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// A blocked task gets this long to stop after being told to.
const STOP_DEADLINE: Duration = Duration::from_secs(10);

/// A hackbench configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub groups: usize,
    pub fds: usize,
    pub loops: u64,
    pub datasize: usize,
    pub ipc: Ipc,
    pub mode: Mode,
    /// Run every task (and the main task) on these CPUs; `None`: where
    /// the run may.
    pub cpus: Option<Vec<usize>>,
}

impl Config {
    /// Senders plus receivers.
    pub fn tasks(&self) -> usize {
        self.groups * self.fds * 2
    }

    /// Messages in one run: every sender sends `loops` to each receiver of
    /// its group.
    pub fn messages(&self) -> u64 {
        self.groups as u64 * self.fds as u64 * self.fds as u64 * self.loops
    }

    /// Open files a run needs at most (thread mode keeps every pair open).
    pub fn open_files(&self) -> u64 {
        let pairs = match self.mode {
            Mode::Thread => self.groups * self.fds,
            Mode::Process => self.fds,
        };
        (pairs as u64 + 2) * 2
    }

    fn slot_of_receiver(&self, group: usize, i: usize) -> usize {
        group * 2 * self.fds + i
    }

    fn slot_of_sender(&self, group: usize, i: usize) -> usize {
        group * 2 * self.fds + self.fds + i
    }

    /// "receiver 3 of group 2" for slot `slot`.
    fn task_name(&self, slot: usize) -> String {
        let group = slot / (2 * self.fds);
        let i = slot % (2 * self.fds);
        if i < self.fds {
            format!("receiver {i} of group {group}")
        } else {
            format!("sender {} of group {group}", i - self.fds)
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// From the start byte until the last task was reaped or joined.
    pub seconds: f64,
    /// Message bytes each receiver got, in task order.
    pub received: Vec<u64>,
    /// Message bytes each sender sent, in task order.
    pub sent: Vec<u64>,
}

impl Run {
    /// Messages received in all.
    pub fn messages(&self, datasize: usize) -> u64 {
        self.received.iter().sum::<u64>() / datasize as u64
    }
}

/// Runs hackbench once. Returns `Err(Cancelled)` when `cancel` was set
/// before it finished; no task is left running either way.
pub fn run(config: &Config, cancel: &CancelToken) -> anyhow::Result<Run> {
    if config.tasks() == 0 || config.datasize == 0 || config.loops == 0 {
        bail!("hackbench needs at least one group, fd, loop and byte");
    }
    wake_signal::install().context("installing the signal that stops blocked tasks")?;
    let _pinned = match &config.cpus {
        Some(cpus) => Some(PinnedThread::to(cpus)?),
        None => None,
    };
    let slots = Slots::new(config.tasks()).context("mapping the tasks' result slots")?;
    let (ready_in, ready_out) = fd_pair(config.ipc).context("creating the ready pair")?;
    let (wake_in, wake_out) = fd_pair(config.ipc).context("creating the start pair")?;
    let start = StartPair {
        ready_in,
        ready_out,
        wake_in,
        wake_out,
    };
    let seconds = match config.mode {
        Mode::Process => run_processes(config, &slots, &start, cancel)?,
        Mode::Thread => run_threads(config, &slots, &start, cancel)?,
    };
    let expected = config.fds as u64 * config.loops * config.datasize as u64;
    let mut received = Vec::with_capacity(config.groups * config.fds);
    let mut sent = Vec::with_capacity(config.groups * config.fds);
    for g in 0..config.groups {
        for i in 0..config.fds {
            received.push(slots.get(config.slot_of_receiver(g, i)).bytes());
            sent.push(slots.get(config.slot_of_sender(g, i)).bytes());
        }
    }
    if let Some(i) = received.iter().position(|&b| b != expected) {
        bail!(
            "receiver {i} got {} bytes instead of {expected}: the run is not valid",
            received[i]
        );
    }
    Ok(Run {
        seconds,
        received,
        sent,
    })
}

/// The ready and start fd pairs every task shares.
struct StartPair {
    ready_in: OwnedFd,
    ready_out: OwnedFd,
    wake_in: OwnedFd,
    wake_out: OwnedFd,
}

impl StartPair {
    /// Reads one byte per task from the ready pair, giving up on a stop
    /// request or when `failed` finds a task that ended before the start.
    fn wait_ready(
        &self,
        tasks: usize,
        cancel: &CancelToken,
        mut failed: impl FnMut() -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut got = 0usize;
        let mut bytes = [0u8; 512];
        while got < tasks {
            if cancel.is_cancelled() {
                return Err(Cancelled.into());
            }
            failed()?;
            let mut pollfd = libc::pollfd {
                fd: self.ready_in.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one pollfd, ours.
            let n = unsafe { libc::poll(&mut pollfd, 1, CANCEL_POLL.as_millis() as i32) };
            if n <= 0 {
                continue;
            }
            let want = (tasks - got).min(bytes.len());
            let n = sys_read(self.ready_in.as_raw_fd(), &mut bytes[..want]);
            if n > 0 {
                got += n as usize;
            } else if n == 0 {
                bail!("the ready pair closed before every task was ready");
            }
        }
        Ok(())
    }

    /// Writes the start byte.
    fn go(&self) -> anyhow::Result<()> {
        loop {
            match sys_write(self.wake_out.as_raw_fd(), b"*") {
                1 => return Ok(()),
                n if n < 0
                    && std::io::Error::last_os_error().kind()
                        == std::io::ErrorKind::Interrupted => {}
                _ => {
                    return Err(std::io::Error::last_os_error()).context("writing the start byte");
                }
            }
        }
    }
}

fn run_processes(
    c: &Config,
    slots: &Slots,
    start: &StartPair,
    cancel: &CancelToken,
) -> anyhow::Result<f64> {
    let message = vec![b'-'; c.datasize];
    let mut buf = vec![0u8; c.datasize];
    // Processes are killed, never asked to stop.
    let never = AtomicBool::new(false);
    let (ready_out, wake_in) = (start.ready_out.as_raw_fd(), start.wake_in.as_raw_fd());
    let mut group = ProcessGroup::new();
    // pid -> slot, to say which task failed.
    let mut slot_of_pid = std::collections::HashMap::with_capacity(c.tasks());
    for g in 0..c.groups {
        if cancel.is_cancelled() {
            return Err(Cancelled.into());
        }
        let mut outs: Vec<OwnedFd> = Vec::with_capacity(c.fds);
        for i in 0..c.fds {
            let (input, output) = fd_pair(c.ipc).context("creating a receiver's pair")?;
            let (input_fd, output_fd) = (input.as_raw_fd(), output.as_raw_fd());
            let slot_index = c.slot_of_receiver(g, i);
            let slot = slots.get(slot_index);
            let buf = &mut buf;
            let never = &never;
            // SAFETY: the body makes raw system calls only, on memory
            // prepared before the fork.
            let pid = unsafe {
                group.spawn(move || {
                    libc::close(output_fd);
                    ReceiverTask {
                        ready_out,
                        wake_in,
                        input: input_fd,
                        messages: c.fds as u64 * c.loops,
                        buf,
                    }
                    .run(never, slot)
                })
            }
            .map_err(|e| fork_error(e, slot_of_pid.len(), c.tasks()))?;
            slot_of_pid.insert(pid, slot_index);
            drop(input);
            outs.push(output);
        }
        let out_fds: Vec<RawFd> = outs.iter().map(|fd| fd.as_raw_fd()).collect();
        for i in 0..c.fds {
            let slot_index = c.slot_of_sender(g, i);
            let slot = slots.get(slot_index);
            let (out_fds, message, never) = (&out_fds, &message, &never);
            // SAFETY: as above.
            let pid = unsafe {
                group.spawn(move || {
                    SenderTask {
                        ready_out,
                        wake_in,
                        outs: out_fds,
                        loops: c.loops,
                        message,
                    }
                    .run(never, slot)
                })
            }
            .map_err(|e| fork_error(e, slot_of_pid.len(), c.tasks()))?;
            slot_of_pid.insert(pid, slot_index);
        }
        // The senders have their copies; the parent keeps none.
        drop(outs);
    }

    start.wait_ready(c.tasks(), cancel, || match group.try_wait_any()? {
        Some((pid, status)) => Err(task_failed(c, slots, slot_of_pid.get(&pid), pid, status)),
        None => Ok(()),
    })?;

    let main = wake_signal::current_thread();
    std::thread::scope(|s| {
        // Interrupts the main task's `waitpid` while a stop is requested;
        // it then kills the group itself, knowing which children are left.
        let (done, done_rx) = mpsc::channel::<()>();
        s.spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(CANCEL_POLL) {
                if cancel.is_cancelled() {
                    wake_signal::poke(main);
                }
            }
        });
        let started = Instant::now();
        start.go()?;
        let mut first_failure: Option<(libc::pid_t, ChildStatus)> = None;
        let mut cancelled = false;
        while group.live() > 0 {
            match group.wait_any().context("waiting for the tasks")? {
                Some((pid, status)) => {
                    if !status.success() && first_failure.is_none() && !cancelled {
                        first_failure = Some((pid, status));
                        group.kill_all();
                    }
                }
                None => {
                    if cancel.is_cancelled() && !cancelled {
                        cancelled = true;
                        group.kill_all();
                    }
                }
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        drop(done);
        if let Some((pid, status)) = first_failure {
            return Err(task_failed(c, slots, slot_of_pid.get(&pid), pid, status));
        }
        if cancelled {
            return Err(Cancelled.into());
        }
        Ok(seconds)
    })
}

fn fork_error(e: std::io::Error, started: usize, tasks: usize) -> anyhow::Error {
    let hint = if e.raw_os_error() == Some(libc::EAGAIN) {
        "; a limit on processes is in the way (`ulimit -u`, the cgroup's pids.max or kernel.threads-max): lower groups or fds"
    } else {
        ""
    };
    anyhow!("fork failed after {started} of {tasks} tasks: {e}{hint}")
}

fn task_failed(
    c: &Config,
    slots: &Slots,
    slot: Option<&usize>,
    pid: libc::pid_t,
    status: ChildStatus,
) -> anyhow::Error {
    let Some(&slot) = slot else {
        return anyhow!("task {pid} {status}");
    };
    let name = c.task_name(slot);
    let s = slots.get(slot);
    match s.outcome() {
        Outcome::Pending | Outcome::Done => anyhow!("{name} (pid {pid}) {status}"),
        outcome => anyhow!(
            "{name} (pid {pid}) {}{}",
            outcome.describe(),
            os_error_suffix(s.errno())
        ),
    }
}

fn os_error_suffix(errno: i32) -> String {
    if errno == 0 {
        String::new()
    } else {
        format!(": {}", std::io::Error::from_raw_os_error(errno))
    }
}

/// How many threads have not finished, and a way to wait for that to
/// reach zero (or for a failure).
#[derive(Default)]
struct Finish {
    remaining: AtomicUsize,
    failed: AtomicBool,
    lock: Mutex<()>,
    changed: Condvar,
}

impl Finish {
    fn task_ended(&self, ok: bool) {
        if !ok {
            self.failed.store(true, Ordering::SeqCst);
        }
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 || !ok {
            let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.changed.notify_all();
        }
    }

    /// Waits until every task ended (true), or a task failed or a stop
    /// was requested (false).
    fn wait(&self, cancel: &CancelToken) -> bool {
        let mut held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.remaining.load(Ordering::Acquire) == 0 {
                return true;
            }
            if cancel.is_cancelled() || self.failed.load(Ordering::SeqCst) {
                return false;
            }
            held = self
                .changed
                .wait_timeout(held, CANCEL_POLL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

fn run_threads(
    c: &Config,
    slots: &Slots,
    start: &StartPair,
    cancel: &CancelToken,
) -> anyhow::Result<f64> {
    let message = vec![b'-'; c.datasize];
    let stop = AtomicBool::new(false);
    let finish = Finish::default();
    // Each task's pthread id, to interrupt it (0 until it has started).
    let thread_ids: Vec<AtomicU64> = (0..c.tasks()).map(|_| AtomicU64::new(0)).collect();
    let mut pairs: Vec<(OwnedFd, OwnedFd)> = Vec::with_capacity(c.groups * c.fds);
    for _ in 0..c.groups * c.fds {
        pairs.push(fd_pair(c.ipc).context("creating a receiver's pair")?);
    }
    let outs: Vec<Vec<RawFd>> = (0..c.groups)
        .map(|g| {
            (0..c.fds)
                .map(|i| pairs[g * c.fds + i].1.as_raw_fd())
                .collect()
        })
        .collect();
    let (ready_out, wake_in) = (start.ready_out.as_raw_fd(), start.wake_in.as_raw_fd());

    let stop_everyone = || {
        stop.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + STOP_DEADLINE;
        while finish.remaining.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            for id in &thread_ids {
                let id = id.load(Ordering::Acquire);
                if id != 0 {
                    wake_signal::poke(id as libc::pthread_t);
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    };

    // The receivers' buffers are made here, not by each thread: a task
    // thread starts, says it is ready and sleeps, as hackbench's do (its
    // buffer is on its stack), so that the threads are spread over the
    // CPUs the same way when the start byte wakes them.
    let mut buffers: Vec<Vec<u8>> = (0..c.groups * c.fds)
        .map(|_| vec![0u8; c.datasize])
        .collect();
    let mut buffers = buffers.iter_mut();
    // Every task's body, in hackbench's order: a group's receivers, then
    // its senders.
    type Body<'a> = Box<dyn FnOnce() -> bool + Send + 'a>;
    let mut bodies: Vec<(usize, Body<'_>)> = Vec::with_capacity(c.tasks());
    for g in 0..c.groups {
        for i in 0..c.fds {
            let slot = slots.get(c.slot_of_receiver(g, i));
            let input = pairs[g * c.fds + i].0.as_raw_fd();
            let (stop, messages) = (&stop, c.fds as u64 * c.loops);
            let buf = buffers
                .next()
                .expect("one buffer per receiver")
                .as_mut_slice();
            bodies.push((
                c.slot_of_receiver(g, i),
                Box::new(move || {
                    let mut task = ReceiverTask {
                        ready_out,
                        wake_in,
                        input,
                        messages,
                        buf,
                    };
                    task.run(stop, slot) == 0
                }),
            ));
        }
        for i in 0..c.fds {
            let slot = slots.get(c.slot_of_sender(g, i));
            let (stop, outs, message, loops) = (&stop, &outs[g], &message, c.loops);
            bodies.push((
                c.slot_of_sender(g, i),
                Box::new(move || {
                    SenderTask {
                        ready_out,
                        wake_in,
                        outs,
                        loops,
                        message,
                    }
                    .run(stop, slot)
                        == 0
                }),
            ));
        }
    }

    std::thread::scope(|s| -> anyhow::Result<f64> {
        let mut handles = Vec::with_capacity(c.tasks());
        let mut spawned = Ok(());
        for (slot_index, body) in bodies {
            finish.remaining.fetch_add(1, Ordering::AcqRel);
            let (finish, id) = (&finish, &thread_ids[slot_index]);
            let result = std::thread::Builder::new()
                .name("hackbench-task".into())
                .stack_size(THREAD_STACK)
                .spawn_scoped(s, move || {
                    id.store(wake_signal::current_thread() as u64, Ordering::Release);
                    let ok = body();
                    finish.task_ended(ok);
                });
            match result {
                Ok(handle) => handles.push(handle),
                Err(e) => {
                    finish.remaining.fetch_sub(1, Ordering::AcqRel);
                    spawned = Err(anyhow!(
                        "starting thread {} of {} failed: {e}; lower groups or fds",
                        handles.len() + 1,
                        c.tasks()
                    ));
                    break;
                }
            }
        }
        let spawned_count = handles.len();
        let ready = spawned.and_then(|()| {
            start.wait_ready(spawned_count, cancel, || {
                if finish.failed.load(Ordering::SeqCst) {
                    Err(anyhow!("a task failed before the start"))
                } else {
                    Ok(())
                }
            })
        });
        if let Err(e) = ready {
            stop_everyone();
            return Err(thread_failure(c, slots).unwrap_or(e));
        }
        let started = Instant::now();
        if let Err(e) = start.go() {
            stop_everyone();
            return Err(e);
        }
        let all_done = finish.wait(cancel);
        if !all_done {
            stop_everyone();
        }
        for handle in handles {
            if handle.join().is_err() {
                return Err(anyhow!("a hackbench thread panicked"));
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        if let Some(e) = thread_failure(c, slots) {
            return Err(e);
        }
        if !all_done {
            return Err(Cancelled.into());
        }
        Ok(seconds)
    })
}

/// The first thread task that failed (not one that was stopped).
fn thread_failure(c: &Config, slots: &Slots) -> Option<anyhow::Error> {
    (0..slots.len()).find_map(|i| {
        let s = slots.get(i);
        match s.outcome() {
            Outcome::Pending | Outcome::Done | Outcome::Stopped => None,
            outcome => Some(anyhow!(
                "{} {}{}",
                c.task_name(i),
                outcome.describe(),
                os_error_suffix(s.errno())
            )),
        }
    })
}

/// Restricts the calling thread (and so every task it starts) to some
/// CPUs until dropped.
struct PinnedThread {
    before: Vec<usize>,
}

impl PinnedThread {
    fn to(cpus: &[usize]) -> anyhow::Result<PinnedThread> {
        let before = affinity::allowed_cpus()?;
        affinity::set_affinity(cpus)?;
        Ok(PinnedThread { before })
    }
}

impl Drop for PinnedThread {
    fn drop(&mut self) {
        let _ = affinity::set_affinity(&self.before);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(mode: Mode, ipc: Ipc) -> Config {
        Config {
            groups: 2,
            fds: 3,
            loops: 4,
            datasize: 10,
            ipc,
            mode,
            cpus: None,
        }
    }

    #[test]
    fn every_receiver_gets_fds_times_loops_messages_in_every_mode() {
        for mode in [Mode::Process, Mode::Thread] {
            for ipc in [Ipc::Socket, Ipc::Pipe] {
                let c = config(mode, ipc);
                let run = run(&c, &CancelToken::new()).unwrap();
                // 2 groups x 3 receivers, each 3 senders x 4 loops x 10 B.
                assert_eq!(run.received, vec![120; 6], "{mode:?} {ipc:?}");
                assert_eq!(run.sent, vec![120; 6], "{mode:?} {ipc:?}");
                assert_eq!(run.messages(10), c.messages());
                assert_eq!(c.messages(), 2 * 3 * 3 * 4);
                assert!(run.seconds > 0.0);
            }
        }
    }

    #[test]
    fn task_names_follow_the_slot_layout() {
        let c = config(Mode::Process, Ipc::Pipe);
        assert_eq!(
            c.task_name(c.slot_of_receiver(1, 2)),
            "receiver 2 of group 1"
        );
        assert_eq!(c.task_name(c.slot_of_sender(0, 1)), "sender 1 of group 0");
    }
}
