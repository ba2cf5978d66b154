//! Executes `sledge ab`: probe the host, check it is idle, start the two
//! runs (one per side, linked as one pair by their notes), run every case
//! under both settings in interleaved rounds, store each side's case after
//! each of its rounds, put the knobs back and run the restore command
//! whatever happened, and mark how both runs ended.

use std::time::Duration;

use super::duet;
use super::knob::Knob;
use super::knob_journal::KnobGuard;
use super::setting::{SIDES, Setting, SideExecutor, describe_both, run_setup};
use crate::engine::{self, AbSetup, AbSide, CancelToken, Methodology, Progress, TrialContext};
use crate::results::{AB_NOTE, AB_SETTING_NOTE, RunRecord, RunStatus};
use crate::store::Store;
use crate::suite;
use crate::suite::execute::{new_run, now, probe_host, runnable_cases, shuffle_seed};
use crate::suite::plan::Plan;
use crate::suite::planning_history::StoreHistory;
use crate::suite::subprocess::Subprocess;

/// Choices about an A/B comparison that are not part of its plan.
pub struct AbOptions {
    /// The CPUs the comparison may use (already applied to the process).
    pub cpus: Vec<usize>,
    /// The repetition rule; its budgets count both sides' time.
    pub methodology: Methodology,
    /// Sample the host for other busy processes before starting.
    pub idle_check: bool,
    /// The command line, recorded with both runs.
    pub command_line: String,
    /// Free notes stored with both runs.
    pub notes: Vec<String>,
    /// A's setting, then B's.
    pub settings: [Setting; 2],
    /// The knobs, checked ([`Knob::check`]).
    pub knobs: Vec<Knob>,
    /// Where the knobs' journal goes ([`super::knob_journal::journal_dir`]).
    pub journal_dir: std::path::PathBuf,
    /// A shell command run once at the end, whatever happened
    /// (`--restore`).
    pub restore: Option<String>,
    /// How long a setup or restore command may run
    /// (`--setup-timeout`).
    pub setup_limit: Duration,
    /// Run A and B at the same time on two halves of the CPUs.
    pub duet: bool,
}

/// The two stored runs of one comparison.
#[derive(Debug)]
pub struct AbRuns {
    /// A's run, then B's, as stored.
    pub runs: [RunRecord; 2],
    /// Why cases ran one side after the other in a duet comparison, one
    /// line per case.
    pub duet_refused: Vec<String>,
    /// Knobs or the restore command that could not be put back, each
    /// with what to do by hand.
    pub restore_failures: Vec<String>,
}

