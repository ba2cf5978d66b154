//! The steps every command that runs cases on this host shares (`run`,
//! `ab`, `calibrate`): the request prepared, the store opened and readied,
//! one run executed with progress on the terminal, and the exit status
//! its end gives.

use std::io::IsTerminal;

use super::format_args::FormatSet;
use super::output::{ExitStatus, UsageError, open_store};
use super::run_args::{RunArgs, usage};
use super::run_progress::RunProgress;
use crate::engine;
use crate::results::RunStatus;
use crate::store::StoreLocation;
use crate::suite;
use crate::suite::run_request::{Prepared, RunRequest};

/// The request the arguments make for runs into `store`, pinned and
/// planned ([`RunRequest::prepare`]), and `--pivot` checked against the
/// plan; every mistake here is a usage error.
pub(super) fn prepare<F: FormatSet>(
    args: &RunArgs<F>,
    store: Option<StoreLocation>,
) -> anyhow::Result<(RunRequest, Prepared)> {
    let request = args.request(store)?;
    let prepared = request.prepare().map_err(usage)?;
    if let Some(choice) = &args.pivot {
        choice.check_for(&prepared.plan).map_err(UsageError)?;
    }
    Ok((request, prepared))
}

/// One run of `prepared`, every round in a fresh process, progress bars
/// on a terminal; the run as stored.
pub(super) fn run_once(
    request: &RunRequest,
    prepared: &Prepared,
    store: &mut crate::store::Store,
    cancel: &engine::CancelToken,
) -> anyhow::Result<crate::results::RunRecord> {
    let progress = RunProgress::new(
        prepared.plan.cases.len() * prepared.methodology.min_rounds as usize,
        std::io::stderr().is_terminal(),
    );
    let executor = suite::subprocess::Subprocess::current()?;
    let options = request.run_options(prepared);
    suite::execute(&prepared.plan, options, store, &executor, cancel, &progress).map_err(|err| {
        // A case that cannot run is the command line's mistake (or asks
        // for more than this host has): exit status 2, like a bad value.
        match err.downcast_ref::<suite::CaseCannotRun>() {
            Some(cannot) => UsageError(cannot.to_string()).into(),
            None => err,
        }
    })
}

/// The exit status a run ended with, saying so on stderr when interrupted.
pub(super) fn exit_status(run: &crate::results::RunRecord) -> ExitStatus {
    match run.status {
        RunStatus::Complete => ExitStatus::Success,
        RunStatus::Partial => {
            crate::say!("interrupted: the finished cases are stored; the run is marked partial");
            ExitStatus::Interrupted
        }
        RunStatus::Failed | RunStatus::Running | RunStatus::Abandoned => ExitStatus::Failure,
    }
}

/// Opens the request's store for runs of its plan and readies it
/// ([`suite::run_request::ready_store`]: checked, abandoned runs marked,
/// leftovers removed, the interrupt handler installed), saying what was
/// found; returns the store and the token Ctrl-C cancels.
pub(super) fn open_for_runs(
    request: &RunRequest,
    prepared: &Prepared,
) -> anyhow::Result<(crate::store::Store, engine::CancelToken)> {
    let mut store = open_store(request.store.clone())?;
    let (cancel, said) = suite::run_request::ready_store(&mut store, &prepared.plan)?;
    for line in said {
        crate::say!("{line}");
    }
    Ok((store, cancel))
}
