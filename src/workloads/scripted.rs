//! `test.scripted`: a workload whose values are given, not measured, so
//! that tests of the whole command line (rounds in their own processes,
//! storage, comparisons, the regression gate) can assert exact outcomes
//! whatever this machine is doing. The idea is hyperfine's mock executor.
//!
//! It exists only when `SLEDGE_TEST_WORKLOADS=1` is set (see
//! [`super::all`]): users never see it.

use std::time::Duration;

use crate::engine::{
    Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, Params, TrialContext,
    TrialOutput, Workload,
};

/// The environment variable that makes test workloads visible.
pub const ENABLE_VAR: &str = "SLEDGE_TEST_WORKLOADS";

/// An environment variable that, when set, replaces the `values`
/// parameter: runs that must be compared need equal parameters, yet
/// different values.
pub const VALUES_VAR: &str = "SLEDGE_SCRIPTED_VALUES";

/// Whether test workloads are enabled in this process.
pub fn enabled() -> bool {
    std::env::var_os(ENABLE_VAR).is_some_and(|v| v == "1")
}

/// See the module documentation.
pub struct Scripted;

impl Workload for Scripted {
    fn id(&self) -> &'static str {
        "test.scripted"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "returns the values it is given (for sledge's own tests)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        ScriptedParams::specs()
    }
    fn build(&self, params: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let params = ScriptedParams::from_set(params);
        let values =
            std::env::var(VALUES_VAR).unwrap_or_else(|_| params.values.as_str().to_string());
        Ok(Box::new(ScriptedCase {
            rounds: parse_values(&values)?,
            sleep: Duration::from_secs_f64(params.sleep),
            cleanup: Duration::from_secs_f64(params.cleanup),
            call: 0,
        }))
    }
}

crate::workload_params! {
    /// The parameters of `test.scripted`.
    pub struct ScriptedParams {
        values: String = ParamSpec {
            name: "values",
            role: ParamRole::Other,
            help: "the value of each trial call, rounds separated by `/`, calls by `:` \
                   (warm-up calls included); a round's last value repeats, and so does the \
                   last round; SLEDGE_SCRIPTED_VALUES, when set, replaces it",
            kind: ParamKind::Text,
            default: "100",
        },
        sleep: f64 = ParamSpec {
            name: "sleep",
            role: ParamRole::Other,
            help: "how long each trial call sleeps",
            kind: ParamKind::Seconds {
                min: 0.0,
                max: 60.0,
            },
            default: "0",
        },
        cleanup: f64 = ParamSpec {
            name: "cleanup",
            role: ParamRole::Other,
            help: "how long each round's cleanup takes (not cut short by Ctrl-C)",
            kind: ParamKind::Seconds {
                min: 0.0,
                max: 60.0,
            },
            default: "0",
        },
        label: String = ParamSpec {
            name: "label",
            role: ParamRole::Other,
            help: "any text, to make cases differ",
            kind: ParamKind::Text,
            default: "a",
        },
    }
}

/// Parses `100:101/99` into `[[100, 101], [99]]`.
fn parse_values(text: &str) -> anyhow::Result<Vec<Vec<f64>>> {
    text.split('/')
        .map(|round| {
            round
                .split(':')
                .map(|v| {
                    v.trim().parse::<f64>().map_err(|_| {
                        anyhow::anyhow!(
                            "values: `{v}` is not a number (rounds by `/`, calls by `:`)"
                        )
                    })
                })
                .collect()
        })
        .collect()
}

struct ScriptedCase {
    rounds: Vec<Vec<f64>>,
    sleep: Duration,
    cleanup: Duration,
    call: usize,
}

impl Case for ScriptedCase {
    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        std::thread::sleep(self.cleanup);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let deadline = std::time::Instant::now() + self.sleep;
        while std::time::Instant::now() < deadline {
            ctx.check_cancelled()?;
            std::thread::sleep(Duration::from_millis(10).min(self.sleep));
        }
        let round = &self.rounds[(ctx.round as usize).min(self.rounds.len() - 1)];
        let value = round[self.call.min(round.len() - 1)];
        self.call += 1;
        Ok(TrialOutput {
            metrics: vec![
                Metric::higher("value", "u", value),
                Metric::lower("seconds", "s", 1.0 / value),
                // Which process ran the trial: rounds must each have their own.
                Metric::lower("pid", "", f64::from(std::process::id())),
            ],
            latency_ns: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_by_round_and_call() {
        assert_eq!(
            parse_values("100:101/99").unwrap(),
            vec![vec![100.0, 101.0], vec![99.0]]
        );
        let err = parse_values("1:x").unwrap_err().to_string();
        assert!(err.contains("`x` is not a number"), "{err}");
    }
}
