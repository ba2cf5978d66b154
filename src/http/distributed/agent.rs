//! The agent: one client host's side of a load from several hosts
//! (`sledge __http-agent`, started by the coordinator over ssh or as a
//! child process). It reads the protocol on its input and answers on its
//! output; the generator it runs is the same as `sledge http`'s.
//!
//! Its input ending is a stop: when the coordinator or its ssh session
//! dies, the agent cuts its load short and exits instead of loading the
//! server on its own.

use std::io::{BufRead, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};

use super::protocol::{AgentLoad, AgentResult, FromAgent, PROTOCOL_VERSION, ToAgent, to_line};
use super::realtime::unix_now_ns;
use crate::engine::CancelToken;
use crate::http::{self, LoadConfig};
use crate::sys::affinity;

/// Descriptors kept free beyond one per connection.
const SPARE_FDS: u64 = 64;

/// The agent's output, shared by the thread that answers pings and the
/// one that sends the result.
type Output = Arc<Mutex<Box<dyn Write + Send>>>;

/// Serves one load: the hello on `input`, then pings, the start, and the
/// result on `output`. An error is also sent to the coordinator before it
/// is returned.
pub fn serve(
    input: impl BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) -> anyhow::Result<()> {
    let output: Output = Arc::new(Mutex::new(Box::new(output)));
    let outcome = serve_on(input, &output);
    if let Err(e) = &outcome {
        // The coordinator may be gone already; the error is returned anyway.
        let _ = send(
            &output,
            &FromAgent::Error {
                message: format!("{e:#}"),
            },
        );
    }
    outcome
}

fn serve_on(mut input: impl BufRead + Send + 'static, output: &Output) -> anyhow::Result<()> {
    let load = match read_message(&mut input)? {
        Some(ToAgent::Hello { protocol, load }) => {
            if protocol != PROTOCOL_VERSION {
                bail!(
                    "the coordinator speaks protocol {protocol} and this agent (sledge {}) speaks {PROTOCOL_VERSION}: use the same sledge version on every host",
                    env!("CARGO_PKG_VERSION")
                );
            }
            load
        }
        Some(other) => bail!("expected a hello from the coordinator, got {other:?}"),
        None => bail!("the coordinator closed the connection before its hello"),
    };
    let config = prepare(&load)?;
    send(
        output,
        &FromAgent::Ready {
            protocol: PROTOCOL_VERSION,
            version: env!("CARGO_PKG_VERSION").to_string(),
            threads: config.threads,
        },
    )?;
    let cancel = CancelToken::new();
    let (start_tx, start_rx) = mpsc::channel();
    let reader = {
        let (output, cancel) = (output.clone(), cancel.clone());
        std::thread::Builder::new()
            .name("sledge-agent-input".into())
            .spawn(move || answer(input, &output, &start_tx, &cancel))
            .context("cannot start the agent's input thread")?
    };
    // The reader ends by itself when the input does; it is not joined, as
    // the coordinator may keep the input open after the result.
    drop(reader);
    let Ok((at_unix_ns, offset_ns)) = start_rx.recv() else {
        // Stopped (or the input ended) before the start: nothing ran.
        return Ok(());
    };
    let target_ns = at_unix_ns.saturating_add(offset_ns);
    let wait = Duration::from_nanos(target_ns.saturating_sub(unix_now_ns()).max(0) as u64);
    // Late already if the start came after the agreed instant had passed
    // here (a wrong offset, a slow link), and by the threads' wake-up.
    let already_late_ns = unix_now_ns().saturating_sub(target_ns).max(0);
    let (report, interrupted, late) =
        http::load::run_starting_at(&config, Instant::now() + wait, &cancel)?;
    let started_late_s = already_late_ns as f64 / 1e9 + late.as_secs_f64();
    let result = AgentResult::of(
        &report.tally,
        report.seconds,
        started_late_s,
        report.threads,
        interrupted,
    )?;
    send(output, &FromAgent::Result(Box::new(result)))
}

/// Checks the share and the server before saying ready, so that a bad URL
/// or a server out of this host's reach fails before anyone starts.
fn prepare(load: &AgentLoad) -> anyhow::Result<LoadConfig> {
    let cpus = affinity::allowed_cpus()?.len();
    let config = load.to_config(cpus)?;
    config.validate()?;
    crate::sys::fd_limit::ensure_open_files(config.connections as u64 + SPARE_FDS)?;
    http::load::probe(&config.targets[0])?;
    Ok(config)
}

/// After the hello: answers pings, passes the start on, and cancels the
/// load on a stop or at the end of the input.
fn answer(
    mut input: impl BufRead,
    output: &Output,
    start: &mpsc::Sender<(i64, i64)>,
    cancel: &CancelToken,
) {
    loop {
        match read_message(&mut input) {
            Ok(Some(ToAgent::Ping { seq })) => {
                let pong = FromAgent::Pong {
                    seq,
                    agent_unix_ns: unix_now_ns(),
                };
                if send(output, &pong).is_err() {
                    break;
                }
            }
            Ok(Some(ToAgent::Start {
                at_unix_ns,
                offset_ns,
            })) => {
                let _ = start.send((at_unix_ns, offset_ns));
            }
            Ok(Some(ToAgent::Stop)) | Ok(None) | Err(_) => break,
            Ok(Some(ToAgent::Hello { .. })) => {}
        }
    }
    cancel.cancel();
    // A start that never came: the waiting side sees the channel close.
}

fn read_message(input: &mut impl BufRead) -> anyhow::Result<Option<ToAgent>> {
    let mut line = String::new();
    if input
        .read_line(&mut line)
        .context("reading the coordinator")?
        == 0
    {
        return Ok(None);
    }
    serde_json::from_str(line.trim_end())
        .map(Some)
        .with_context(|| format!("not a message of the coordinator: {}", line.trim_end()))
}

fn send(output: &Output, message: &FromAgent) -> anyhow::Result<()> {
    let mut out = output.lock().unwrap_or_else(|p| p.into_inner());
    out.write_all(to_line(message).as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| anyhow!("cannot answer the coordinator: {e}"))
}
