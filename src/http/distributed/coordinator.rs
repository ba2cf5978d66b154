//! The coordinator: starts an agent on every client host, checks that
//! all are ready, measures their clocks, starts them at one instant and
//! collects and merges what they measured.
//!
//! Every wait is bounded, and every agent is stopped and reaped whatever
//! happens: the agents are owned by a guard whose drop closes their input
//! (an agent stops at the end of its input, also over ssh) and kills what
//! has not exited shortly after.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::clock_offset::{self, ClockOffset, Exchange};
use super::merge::{self, DistributedReport, HostLoad};
use super::protocol::{AgentLoad, AgentResult, FromAgent, PROTOCOL_VERSION, ToAgent, to_line};
use super::realtime::unix_now_ns;
use super::share;
use super::transport::Transport;
use crate::engine::CancelToken;
use crate::http::LoadReport;

/// How long an agent may take to start and say ready (an ssh login and a
/// connect to the server included).
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Ping-pongs per host; the one with the shortest round trip counts.
const CLOCK_EXCHANGES: u32 = 8;
/// How long one pong may take.
const PONG_TIMEOUT: Duration = Duration::from_secs(10);
/// How far ahead of now the agreed start is, beyond the longest round
/// trip: enough for the start message to reach every host.
const START_LEAD: Duration = Duration::from_millis(300);
/// How long past its planned end a load may take to report (the last
/// requests' timeout comes on top).
const RESULT_GRACE: Duration = Duration::from_secs(15);
/// After a stop, how long agents get to send what they measured.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How long a finished agent may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);
/// How often waits look at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(100);
/// How long an agent whose output ended may take to exit, so that its
/// exit status can explain the end.
const ENDED_GRACE: Duration = Duration::from_millis(500);
/// Lines of an agent's stderr kept to explain its failure.
const STDERR_TAIL: usize = 5;

/// Runs `load` (rate and requests for all hosts together, connections
/// per host) from every host in `hosts`, reached through `transport`.
///
/// A host that fails before the start fails the whole load (an error
/// naming it), and nothing is sent to the server. A host that fails
/// during the load is reported by name in its [`HostLoad`]; the others'
/// results are kept and merged.
pub fn run(
    transport: &dyn Transport,
    hosts: &[String],
    load: &AgentLoad,
    cancel: &CancelToken,
) -> anyhow::Result<DistributedReport> {
    let shares = share::split(load, hosts.len())?;
    let mut agents = Agents::start(transport, hosts)?;
    for (i, share) in shares.iter().enumerate() {
        let hello = ToAgent::Hello {
            protocol: PROTOCOL_VERSION,
            load: share.clone(),
        };
        // A failed write shows as the agent's end in the wait below.
        let _ = agents.send(i, &hello);
    }
    let ready_by = Instant::now() + READY_TIMEOUT;
    let mut not_ready = Vec::new();
    let mut threads = vec![0; hosts.len()];
    for (i, threads) in threads.iter_mut().enumerate() {
        match agents.receive(i, ready_by, cancel)? {
            Ok(FromAgent::Ready {
                protocol: PROTOCOL_VERSION,
                threads: t,
                ..
            }) => *threads = t,
            Ok(FromAgent::Ready {
                protocol, version, ..
            }) => not_ready.push(format!(
                "{}: its sledge {version} speaks protocol {protocol}, this one {PROTOCOL_VERSION}",
                hosts[i]
            )),
            Ok(other) => not_ready.push(format!("{}: {}", hosts[i], unexpected(&other))),
            Err(why) => not_ready.push(format!("{}: {why}", hosts[i])),
        }
    }
    if !not_ready.is_empty() {
        bail!(
            "{} of {} client host(s) could not start; nothing was sent to the server:\n  {}",
            not_ready.len(),
            hosts.len(),
            not_ready.join("\n  ")
        );
    }
    let mut clocks = Vec::with_capacity(hosts.len());
    for (i, host) in hosts.iter().enumerate() {
        match measure_clock(&mut agents, i, cancel)? {
            Ok(offset) => clocks.push(offset),
            Err(why) => {
                bail!("{host}: measuring its clock failed: {why}; nothing was sent to the server")
            }
        }
    }
    let longest_trip = clocks.iter().map(|c| c.round_trip_ns).max().unwrap_or(0);
    let lead = START_LEAD + Duration::from_nanos(longest_trip.max(0) as u64);
    let at_unix_ns = unix_now_ns() + lead.as_nanos() as i64;
    for (i, clock) in clocks.iter().enumerate() {
        let start = ToAgent::Start {
            at_unix_ns,
            offset_ns: clock.offset_ns,
        };
        let _ = agents.send(i, &start);
    }
    let planned = lead
        + Duration::from_secs_f64(load.duration_s)
        + Duration::from_secs_f64(load.timeout_s.unwrap_or(0.0))
        + RESULT_GRACE;
    let (results, interrupted) = collect(&mut agents, Instant::now() + planned, cancel);
    agents.finish();

    let mut parts = Vec::with_capacity(hosts.len());
    for (i, ((host, result), clock)) in hosts.iter().zip(results).zip(clocks).enumerate() {
        let outcome = result.and_then(|r| {
            host_report(&shares[i], threads[i], &r)
                .map(|report| (report, r.started_late_s))
                .map_err(|e| format!("its result cannot be read: {e:#}"))
        });
        parts.push(match outcome {
            Ok((report, late)) => HostLoad {
                host: host.clone(),
                clock: Some(clock),
                started_late_s: Some(late),
                report: Some(report),
                failure: None,
            },
            Err(why) => HostLoad {
                host: host.clone(),
                clock: Some(clock),
                started_late_s: None,
                report: None,
                failure: Some(why),
            },
        });
    }
    let finished: Vec<&LoadReport> = parts.iter().filter_map(|p| p.report.as_ref()).collect();
    let merged = merge::merge(&finished);
    let failed_hosts = parts.iter().filter(|p| p.failure.is_some()).count();
    Ok(DistributedReport {
        hosts: parts,
        merged,
        failed_hosts,
        interrupted,
    })
}

