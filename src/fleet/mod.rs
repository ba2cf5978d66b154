//! `sledge fleet run`: one selection run on many hosts over SSH, every
//! host's run brought back into this machine's store.
//!
//! Nothing here is a protocol of sledge's own: each host is reached with
//! the system's OpenSSH client ([`crate::remote`]), runs this very sledge
//! binary (copied there when it has no copy of the same bytes) with the
//! same arguments and a store of its own in a scratch directory, and hands
//! its run back with `sledge export`; this side imports it, so a fleet's
//! runs are ordinary runs with their hosts' inventories, for `list`,
//! `compare` and `report`.
//!
//! Hosts run in parallel (each on its own thread) or one after another
//! ([`Order::Serial`], for hosts that share a switch or a storage array).
//! A host that fails (unreachable, another architecture, short of space,
//! dead midway) is reported with its reason and the others go on; a stop
//! request interrupts every remote run as Ctrl-C would, keeps what they
//! stored, and cleans every host up.

mod finished;
mod host_run;
pub mod interrupt;
mod request;

use std::sync::mpsc;
use std::time::Instant;

pub use finished::{FleetOutcome, FleetRun};
pub use host_run::FLEET_HOST_NOTE;
pub use request::{FleetRequest, execute};

use crate::engine::CancelToken;
use crate::remote::{OutputLine, SshHost, SshOptions, ThisBinary};
use crate::results::RunStatus;
use crate::store::{Imported, Store};

/// Environment variables passed on to the remote sledge: sledge's own test
/// hooks (which enable hidden workloads and script their values), so that
/// a fleet run of them behaves there as here. Nothing else of this
/// side's environment is sent.
const FORWARDED_ENV_PREFIXES: &[&str] = &["SLEDGE_TEST_", "SLEDGE_SCRIPTED_"];

/// How the fleet reaches its hosts and what it runs there.
#[derive(Debug, Clone)]
pub struct FleetSettings {
    /// ssh's identity, known_hosts file and connect timeout.
    pub ssh: SshOptions,
    /// The directory on each host for sledge's copies and scratch
    /// directories; a relative path is taken from the login directory.
    pub remote_dir: String,
    /// The arguments of `sledge run` on every host (targets, parameters,
    /// options), checked on this side first.
    pub run_args: Vec<String>,
    /// This binary, then the builds given for other architectures
    /// (`--binary-for`): each host runs the first one built for it.
    pub binaries: Vec<ThisBinary>,
    /// The environment variables sent along (see [`forwarded_env`]).
    pub env: Vec<(String, String)>,
}

/// This process's environment variables that a remote sledge gets too.
pub fn forwarded_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(name, _)| FORWARDED_ENV_PREFIXES.iter().any(|p| name.starts_with(p)))
        .collect();
    env.sort();
    env
}

/// Whether hosts run at once or one after another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Parallel,
    Serial,
}

/// What happened on one host, as the fleet reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum HostResult {
    /// Its run is in the store: under `id` (already there when
    /// `already_stored`), ended with `status` on the host.
    Landed {
        id: i64,
        uuid: String,
        status: RunStatus,
        already_stored: bool,
    },
    /// No run came back; the reason names what failed.
    Failed(String),
}

/// One host's part of the fleet run.
#[derive(Debug, Clone)]
pub struct HostReport {
    pub host: SshHost,
    pub result: HostResult,
    /// Whether the host's part ended because of a stop request.
    pub interrupted: bool,
    /// Wall time of the host's part, connecting and copying included.
    pub seconds: f64,
    /// A scratch directory that could not be removed from the host.
    pub left_behind: Option<String>,
}

impl HostReport {
    /// Whether the host's run landed and completed.
    pub fn complete(&self) -> bool {
        matches!(
            self.result,
            HostResult::Landed {
                status: RunStatus::Complete,
                ..
            }
        )
    }
}

/// What the caller is told while the fleet runs.
pub enum Progress<'a> {
    /// A step on a host (connected, copying, running).
    Note { host: &'a SshHost, text: &'a str },
    /// A line the remote sledge printed.
    Output {
        host: &'a SshHost,
        line: &'a OutputLine,
    },
    /// A host's part ended (its run already imported when it landed).
    Done { report: &'a HostReport },
}

