//! One generator thread: an edge-triggered epoll loop (mio) over its share
//! of the connections.
//!
//! The hot path is what makes the generator cheaper than wrk: when a
//! response is complete the next request is written at once, from bytes
//! formatted before the run, without waiting for a writable event and
//! without changing the epoll interest set (wrk adds and removes write
//! interest around every request, two `epoll_ctl` calls). A read shorter
//! than the buffer means the socket is drained (epoll(7)), so a small
//! response costs one `read`, one `write` and a share of one `epoll_wait`.
//! Nothing is allocated and nothing crosses threads per request.
//!
//! Latency ends at the kernel's receive timestamp of a response's last
//! packet (see `arrival`), so the generator's own delays are not counted.
//! That frees the loop to nap: when many requests are in flight, it
//! sleeps before polling and handles the responses that came meanwhile in
//! one batch (see `nap` for how long). A generator blocked in `epoll_wait`
//! must be woken by the server's `write` for every response; in a virtual
//! machine that wake-up is an inter-processor interrupt that costs the
//! server's CPU, the very thing being measured, and the generator's own.
//! Timeouts are deadlines kept per connection and swept a few times per
//! timeout, not a timer per request; waits are precise to the microsecond
//! (`ready`), so an open loop sends each request at its due time.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Interest, Poll, Token};

use super::arrival;
use super::nap::NapControl;
use super::ready::Ready;
use super::response::ResponseParser;
use super::tally::Tally;
use super::url::Target;
use crate::engine::CancelToken;

/// Bytes read per `read` call; one buffer per thread, shared by its
/// connections (bodies are skipped, never kept).
const READ_BUFFER: usize = 256 * 1024;
/// How often the loop looks at the cancel flag and the clock when idle.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// Pause before reconnecting after a failed connect, so that a dead
/// server does not turn the generator into a busy loop.
const CONNECT_BACKOFF: Duration = Duration::from_millis(10);
/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// Each connection sends its next request when the previous response
    /// arrived, after a uniformly random think time up to `think`.
    Closed { think: Duration },
    /// Requests are due at the rate of one per `interval` per connection,
    /// and any free connection sends the next one due; latency counts from
    /// when a request was due.
    Open { interval: Duration },
}

/// What one thread does.
pub(crate) struct WorkerPlan<'a> {
    pub targets: &'a [Target],
    /// Connections of this thread.
    pub connections: usize,
    /// Index of this thread's first connection among all connections.
    pub first_connection: usize,
    /// This thread's index among `threads`, for spreading the threads'
    /// open-loop schedules over each other.
    pub thread: usize,
    /// Generator threads of the run.
    pub threads: usize,
    pub keep_alive: bool,
    pub pacing: Pacing,
    pub timeout: Option<Duration>,
    /// Requests this thread may start (sent or dropped); `None`: no limit.
    pub quota: Option<u64>,
    pub start: Instant,
    pub end: Option<Instant>,
    pub cancel: &'a CancelToken,
    pub seed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for a timer (think time, a back-off) or, in an open loop,
    /// free for the next request due.
    Waiting,
    Connecting,
    Writing,
    Reading,
    /// Nothing more to send.
    Done,
}

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    Refused,
    Reset,
    Timeout,
    Protocol,
    Other,
}

struct Conn {
    stream: Option<TcpStream>,
    phase: Phase,
    parser: ResponseParser,
    written: usize,
    target: usize,
    connect_started: Instant,
    /// When the request's first byte was written.
    sent_at: Instant,
    /// The same moment on the realtime clock, to compare with the kernel's
    /// receive timestamps.
    sent_realtime_ns: i64,
    due_at: Instant,
    /// When the request in flight times out (`None`: none in flight, or
    /// no timeout). Kept here and swept now and then instead of a timer
    /// per request: a heap entry per request cost more instructions than
    /// the rest of the request's handling, and two seconds of stale
    /// entries at 70,000 requests/s no longer fit the cache.
    deadline: Option<Instant>,
    /// Bumped whenever a timer is armed for this connection; a timer whose
    /// number no longer matches is stale.
    seq: u64,
}