/// A host's report from its result, shaped by its share.
fn host_report(share: &AgentLoad, threads: usize, r: &AgentResult) -> anyhow::Result<LoadReport> {
    let config = share.to_config(threads)?;
    Ok(LoadReport::from_tally(&config, r.tally()?, r.seconds))
}

/// Ping-pongs with agent `i`; the offset from the shortest round trip.
/// The outer error is a cancel, the inner one why the host failed.
fn measure_clock(
    agents: &mut Agents<'_>,
    i: usize,
    cancel: &CancelToken,
) -> anyhow::Result<Result<ClockOffset, String>> {
    let mut exchanges = Vec::with_capacity(CLOCK_EXCHANGES as usize);
    for seq in 0..CLOCK_EXCHANGES {
        let sent_ns = unix_now_ns();
        if let Err(e) = agents.send(i, &ToAgent::Ping { seq }) {
            return Ok(Err(e));
        }
        match agents.receive(i, Instant::now() + PONG_TIMEOUT, cancel)? {
            Ok(FromAgent::Pong {
                seq: s,
                agent_unix_ns,
            }) if s == seq => exchanges.push(Exchange {
                sent_ns,
                agent_ns: agent_unix_ns,
                received_ns: unix_now_ns(),
            }),
            Ok(other) => return Ok(Err(unexpected(&other))),
            Err(why) => return Ok(Err(why)),
        }
    }
    Ok(clock_offset::estimate(&exchanges)
        .ok_or_else(|| "the coordinator's clock stepped back during every exchange".to_string()))
}

/// Waits for every agent's result until `deadline`; on a cancel, stops
/// them and waits [`STOP_GRACE`] more for what they measured.
fn collect(
    agents: &mut Agents<'_>,
    deadline: Instant,
    cancel: &CancelToken,
) -> (Vec<Result<AgentResult, String>>, bool) {
    let n = agents.len();
    let mut results: Vec<Option<Result<AgentResult, String>>> = (0..n).map(|_| None).collect();
    let mut deadline = deadline;
    let mut stopped = false;
    while results.iter().any(Option::is_none) {
        if cancel.is_cancelled() && !stopped {
            stopped = true;
            for i in 0..n {
                let _ = agents.send(i, &ToAgent::Stop);
            }
            deadline = deadline.min(Instant::now() + STOP_GRACE);
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let Some((i, event)) = agents.next_event((deadline - now).min(CANCEL_POLL)) else {
            continue;
        };
        if results[i].is_some() {
            continue;
        }
        results[i] = match event {
            Event::Message(FromAgent::Result(r)) => Some(Ok(*r)),
            Event::Message(FromAgent::Pong { .. }) => None,
            Event::Message(other) => Some(Err(unexpected(&other))),
            Event::Garbage(line) => Some(Err(format!("the agent said something else: {line}"))),
            Event::Closed => Some(Err(agents.ended(i))),
        };
    }
    let waited = if stopped {
        "after the stop"
    } else {
        "by the load's planned end"
    };
    let results = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(format!("no result {waited}"))))
        .collect();
    (results, stopped)
}

fn unexpected(message: &FromAgent) -> String {
    match message {
        FromAgent::Error { message } => message.clone(),
        other => format!("unexpected message from its agent: {other:?}"),
    }
}

/// What an agent's reader thread passes on.
enum Event {
    Message(FromAgent),
    /// A line that is not a message (a shell's or ssh's complaint).
    Garbage(String),
    /// Its stdout ended.
    Closed,
}

struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// Events of this agent read while waiting for another's.
    pending: VecDeque<Event>,
}

/// The running agents; dropping them stops and reaps every one.
struct Agents<'t> {
    transport: &'t dyn Transport,
    agents: Vec<Agent>,
    events: Receiver<(usize, Event)>,
}

