//! Running the fleet: every host's part on a worker thread, each run
//! imported on the coordinating thread as it comes back.

use std::sync::mpsc;
use std::time::Instant;

use super::host_report::{HostReport, HostResult};
use super::host_run::{self, Event, HostJob};
use super::order::Order;
use super::progress::Progress;
use super::settings::FleetSettings;
use crate::engine::CancelToken;
use crate::remote::SshHost;
use crate::store::{Imported, Store};

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
            let job = HostJob {
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
