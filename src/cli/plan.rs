//! `sledge plan`: what a run would do, cost and buy, without running it.
//!
//! A subcommand rather than `run --dry-run`: a plan reads the store (this
//! host's history of each case) but writes nothing, pins no CPU and starts
//! no process, and it has an option of its own (`--detect`) that means
//! nothing to a run. It takes the same selection and repetition options
//! as `run`, so `sledge plan X -p ...` tells what `sledge run X -p ...`
//! will do.

use clap::Args;

use super::output::{ExitStatus, UsageError, print};
use super::run_args::RunArgs;
use crate::engine::estimate;
use crate::store::StoreLocation;
use crate::suite::history::StoreHistory;
use crate::suite::request::BadRequest;

/// Options of `sledge plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Also say, per case, how many rounds a comparison of two runs needs
    /// to find a change of this size at 95% confidence and 90% power, and
    /// how long both runs take, from this host's history of the case (its
    /// rounds' scatter and how much its runs differ): a percentage above 0
    /// and below 100, such as 5% or 5.
    #[arg(long, value_name = "PERCENT", value_parser = percent)]
    detect: Option<f64>,
}

/// A change for `--detect`: `5%` or `5`, above 0 and below 100.
fn percent(text: &str) -> Result<f64, String> {
    text.trim()
        .trim_end_matches('%')
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && *v < 100.0)
        .map(|v| v / 100.0)
        .ok_or_else(|| "expected a percentage above 0 and below 100, such as 5% or 5".to_string())
}

/// Prints the plan of the run `args` describe.
pub fn execute(
    args: PlanArgs,
    store_location: Option<StoreLocation>,
) -> anyhow::Result<ExitStatus> {
    let (plan, methodology, cpus) = args.run.request()?.plan_only().map_err(|err| match err
        .downcast::<BadRequest>(
    ) {
        Ok(bad) => super::run_args::usage(bad).into(),
        Err(err) => err,
    })?;
    // No store yet is no history, not an error: a plan must not create
    // one.
    // The CPUs a run would take (the first `cpus` it may use): what sizes
    // the work of cases such as STREAM's arrays.
    let allowed = crate::sys::affinity::allowed_cpus()?;
    let (host, env) = crate::suite::execute::probe_host(&allowed[..cpus.min(allowed.len())])?;
    // Price what a run would run: a profile's cases this host lacks
    // something for are left out, as `run` leaves them out.
    // A case that cannot run here at all (too little disk for its file)
    // would stop the run before it starts; the plan still prices every
    // case, so that the user sees what the run costs once that is fixed.
    let cases = match crate::suite::execute::cases_this_host_runs(&plan, &env) {
        Ok((cases, skipped)) => {
            for line in &skipped {
                eprintln!("warning: a run would have {line}");
            }
            cases
        }
        Err(refused) => {
            eprintln!("warning: a run would stop before its first case: {refused}");
            plan.cases
                .iter()
                .map(|case| crate::engine::PlannedCase {
                    workload: case.workload,
                    params: case.params.clone(),
                })
                .collect()
        }
    };
    let history = match super::output::open_existing_store(store_location) {
        Ok(store) => {
            let key = crate::results::host_key(&host, cpus);
            Some(StoreHistory::load(&store, &key, &cases))
        }
        Err(err) => match err.downcast_ref::<crate::store::StoreError>() {
            Some(crate::store::StoreError::NoStore { .. }) => None,
            _ => return Err(UsageError(format!("{err:#}")).into()),
        },
    };
    let history: &dyn crate::engine::History = match &history {
        Some(h) => h,
        None => &crate::engine::NoHistory,
    };
    let estimate = estimate::estimate(&cases, &methodology, &env, history, args.detect);
    print(
        &args
            .run
            .format()
            .exporter()
            .plan(&estimate, &methodology, args.detect)?,
    )?;
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_takes_a_percentage() {
        assert_eq!(percent("5%"), Ok(0.05));
        assert_eq!(percent(" 2.5 "), Ok(0.025));
        assert!(percent("0").is_err() && percent("100%").is_err() && percent("x").is_err());
    }
}