/// Runs `plan` under both settings of `options` and stores both sides.
/// The knobs are put back and the restore command runs at the end, also
/// after a failure or a cancellation; a cancelled comparison stores both
/// runs `partial`.
pub fn execute_ab(
    plan: &Plan,
    options: AbOptions,
    store: &mut Store,
    cancel: &CancelToken,
    progress: &dyn Progress,
) -> anyhow::Result<AbRuns> {
    let (host, env) = probe_host(&options.cpus)?;
    let (cases, warnings) = runnable_cases(plan, &env, options.idle_check)?;
    let halves = if options.duet {
        Some(duet::halves(&options.cpus)?)
    } else {
        None
    };
    let (duet_cases, duet_refused) = match &halves {
        Some(halves) => duet::eligible(&cases, halves[0].len()),
        None => (vec![false; cases.len()], Vec::new()),
    };

    let pair = uuid::Uuid::new_v4().simple().to_string();
    let mut run_ids = [0i64; 2];
    let mut runs: Vec<RunRecord> = Vec::with_capacity(2);
    let described = describe_both(&options.settings, &options.knobs);
    for (side, name) in SIDES.iter().enumerate() {
        let mut notes = options.notes.clone();
        notes.push(format!("{AB_NOTE}={pair}/{name}"));
        notes.push(format!("{AB_SETTING_NOTE}={}", described[side]));
        let cpus = options.settings[side]
            .cpus
            .clone()
            .unwrap_or_else(|| options.cpus.clone());
        runs.push(new_run(
            plan,
            host.clone(),
            cpus,
            options.command_line.clone(),
            notes,
            warnings.clone(),
        ));
    }
    let history = StoreHistory::load(store, &runs[0].host_key(), &cases);
    let mut estimate = engine::estimate::estimate(
        &cases,
        &per_side(&options.methodology),
        &env,
        &history,
        None,
    );
    estimate.seconds *= if options.duet { 1.0 } else { 2.0 };
    progress.planned(&estimate);

    // From here on the knobs may change: the guard puts them back however
    // this function ends.
    let mut guard = KnobGuard::start(options.knobs.clone(), &options.journal_dir)?;
    for (side, run) in runs.iter().enumerate() {
        run_ids[side] = store.begin_run(run)?;
    }
    let side_cpus: Vec<Vec<usize>> = options
        .settings
        .iter()
        .map(|s| s.cpus.clone().unwrap_or_else(|| options.cpus.clone()))
        .collect();
    let contexts: Vec<TrialContext> = side_cpus
        .iter()
        .map(|cpus| TrialContext::new(cpus.clone(), cancel.clone()))
        .collect();
    let mut executors = Vec::with_capacity(2);
    for (side, setting) in options.settings.iter().enumerate() {
        let mut launch = setting.launch.clone();
        launch.pin = setting.cpus.is_some() || options.duet;
        executors.push(SideExecutor {
            side,
            knobs: guard.knobs(),
            setup: setting.setup.clone(),
            setup_limit: options.setup_limit,
            rounds: Subprocess::with_launch(launch)?,
        });
    }
    let setup = AbSetup {
        env: &env,
        method: &options.methodology,
        sides: [0, 1].map(|side| AbSide {
            executor: &executors[side],
            ctx: &contexts[side],
        }),
        duet: halves,
        duet_cases,
        history: &history,
        progress,
        seed: shuffle_seed(),
    };
    let mut case_ids: [Vec<Option<i64>>; 2] = [vec![None; cases.len()], vec![None; cases.len()]];
    let outcome = engine::run_ab_plan(&cases, &setup, &mut |side, position, case| {
        let id = store.save_case(
            run_ids[side],
            Some(position),
            case_ids[side][position],
            case,
        )?;
        case_ids[side][position] = Some(id);
        Ok(())
    });
    drop(executors);

    let mut restore_failures = guard.restore();
    if let Some(command) = &options.restore
        // Run even after an interrupt (that is when it matters most);
        // its limit bounds it, and a second Ctrl-C kills it.
        && let Err(failure) = run_setup(command, "the restore", options.setup_limit, &|| false)
    {
        restore_failures.push(failure);
    }
    let mut warnings = warnings;
    warnings.extend(
        restore_failures
            .iter()
            .map(|f| format!("not put back: {f}")),
    );
    let status = match outcome {
        Ok(outcome) => outcome.status,
        Err(err) => {
            warnings.push(format!("failed: the store failed midway: {err:#}"));
            for id in run_ids {
                let _ = store.finish_run(id, RunStatus::Failed, &now(), &warnings);
            }
            return Err(err.context(suite::StoreFailedMidRun { run_id: run_ids[0] }));
        }
    };
    for id in run_ids {
        store.finish_run(id, status, &now(), &warnings)?;
    }
    Ok(AbRuns {
        runs: [store.load_run(run_ids[0])?, store.load_run(run_ids[1])?],
        duet_refused,
        restore_failures,
    })
}

/// The methodology one side would have on its own, for the estimate: the
/// run's budget is shared by the two sides.
fn per_side(method: &Methodology) -> Methodology {
    Methodology {
        run_budget: method.run_budget.map(|b| b / 2),
        case_budget: (method.case_budget / 2).max(Duration::from_millis(1)),
        ..method.clone()
    }
}