struct Worker<'a> {
    plan: &'a WorkerPlan<'a>,
    poll: Poll,
    conns: Vec<Conn>,
    timers: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    scratch: Vec<u8>,
    tally: Tally,
    done: usize,
    /// The index of the URL the next request asks for.
    next_target: usize,
    rng: u64,
    /// Moving mean of response latency (ns), which bounds the nap.
    latency_ewma_ns: u64,
    /// How long the thread naps before polling.
    nap: NapControl,
    /// When the connections' deadlines are next looked at.
    next_sweep: Instant,
    /// Send times, anchored at each wake-up.
    clock: arrival::SendClock,
    /// Open loop: the thread's schedule.
    schedule: Option<Schedule>,
    /// Open loop: the connections free for the next request due, the
    /// longest free first (so that every connection is used in turn).
    idle: VecDeque<usize>,
    /// Open loop: requests are being handed to free connections (a
    /// connection freed meanwhile only joins `idle`).
    dispatching: bool,
}

/// The token of the open loop's schedule timer among the connections'.
const SCHEDULE: usize = usize::MAX;

/// The open loop of one thread: its share of the requests is due one
/// after another, each taken by whichever connection is free.
///
/// A schedule per connection (wrk2's) holds a request back while its own
/// connection waits for a slow response, though other connections are
/// free: near the server's capacity the generator, not the server, then
/// sets when requests go out, and latency from the due time grows with it.
/// With one schedule per thread a request waits only when every
/// connection of the thread has a request in flight.
struct Schedule {
    /// When the next request not yet sent (nor dropped) is due.
    next_due: Instant,
    /// Between two of this thread's requests.
    interval: Duration,
    /// Between two requests of one connection: a request sent later than
    /// this after its due time is counted late.
    per_connection: Duration,
    /// When the timer for `next_due` is armed, if it is.
    armed: Option<Instant>,
}

/// Runs one generator thread until its limits are reached; returns its
/// tally and when it stopped.
pub(crate) fn run_worker(plan: &WorkerPlan<'_>) -> io::Result<(Tally, Instant)> {
    let cpu_at_start = thread_cpu_ns();
    let wall_at_start = Instant::now();
    let mut w = Worker {
        plan,
        poll: Poll::new()?,
        conns: Vec::with_capacity(plan.connections),
        timers: BinaryHeap::with_capacity(plan.connections * 2),
        scratch: vec![0; READ_BUFFER],
        tally: Tally::default(),
        done: 0,
        next_target: plan.first_connection % plan.targets.len().max(1),
        rng: plan.seed | 1,
        latency_ewma_ns: 0,
        nap: NapControl::default(),
        next_sweep: plan.start,
        clock: arrival::SendClock::new(),
        schedule: match plan.pacing {
            Pacing::Open { interval } => Some(Schedule::new(plan, interval)),
            Pacing::Closed { .. } => None,
        },
        idle: VecDeque::with_capacity(plan.connections),
        dispatching: false,
    };
    // An open loop naps too: the nap never runs past the next request's
    // due time (it is cut at the next timer), so it delays no request.
    let may_nap = match plan.pacing {
        Pacing::Closed { think } => think.is_zero(),
        Pacing::Open { .. } => true,
    };
    if may_nap {
        // Naps of a few microseconds and due times 20 µs apart need a
        // timer that fires on time, not after the default 50 µs of slack.
        crate::sys::timer_slack::set_timer_slack_ns(1);
    }
    // Every target of a load answers alike (`LoadConfig::validate`), so
    // each connection's parser is told once, not at every request.
    let bodiless = plan.targets.first().is_some_and(|t| t.bodiless_responses);
    for _ in 0..plan.connections {
        let mut parser = ResponseParser::default();
        parser.expect_bodiless(bodiless);
        w.conns.push(Conn {
            stream: None,
            phase: Phase::Waiting,
            parser,
            written: 0,
            target: 0,
            connect_started: plan.start,
            sent_at: plan.start,
            sent_realtime_ns: 0,
            due_at: plan.start,
            deadline: None,
            seq: 0,
        });
    }
    let now = Instant::now();
    w.clock.anchor(now);
    for idx in 0..w.conns.len() {
        w.next(idx, now, false);
    }
    let mut events = Ready::with_capacity(1024);
    let epoll_fd = w.poll.as_raw_fd();
    let mut last_poll_had_events = false;
    loop {
        let now = Instant::now();
        if w.done == w.conns.len()
            || plan.cancel.is_cancelled()
            || plan.end.is_some_and(|end| now >= end)
        {
            break;
        }
        let mut wait = POLL_INTERVAL;
        if let Some(end) = plan.end {
            wait = wait.min(end - now);
        }
        if let Some(Reverse((at, _, _))) = w.timers.peek() {
            wait = wait.min(at.saturating_duration_since(now));
        }
        if let Some(every) = sweep_interval(plan.timeout) {
            if now >= w.next_sweep {
                w.sweep_deadlines(now);
                w.next_sweep = now + every;
            }
            wait = wait.min(w.next_sweep.saturating_duration_since(now));
        }
        let in_flight = w.in_flight();
        let nap = if may_nap && last_poll_had_events && !w.requests_waiting(now) {
            w.nap.nap(in_flight, w.latency_ewma_ns)
        } else {
            None
        };
        if let Some(nap) = nap.filter(|nap| *nap < wait) {
            std::thread::sleep(nap);
            wait = Duration::ZERO;
        }
        events.wait(epoll_fd, wait)?;
        last_poll_had_events = !events.is_empty();
        let now = Instant::now();
        w.clock.anchor(now);
        let answered_before = w.tally.responses;
        for event in events.iter() {
            w.on_event(event.token, event.read_closed, now);
        }
        if may_nap && last_poll_had_events {
            w.nap
                .after_wake_up(in_flight, w.tally.responses - answered_before);
        }
        while let Some(&Reverse((at, seq, idx))) = w.timers.peek() {
            if at > now {
                break;
            }
            w.timers.pop();
            if idx == SCHEDULE {
                w.on_schedule(at, now);
            } else if w.conns[idx].seq == seq {
                w.on_timer(idx, now);
            }
        }
    }
    let stopped = Instant::now();
    // What the end of the run cut off is counted, not lost: without it a
    // server that never answers (and a run shorter than the timeout)
    // would show requests sent and none accounted for.
    w.tally.unanswered = w.in_flight();
    w.tally.busy_ns = thread_cpu_ns().saturating_sub(cpu_at_start);
    w.tally.wall_ns = stopped.saturating_duration_since(wall_at_start).as_nanos() as u64;
    Ok((w.tally, stopped))
}