/// What a host's worker sends to the coordinating thread.
enum Event {
    Note {
        host: usize,
        text: String,
    },
    Output {
        host: usize,
        line: OutputLine,
    },
    Done {
        host: usize,
        done: host_run::HostDone,
        seconds: f64,
    },
}

/// Runs the fleet: every host's part on worker threads, the imports into
/// `store` on this thread as each host's run comes back (so that a later
/// failure or interrupt keeps it). `cancel` asks every remote run to stop
/// as Ctrl-C would; `hurry` (a second Ctrl-C) kills them instead of
/// waiting for their cleanup. Returns one report per host, in the order
/// given.
pub fn run(
    hosts: &[SshHost],
    settings: &FleetSettings,
    order: Order,
    store: &mut Store,
    cancel: &CancelToken,
    hurry: &CancelToken,
    progress: &mut dyn FnMut(Progress),
) -> Vec<HostReport> {
    let (sender, events) = mpsc::channel::<Event>();
    let mut reports: Vec<Option<HostReport>> = vec![None; hosts.len()];
    std::thread::scope(|scope| {
        let work = |index: usize, sender: mpsc::Sender<Event>| {
            let started = Instant::now();
            let job = host_run::HostJob {
                index,
                host: &hosts[index],
                settings,
                cancel,
                hurry,
                events: sender.clone(),
            };
            let done = host_run::run(&job);
            let _ = sender.send(Event::Done {
                host: index,
                done,
                seconds: started.elapsed().as_secs_f64(),
            });
        };
        match order {
            Order::Parallel => {
                for index in 0..hosts.len() {
                    let sender = sender.clone();
                    scope.spawn(move || work(index, sender));
                }
            }
            Order::Serial => {
                let sender = sender.clone();
                scope.spawn(move || {
                    for index in 0..hosts.len() {
                        work(index, sender.clone());
                    }
                });
            }
        }
        drop(sender);
        for event in events {
            match event {
                Event::Note { host, text } => progress(Progress::Note {
                    host: &hosts[host],
                    text: &text,
                }),
                Event::Output { host, line } => progress(Progress::Output {
                    host: &hosts[host],
                    line: &line,
                }),
                Event::Done {
                    host,
                    done,
                    seconds,
                } => {
                    let report = land(&hosts[host], done, seconds, store);
                    progress(Progress::Done { report: &report });
                    reports[host] = Some(report);
                }
            }
        }
    });
    reports
        .into_iter()
        .map(|r| r.expect("every host reports"))
        .collect()
}

/// Imports a host's export document into the store.
fn land(host: &SshHost, done: host_run::HostDone, seconds: f64, store: &mut Store) -> HostReport {
    let result = match done.result {
        Err(reason) => HostResult::Failed(reason),
        Ok(document) => match import(host, &document, store) {
            Ok(result) => result,
            Err(err) => HostResult::Failed(format!("its run could not be imported: {err:#}")),
        },
    };
    HostReport {
        host: host.clone(),
        result,
        interrupted: done.interrupted,
        seconds,
        left_behind: done.left_behind,
    }
}

fn import(host: &SshHost, document: &[u8], store: &mut Store) -> anyhow::Result<HostResult> {
    let runs = crate::report::portable::parse(document, &format!("the run exported by {host}"))?;
    let [run] = &runs[..] else {
        anyhow::bail!("{host} exported {} runs, expected one", runs.len());
    };
    let outcome = store.land_fleet_runs(std::slice::from_ref(run))?;
    Ok(match outcome.into_iter().next() {
        Some(Imported::Added { id, uuid }) => HostResult::Landed {
            id,
            uuid,
            status: run.status,
            already_stored: false,
        },
        Some(Imported::AlreadyStored { id, uuid }) => HostResult::Landed {
            id,
            uuid,
            status: run.status,
            already_stored: true,
        },
        None => anyhow::bail!("the store imported nothing"),
    })
}
