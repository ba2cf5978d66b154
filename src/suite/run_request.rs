//! A run request: what `run`, `calibrate`, `ab`, `plan` and `fleet run`
//! were asked to do (the selection, the repetition settings, the CPUs, the
//! notes, the store), built once from the command line and checked as it is built,
//! then turned into a plan and its methodology.
//!
//! Every mistake found here is the command line's: [`BadRequest`], which
//! the command line reports as a usage error.

use std::time::Duration;

use crate::engine::methodology::{SINGLE_ROUND_MAX_TRIALS, SINGLE_ROUND_MIN_TRIALS};
use crate::engine::{CancelToken, Methodology};
use crate::store::{Store, StoreLocation};

use super::execute::RunOptions;
use super::notes::check_notes;
use super::plan::{Plan, plan};

pub use super::bad_request::BadRequest;

/// The repetition settings given (`--rounds`, `--warmup`, ...); each is
/// checked against its own range as it is parsed, and against the others
/// by [`RunRequest::methodology`].
#[derive(Debug, Clone, Default)]
pub struct Repetition {
    /// `--rounds`: exactly this many rounds per case.
    pub rounds: Option<u32>,
    /// `--max-rounds`: at most this many.
    pub max_rounds: Option<u32>,
    /// `--warmup`: warm-up trials per round.
    pub warmup: Option<u32>,
    /// `--min-trials`: counted trials per round at least.
    pub min_trials: Option<u32>,
    /// `--max-trials`: counted trials per round at most.
    pub max_trials: Option<u32>,
    /// `--ci-target`: the precision a case is measured to.
    pub ci_target: Option<f64>,
    /// `--budget`: the time budget per case.
    pub budget: Option<Duration>,
}

/// What a run was asked to do, its notes already checked.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// Profiles, workloads or families (empty: the default profile).
    pub targets: Vec<String>,
    /// `--param` settings, as given.
    pub params: Vec<String>,
    /// `--cpus`: the first N CPUs this process may use.
    pub cpus: Option<usize>,
    /// The repetition settings given.
    pub repetition: Repetition,
    /// Whether to check for other busy processes first.
    pub idle_check: bool,
    /// The notes, trimmed and checked.
    notes: Vec<String>,
    /// The store the runs go to (`--store` or `SLEDGE_STORE`); `None`
    /// for the default location.
    pub store: Option<StoreLocation>,
}

/// A request turned into what runs: the plan, its methodology and the
/// CPUs this process is pinned to.
pub struct Prepared {
    /// The cases.
    pub plan: Plan,
    /// The profile's methodology with the repetition settings applied.
    pub methodology: Methodology,
    /// The CPUs the run uses.
    pub cpus: Vec<usize>,
}

impl RunRequest {
    /// The request, its notes checked (see [`check_notes`]).
    pub fn new(
        targets: Vec<String>,
        params: Vec<String>,
        cpus: Option<usize>,
        repetition: Repetition,
        idle_check: bool,
        notes: &[String],
        store: Option<StoreLocation>,
    ) -> Result<RunRequest, BadRequest> {
        Ok(RunRequest {
            targets,
            params,
            cpus,
            repetition,
            idle_check,
            notes: check_notes(notes).map_err(BadRequest)?,
            store,
        })
    }

    /// The notes, trimmed and checked.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Pins the process to the CPUs asked for and plans the run.
    pub fn prepare(&self) -> Result<Prepared, BadRequest> {
        let cpus = crate::sys::affinity::restrict_to(self.cpus)
            .map_err(|e| BadRequest(format!("{e:#}")))?;
        let (plan, methodology) = self.plan_on(cpus.len())?;
        Ok(Prepared {
            plan,
            methodology,
            cpus,
        })
    }

    /// Checks the request as [`RunRequest::prepare`] does, without pinning
    /// this process: for a run that happens elsewhere (`fleet run`), with
    /// this host's CPU count.
    pub fn check_elsewhere(&self) -> Result<(), BadRequest> {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        self.plan_on(cpus).map(drop)
    }

    /// The plan, methodology and CPU count of the run on this host,
    /// checked as [`RunRequest::prepare`] checks them but without pinning
    /// this process: what `sledge plan` shows.
    pub fn plan_only(&self) -> anyhow::Result<(Plan, Methodology, usize)> {
        let allowed = crate::sys::affinity::allowed_cpus()?.len();
        let cpus = match self.cpus {
            None => allowed,
            Some(n) if (1..=allowed).contains(&n) => n,
            Some(n) => {
                return Err(BadRequest(format!(
                    "--cpus {n} is not possible: this process may use {allowed} CPU(s); allowed is 1 to {allowed}"
                ))
                .into());
            }
        };
        let (plan, methodology) = self.plan_on(cpus)?;
        Ok((plan, methodology, cpus))
    }

