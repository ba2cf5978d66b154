//! `sledge plan`: what a run of a request would do, cost and buy on this
//! host, found without running it. The host is probed for the CPUs a run
//! would take (they size cases such as STREAM's arrays), the cases a run
//! would leave out are left out, and this host's history of each case is
//! read from the store, read-only, where there is one.
//!
//! Nothing is pinned, started, created or written.

use crate::engine::estimate::{self, PlanEstimate};
use crate::engine::{History, Methodology, NoHistory, PlannedCase};
use crate::store::{Store, StoreError, StoreLocation};

use super::planning_history::StoreHistory;
use super::run_request::{BadRequest, RunRequest};

/// The estimate of a run of `request` on this host, and the methodology it
/// was made with. With `detect`, also the rounds a comparison needs to
/// see a change of that share. What a run would skip or stop at is
/// `warned`, line by line. A mistake in the request, or a store that
/// cannot be read, is a [`BadRequest`].
pub fn estimate_run(
    request: &RunRequest,
    detect: Option<f64>,
    warned: &mut dyn FnMut(String),
) -> anyhow::Result<(PlanEstimate, Methodology)> {
    let (plan, methodology, cpus) = request.plan_only()?;
    // The CPUs a run would take (the first `cpus` it may use): what sizes
    // the work of cases such as STREAM's arrays.
    let allowed = crate::sys::affinity::allowed_cpus()?;
    let (host, env) = super::execute::probe_host(&allowed[..cpus.min(allowed.len())])?;
    // Price what a run would run: a profile's cases this host lacks
    // something for are left out, as `run` leaves them out.
    // A case that cannot run here at all (too little disk for its file)
    // would stop the run before it starts; the plan still prices every
    // case, so that the user sees what the run costs once that is fixed.
    let cases = match super::execute::cases_this_host_runs(&plan, &env) {
        Ok((cases, skipped)) => {
            for line in &skipped {
                warned(format!("a run would have {line}"));
            }
            cases
        }
        Err(refused) => {
            warned(format!("a run would stop before its first case: {refused}"));
            plan.cases
                .iter()
                .map(|case| PlannedCase {
                    workload: case.workload,
                    params: case.params.clone(),
                })
                .collect()
        }
    };
    let history = match open_history_store(request.store.clone())? {
        Some(store) => {
            let key = crate::results::host_key(&host, cpus);
            Some(StoreHistory::load(&store, &key, &cases))
        }
        None => None,
    };
    let history: &dyn History = match &history {
        Some(h) => h,
        None => &NoHistory,
    };
    let estimate = estimate::estimate(&cases, &methodology, &env, history, detect);
    Ok((estimate, methodology))
}

/// The store at `location` (or the default one), read-only; `None` when
/// there is no store yet, which is no history rather than an error: a plan
/// must not create one.
fn open_history_store(location: Option<StoreLocation>) -> Result<Option<Store>, BadRequest> {
    let location = Store::location_or_default(location);
    match Store::open_read_only(&location) {
        Ok(store) => Ok(Some(store)),
        Err(StoreError::NoStore { .. }) => Ok(None),
        Err(err) => Err(BadRequest(format!("{:#}", anyhow::Error::new(err)))),
    }
}