impl<'t> Agents<'t> {
    fn start(transport: &'t dyn Transport, hosts: &[String]) -> anyhow::Result<Agents<'t>> {
        let (tx, events) = mpsc::channel();
        let mut started = Agents {
            transport,
            agents: Vec::with_capacity(hosts.len()),
            events,
        };
        for (i, host) in hosts.iter().enumerate() {
            // On an error, `started` drops and stops the agents so far.
            let agent = spawn(transport, host, i, &tx)?;
            started.agents.push(agent);
        }
        Ok(started)
    }

    fn len(&self) -> usize {
        self.agents.len()
    }

    fn send(&mut self, i: usize, message: &ToAgent) -> Result<(), String> {
        let agent = &mut self.agents[i];
        let Some(stdin) = agent.stdin.as_mut() else {
            return Err("its agent's input is closed".into());
        };
        stdin
            .write_all(to_line(message).as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("cannot write to its agent: {e}"))
    }

    /// The next event of any agent within `wait`.
    fn next_event(&mut self, wait: Duration) -> Option<(usize, Event)> {
        if let Some(i) = self.agents.iter().position(|a| !a.pending.is_empty()) {
            return self.agents[i].pending.pop_front().map(|e| (i, e));
        }
        match self.events.recv_timeout(wait) {
            Ok((i, event)) => Some((i, event)),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The next message of agent `i` by `deadline`. The outer error is a
    /// cancel (the whole load stops); the inner one why this host failed.
    fn receive(
        &mut self,
        i: usize,
        deadline: Instant,
        cancel: &CancelToken,
    ) -> anyhow::Result<Result<FromAgent, String>> {
        loop {
            if let Some(event) = self.agents[i].pending.pop_front() {
                return Ok(self.explain(i, event));
            }
            if cancel.is_cancelled() {
                return Err(crate::engine::Cancelled.into());
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(Err("no answer in time from its agent".into()));
            }
            match self.events.recv_timeout((deadline - now).min(CANCEL_POLL)) {
                Ok((j, event)) => {
                    if j == i {
                        return Ok(self.explain(i, event));
                    }
                    self.agents[j].pending.push_back(event);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Ok(Err("its agent ended".into()));
                }
            }
        }
    }

    fn explain(&mut self, i: usize, event: Event) -> Result<FromAgent, String> {
        match event {
            Event::Message(FromAgent::Error { message }) => Err(message),
            Event::Message(m) => Ok(m),
            Event::Garbage(line) => Err(format!("its agent said something else: {line}")),
            Event::Closed => Err(self.ended(i)),
        }
    }

    /// Why agent `i` ended: its exit status and the last lines it wrote
    /// to stderr (ssh's own complaints among them).
    fn ended(&mut self, i: usize) -> String {
        // Its stdout closed; give it a moment to exit and its stderr to be
        // read, so the status and the reason are there.
        let agent = &mut self.agents[i];
        let mut status = None;
        let until = Instant::now() + ENDED_GRACE;
        while Instant::now() < until {
            if let Ok(Some(s)) = agent.child.try_wait() {
                status = Some(s);
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // The stderr reader may still be at the last lines.
        std::thread::sleep(Duration::from_millis(50));
        let tail = agent
            .stderr_tail
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join(" / ");
        let how = match status {
            Some(s) => self.transport.describe_end(s),
            None => "its output ended while it still ran".into(),
        };
        if tail.is_empty() {
            format!("its agent ended without a result: {how}")
        } else {
            format!("its agent ended without a result: {how}; its last messages: {tail}")
        }
    }

    /// Closes every agent's input, waits briefly for them to exit, and
    /// kills and reaps the rest.
    fn finish(&mut self) {
        for agent in &mut self.agents {
            agent.stdin = None;
        }
        let until = Instant::now() + EXIT_GRACE;
        for agent in &mut self.agents {
            loop {
                match agent.child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() < until => {
                        std::thread::sleep(Duration::from_millis(20))
                    }
                    Ok(None) => {
                        let _ = agent.child.kill();
                        let _ = agent.child.wait();
                        break;
                    }
                }
            }
        }
    }
}

impl Drop for Agents<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

fn spawn(
    transport: &dyn Transport,
    host: &str,
    index: usize,
    events: &Sender<(usize, Event)>,
) -> anyhow::Result<Agent> {
    let mut command = transport.agent_command(host)?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .with_context(|| format!("{host}: cannot start its agent ({command:?})"))?;
    let stdin = child.stdin.take();
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let tx = events.clone();
    std::thread::Builder::new()
        .name("sledge-agent-out".into())
        .spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let event = match serde_json::from_str::<FromAgent>(&line) {
                    Ok(message) => Event::Message(message),
                    Err(_) => Event::Garbage(line),
                };
                if tx.send((index, event)).is_err() {
                    return;
                }
            }
            let _ = tx.send((index, Event::Closed));
        })
        .context("cannot start a reader thread")?;
    let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
    {
        let (tail, host) = (stderr_tail.clone(), host.to_string());
        std::thread::Builder::new()
            .name("sledge-agent-err".into())
            .spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    // Warnings of the agents reach the user, marked by
                    // host, escaped: they are another machine's text.
                    crate::say!("{host}: {}", crate::visible::escape(&line));
                    let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            })
            .context("cannot start a reader thread")?;
    }
    Ok(Agent {
        child,
        stdin,
        stderr_tail,
        pending: VecDeque::new(),
    })
}