    /// The plan on `cpus` CPUs and its methodology.
    fn plan_on(&self, cpus: usize) -> Result<(Plan, Methodology), BadRequest> {
        let plan =
            plan(&self.targets, &self.params, cpus).map_err(|e| BadRequest(e.to_string()))?;
        let methodology = self.methodology(plan.methodology.clone())?;
        Ok((plan, methodology))
    }

    /// The profile's methodology with the repetition settings applied.
    /// Settings that contradict each other are refused by name, and one
    /// given alone moves the bound it would cross (`--max-rounds 2` lowers
    /// the default minimum of 3 rounds).
    pub fn methodology(&self, base: Methodology) -> Result<Methodology, BadRequest> {
        let r = &self.repetition;
        let mut m = base;
        if let Some(v) = r.rounds {
            m.min_rounds = v;
            m.max_rounds = v;
            if v == 1 {
                m.min_trials = SINGLE_ROUND_MIN_TRIALS;
                m.max_trials = SINGLE_ROUND_MAX_TRIALS;
            }
        }
        if let Some(v) = r.max_rounds {
            if let Some(rounds) = r.rounds
                && v < rounds
            {
                return Err(BadRequest(format!(
                    "--max-rounds {v} is below --rounds {rounds}, which fixes the number of rounds; give one of them"
                )));
            }
            m.max_rounds = v;
            m.min_rounds = m.min_rounds.min(v);
        }
        if let Some(v) = r.warmup {
            m.warmup_trials = v;
        }
        if let (Some(min), Some(max)) = (r.min_trials, r.max_trials)
            && max < min
        {
            return Err(BadRequest(format!(
                "--max-trials {max} is below --min-trials {min}: give a maximum at least the minimum"
            )));
        }
        if let Some(v) = r.min_trials {
            m.min_trials = v;
            m.max_trials = m.max_trials.max(v);
        }
        if let Some(v) = r.max_trials {
            m.max_trials = v;
            m.min_trials = m.min_trials.min(v);
        }
        if let Some(v) = r.ci_target {
            m.ci_target = v;
        }
        if let Some(v) = r.budget {
            m.case_budget = v;
        }
        m.validate().map_err(|e| BadRequest(e.to_string()))?;
        Ok(m)
    }

    /// The options of one run of `prepared`: its CPUs and methodology, the
    /// idle check, the notes, and the command line it is stored with (its
    /// secrets redacted).
    pub fn run_options(&self, prepared: &Prepared) -> RunOptions {
        RunOptions {
            cpus: prepared.cpus.clone(),
            methodology: prepared.methodology.clone(),
            idle_check: self.idle_check,
            command_line: crate::secrets::redact_args(&std::env::args().collect::<Vec<_>>()),
            notes: self.notes.clone(),
        }
    }
}

/// Readies `store` for runs of `plan`: checks it for damage (a damaged
/// store would fail when the first case is stored, after that case had
/// run), marks runs whose sledge is gone abandoned, removes what killed
/// sledges left where `plan` writes, and installs the interrupt handler.
/// Returns the token Ctrl-C cancels and what to tell the user, line by
/// line.
pub fn ready_store(store: &mut Store, plan: &Plan) -> anyhow::Result<(CancelToken, Vec<String>)> {
    store.check_integrity()?;
    let mut said = Vec::new();
    for id in store.mark_abandoned_runs()? {
        said.push(format!(
            "note: run {id} was left `running` by a sledge that is gone (killed or rebooted); marked abandoned, its stored cases kept"
        ));
    }
    for removed in super::leftovers::sweep(&super::leftovers::plan_dirs(plan)) {
        said.push(format!(
            "note: removed {} left behind by a sledge that is gone (pid {})",
            removed.path.display(),
            removed.owner_pid
        ));
    }
    for left in super::ab::knob_journal::left_changed(&super::ab::knob_journal::journal_dir()) {
        said.push(format!("warning: {left}"));
    }
    let cancel = CancelToken::new();
    super::interrupt::install_for_run(&cancel, store.location().clone());
    Ok((cancel, said))
}