impl Schedule {
    /// The schedule of `plan`'s thread, each of its connections at one
    /// request per `per_connection`. The threads' schedules interleave:
    /// thread `t` of `T` starts `t / T` of its interval after the run.
    fn new(plan: &WorkerPlan<'_>, per_connection: Duration) -> Schedule {
        let interval = per_connection / plan.connections.max(1) as u32;
        let offset = interval * plan.thread as u32 / plan.threads.max(1) as u32;
        Schedule {
            next_due: plan.start + offset,
            interval,
            per_connection,
            armed: None,
        }
    }
}

/// CPU time this thread has used, ns (`CLOCK_THREAD_CPUTIME_ID`); 0 where
/// it cannot be read.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the live `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Worker<'_> {
    /// Requests sent and not yet answered or failed.
    fn in_flight(&self) -> u64 {
        let ended = self.tally.responses + self.tally.errors.without_response();
        self.tally.sent.saturating_sub(ended)
    }

    fn may_send(&self, now: Instant) -> bool {
        self.plan
            .quota
            .is_none_or(|q| self.tally.sent + self.tally.dropped < q)
            && self.plan.end.is_none_or(|end| now < end)
            && !self.plan.cancel.is_cancelled()
    }

    /// The connection is free: decide what it does next.
    fn next(&mut self, idx: usize, now: Instant, after_response: bool) {
        if !self.may_send(now) {
            let conn = &mut self.conns[idx];
            conn.stream = None;
            conn.phase = Phase::Done;
            self.done += 1;
            return;
        }
        match self.plan.pacing {
            Pacing::Closed { think } => {
                if after_response && !think.is_zero() {
                    let pause = think.mul_f64(self.random_unit());
                    self.wait(idx, now + pause);
                } else {
                    self.begin(idx, now, now);
                }
            }
            Pacing::Open { .. } => {
                self.conns[idx].phase = Phase::Waiting;
                self.idle.push_back(idx);
                self.dispatch(now);
            }
        }
    }

    /// Open loop: whether requests are due that no connection is free to
    /// send (then the thread must not nap: a free connection is what they
    /// wait for).
    fn requests_waiting(&self, now: Instant) -> bool {
        self.schedule
            .as_ref()
            .is_some_and(|s| s.next_due <= now && self.idle.is_empty())
    }

    /// Open loop: the schedule's timer fired.
    fn on_schedule(&mut self, at: Instant, now: Instant) {
        if let Some(schedule) = &mut self.schedule
            && schedule.armed == Some(at)
        {
            schedule.armed = None;
        }
        self.dispatch(now);
    }

    /// Open loop: hands the requests due by `now` to free connections, and
    /// arms the timer for the next one when connections are left free.
    fn dispatch(&mut self, now: Instant) {
        if self.dispatching {
            return;
        }
        self.dispatching = true;
        while !self.idle.is_empty() {
            if !self.may_send(now) {
                while let Some(idx) = self.idle.pop_front() {
                    let conn = &mut self.conns[idx];
                    conn.stream = None;
                    conn.phase = Phase::Done;
                    self.done += 1;
                }
                break;
            }
            let Some(schedule) = self.schedule.as_mut() else {
                break;
            };
            let mut due = schedule.next_due;
            if due > now {
                if schedule.armed != Some(due) {
                    schedule.armed = Some(due);
                    self.timers.push(Reverse((due, 0, SCHEDULE)));
                }
                break;
            }
            if let Some(timeout) = self.plan.timeout {
                let behind = now - due;
                if behind > timeout {
                    // Requests already older than the timeout would only
                    // time out: drop them, and count them.
                    let interval = schedule.interval;
                    let mut skip =
                        ((behind - timeout).as_nanos() / interval.as_nanos().max(1)) as u64 + 1;
                    if let Some(q) = self.plan.quota {
                        skip = skip.min(q - self.tally.sent - self.tally.dropped);
                    }
                    self.tally.dropped += skip;
                    due += Duration::from_nanos((interval.as_nanos() as u64).saturating_mul(skip));
                    schedule.next_due = due;
                    continue;
                }
            }
            if now - due > schedule.per_connection {
                self.tally.late += 1;
            }
            schedule.next_due = due + schedule.interval;
            let idx = self.idle.pop_front().expect("checked above");
            self.begin(idx, now, due);
        }
        self.dispatching = false;
    }

    fn wait(&mut self, idx: usize, at: Instant) {
        let conn = &mut self.conns[idx];
        conn.phase = Phase::Waiting;
        conn.seq += 1;
        self.timers.push(Reverse((at, conn.seq, idx)));
    }

    /// Starts a request that was due at `due`.
    fn begin(&mut self, idx: usize, now: Instant, due: Instant) {
        self.tally.sent += 1;
        // The URLs in turn, counted without a division per request.
        let target = self.next_target;
        self.next_target = if target + 1 < self.plan.targets.len() {
            target + 1
        } else {
            0
        };
        let conn = &mut self.conns[idx];
        conn.target = target;
        conn.due_at = due;
        conn.written = 0;
        conn.parser.reset();
        conn.deadline = self.plan.timeout.map(|timeout| now + timeout);
        if conn.stream.is_some() {
            self.write_request(idx);
            return;
        }
        conn.connect_started = now;
        let addr = self.plan.targets[target].addr;
        let result = TcpStream::connect(addr).and_then(|mut stream| {
            self.poll.registry().register(
                &mut stream,
                Token(idx),
                Interest::READABLE | Interest::WRITABLE,
            )?;
            Ok(stream)
        });
        match result {
            Ok(stream) => {
                // Without stamps (a kernel that refuses) the generator's
                // clock ends each response instead.
                arrival::enable(stream.as_raw_fd());
                conn.stream = Some(stream);
                conn.phase = Phase::Connecting;
            }
            Err(e) => self.fail(idx, classify(&e), now),
        }
    }

    fn on_event(&mut self, idx: usize, read_closed: bool, now: Instant) {
        let Some(conn) = self.conns.get_mut(idx) else {
            return;
        };
        match conn.phase {
            Phase::Connecting => self.on_connect(idx, now),
            Phase::Writing => self.write_request(idx),
            Phase::Reading => self.read_response(idx, now, read_closed),
            Phase::Waiting | Phase::Done => {
                // The server closed an idle keep-alive connection: reconnect
                // for the next request instead of writing into a dead one.
                if read_closed {
                    conn.stream = None;
                }
            }
        }
    }

    /// A wait is over (timers are armed only for waits).
    fn on_timer(&mut self, idx: usize, now: Instant) {
        if self.conns[idx].phase == Phase::Waiting {
            self.next(idx, now, false);
        }
    }

    /// Fails the requests whose deadline has passed.
    fn sweep_deadlines(&mut self, now: Instant) {
        for idx in 0..self.conns.len() {
            let conn = &self.conns[idx];
            let in_flight = matches!(
                conn.phase,
                Phase::Connecting | Phase::Writing | Phase::Reading
            );
            if in_flight && conn.deadline.is_some_and(|deadline| deadline <= now) {
                self.fail(idx, Failure::Timeout, now);
            }
        }
    }

    fn on_connect(&mut self, idx: usize, now: Instant) {
        let conn = &mut self.conns[idx];
        let Some(stream) = conn.stream.as_ref() else {
            return;
        };
        let error = match stream.take_error() {
            Ok(Some(e)) | Err(e) => Some(e),
            Ok(None) => match stream.peer_addr() {
                Ok(_) => None,
                // Not connected yet: a spurious wake-up.
                Err(e) if e.kind() == io::ErrorKind::NotConnected => return,
                Err(e) => Some(e),
            },
        };
        if let Some(e) = error {
            return self.fail(idx, classify(&e), now);
        }
        let _ = stream.set_nodelay(true);
        let elapsed = now.saturating_duration_since(conn.connect_started);
        let _ = self
            .tally
            .connect
            .record((elapsed.as_nanos() as u64).max(1));
        self.write_request(idx);
    }

    fn write_request(&mut self, idx: usize) {
        let conn = &mut self.conns[idx];
        let request = self.plan.targets[conn.target].request(self.plan.keep_alive);
        let Some(stream) = conn.stream.as_ref() else {
            return;
        };
        if conn.written == 0 {
            (conn.sent_at, conn.sent_realtime_ns) = self.clock.now();
        }
        let fd = stream.as_raw_fd();
        loop {
            match send(fd, &request[conn.written..]) {
                Ok(n) => {
                    conn.written += n;
                    if conn.written == request.len() {
                        conn.phase = Phase::Reading;
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    conn.phase = Phase::Writing;
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let failure = classify(&e);
                    return self.fail(idx, failure, Instant::now());
                }
            }
        }
    }

    /// Reads what the socket holds. `read_closed`: the event said the
    /// server has closed its side, so a short read does not mean the
    /// socket is drained: the close is still to be read (a response that
    /// ends at the close ends there, and no further event would come).
    fn read_response(&mut self, idx: usize, now: Instant, read_closed: bool) {
        let conn = &mut self.conns[idx];
        let Some(stream) = conn.stream.as_ref() else {
            return;
        };
        let fd = stream.as_raw_fd();
        loop {
            // Body bytes nobody looks at are dropped in the kernel, not
            // copied out: at 10 MiB per response the copy would make the
            // generator, not the server, the bottleneck.
            let skippable = conn.parser.skippable();
            let want = if skippable > 0 {
                skippable.min(self.scratch.len() as u64) as usize
            } else {
                self.scratch.len()
            };
            let read = arrival::receive(fd, &mut self.scratch[..want], skippable > 0);
            let (n, stamp) = match read {
                Ok((0, _)) => {
                    // The end of a response delimited by the close: the FIN
                    // carries no stamp, so the generator's clock ends it.
                    return if conn.parser.finish_on_close() {
                        self.complete(idx, now, None, true)
                    } else {
                        self.fail(idx, Failure::Reset, now)
                    };
                }
                Ok(read) => read,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return self.fail(idx, classify(&e), now),
            };
            self.tally.bytes += n as u64;
            if skippable > 0 {
                if conn.parser.skipped(n as u64) {
                    return self.complete(idx, now, stamp, read_closed);
                }
                if n < want && !read_closed {
                    return;
                }
                continue;
            }
            match conn.parser.feed(&self.scratch[..n]) {
                // Bytes after the end of the response were not asked for.
                Ok(Some(used)) if used != n => return self.fail(idx, Failure::Protocol, now),
                // A server that closed after a complete response takes no
                // further request on this connection.
                Ok(Some(_)) => return self.complete(idx, now, stamp, read_closed),
                Ok(None) if n < self.scratch.len() && !read_closed => return,
                Ok(None) => {}
                Err(_) => return self.fail(idx, Failure::Protocol, now),
            }
        }
    }

    /// A response is complete; `arrived` is the kernel's receive timestamp
    /// of its last packet, when there is one.
    fn complete(&mut self, idx: usize, now: Instant, arrived: Option<i64>, closed: bool) {
        let conn = &mut self.conns[idx];
        let from_sent = match arrived {
            Some(at) => at.saturating_sub(conn.sent_realtime_ns).max(1) as u64,
            None => now.saturating_duration_since(conn.sent_at).as_nanos() as u64,
        };
        self.latency_ewma_ns = ewma(self.latency_ewma_ns, from_sent);
        self.nap.saw_response(arrived.is_some());
        match self.plan.pacing {
            Pacing::Open { .. } => {
                let waited = conn
                    .sent_at
                    .saturating_duration_since(conn.due_at)
                    .as_nanos() as u64;
                let from_due = from_sent + waited;
                self.tally
                    .record_response(conn.parser.status(), from_due, Some(from_sent));
            }
            Pacing::Closed { .. } => {
                self.tally
                    .record_response(conn.parser.status(), from_sent, None)
            }
        }
        if closed || !self.plan.keep_alive || conn.parser.close_after() {
            conn.stream = None;
        }
        self.next(idx, now, true);
    }

    fn fail(&mut self, idx: usize, failure: Failure, now: Instant) {
        let errors = &mut self.tally.errors;
        match failure {
            Failure::Refused => errors.refused += 1,
            Failure::Reset => errors.reset += 1,
            Failure::Timeout => errors.timeout += 1,
            Failure::Protocol => errors.protocol += 1,
            Failure::Other => errors.other += 1,
        }
        let conn = &mut self.conns[idx];
        conn.stream = None;
        conn.parser.reset();
        if matches!(failure, Failure::Refused | Failure::Other) {
            conn.phase = Phase::Waiting;
            self.wait(idx, now + CONNECT_BACKOFF);
        } else {
            self.next(idx, now, false);
        }
    }

    /// A uniform number in [0, 1) (xorshift64*; think times need no more).
    fn random_unit(&mut self) -> f64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let bits = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        bits as f64 / (1u64 << 53) as f64
    }
}

