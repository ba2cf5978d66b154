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
use super::run_args::{RunArgs, usage};
use crate::report::export::View;
use crate::store::StoreLocation;
use crate::suite::plan_estimate::estimate_run;
use crate::suite::run_request::BadRequest;

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
    // Hyphen values reach the parser, so that `-5%` is refused as a
    // percentage out of range, not taken for an unknown option.
    #[arg(long, value_name = "PERCENT", value_parser = percent, allow_hyphen_values = true)]
    detect: Option<f64>,
}

/// A change for `--detect`: `5%`, `5` or `2.5`, above 0 and below 100:
/// digits with at most one decimal point, then at most one `%` right
/// after them (`5%%`, `5 %`, `%5`, `1e1` are refused).
fn percent(text: &str) -> Result<f64, String> {
    const ALLOWED: &str = "expected a percentage above 0 and below 100, such as 5% or 5";
    let trimmed = text.trim();
    let number = trimmed.strip_suffix('%').unwrap_or(trimmed);
    let unsigned = number.strip_prefix('-').unwrap_or(number);
    let well_formed = unsigned.chars().any(|c| c.is_ascii_digit())
        && unsigned.chars().all(|c| c.is_ascii_digit() || c == '.')
        && unsigned.matches('.').count() <= 1;
    if !well_formed {
        return Err(format!(
            "{ALLOWED} (digits, then at most one % right after them)"
        ));
    }
    number
        .parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0 && *v < 100.0)
        .map(|v| v / 100.0)
        .ok_or_else(|| ALLOWED.to_string())
}

/// Prints the plan of the run `args` describe.
pub fn execute(
    args: PlanArgs,
    store_location: Option<StoreLocation>,
) -> anyhow::Result<ExitStatus> {
    let request = args.run.request(store_location)?;
    let bad_request_is_usage = |err: anyhow::Error| match err.downcast::<BadRequest>() {
        Ok(bad) => usage(bad).into(),
        Err(err) => err,
    };
    // Refused as `run` refuses it: a plan of a run that would not start
    // tells the user nothing.
    if let Some(choice) = &args.run.pivot {
        let (plan, _, _) = request.plan_only().map_err(bad_request_is_usage)?;
        choice.check_for(&plan).map_err(UsageError)?;
    }
    let (estimate, methodology) = estimate_run(&request, args.detect, &mut |line: String| {
        crate::say!("warning: {line}")
    })
    .map_err(bad_request_is_usage)?;
    print(&args.run.format().render(&View::Plan {
        estimate: &estimate,
        methodology: &methodology,
        detect: args.detect,
    })?)?;
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
        assert_eq!(percent("99.99%"), Ok(99.99 / 100.0));
        for malformed in ["5%%", "5 %", "%5", "1e1", "5.5.5", ".", "-", "+5", "5%x"] {
            let err = percent(malformed).unwrap_err();
            assert!(
                err.contains("above 0 and below 100") && err.contains("at most one %"),
                "{malformed}: {err}"
            );
        }
        // A negative percentage is well formed, and out of range.
        assert_eq!(
            percent("-5%").unwrap_err(),
            "expected a percentage above 0 and below 100, such as 5% or 5"
        );
    }
}