/// Writes `bytes` to the connected socket `fd`, as `write` on a
/// `TcpStream` does (`send` with `MSG_NOSIGNAL`: a closed connection is an
/// error, not a signal), but through `syscall(2)`: the C library's `send`
/// is a cancellation point, two atomic operations around every call in a
/// program with threads, and the generator never cancels a thread.
fn send(fd: RawFd, bytes: &[u8]) -> io::Result<usize> {
    // SAFETY: sendto(fd, buf, len, flags, NULL, 0) only reads `bytes`,
    // which lives through the call.
    let n = unsafe {
        libc::syscall(
            libc::SYS_sendto,
            fd as libc::c_long,
            bytes.as_ptr(),
            bytes.len(),
            libc::MSG_NOSIGNAL as libc::c_long,
            std::ptr::null::<libc::sockaddr>(),
            0usize,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// How often the deadlines of requests in flight are looked at, with a
/// request timeout: a request times out at most this long after its
/// deadline (1/16 of the timeout, at least 1 ms, at most the idle poll
/// interval).
fn sweep_interval(timeout: Option<Duration>) -> Option<Duration> {
    timeout.map(|timeout| (timeout / 16).clamp(Duration::from_millis(1), POLL_INTERVAL))
}

/// A moving mean that weighs the newest sample 1/16.
fn ewma(mean: u64, sample: u64) -> u64 {
    if mean == 0 {
        return sample;
    }
    (mean * 15 + sample) / 16
}

fn classify(e: &io::Error) -> Failure {
    use io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => Failure::Refused,
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
            Failure::Reset
        }
        K::TimedOut => Failure::Timeout,
        _ => Failure::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_looked_at_often_enough_to_be_late_by_a_sixteenth_at_most() {
        let ms = Duration::from_millis;
        assert_eq!(sweep_interval(None), None);
        // wrk's default of 2 s: looked at every 50 ms (the idle poll).
        assert_eq!(sweep_interval(Some(ms(2000))), Some(POLL_INTERVAL));
        assert_eq!(sweep_interval(Some(ms(320))), Some(ms(20)));
        // Very short timeouts are still swept at most every millisecond.
        assert_eq!(sweep_interval(Some(ms(5))), Some(ms(1)));
    }

    #[test]
    fn the_moving_mean_starts_at_the_first_sample_and_follows_slowly() {
        assert_eq!(ewma(0, 1_000), 1_000);
        assert_eq!(ewma(1_000, 17_000), 2_000);
        let mut mean = 1_000;
        for _ in 0..200 {
            mean = ewma(mean, 5_000);
        }
        // Integer division leaves it within 16 ns of the sample.
        assert!((4_984..=5_000).contains(&mean), "{mean}");
    }
}
