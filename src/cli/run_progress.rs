//! What `sledge run` writes to stderr while it runs: progress bars when
//! stderr is a terminal, and each case's error the moment the case fails.
//!
//! Errors also belong to the results (the table and the JSON on stdout
//! carry them), but stdout may be a file or a pipe into `jq`: as fio and
//! sysbench do, an error is also said on stderr, where a person or a log
//! watching the run sees it.

use crate::engine::Progress;
use crate::engine::estimate::PlanEstimate;
use crate::results::CaseRecord;

use super::progress_bar::ProgressBars;

/// The run's progress on stderr; see the module docs.
pub struct RunProgress {
    /// The bars, on a terminal only.
    bars: Option<ProgressBars>,
}

impl RunProgress {
    /// Progress for a run of `rounds` case rounds (see
    /// [`ProgressBars::new`]), with bars if `terminal`.
    pub fn new(rounds: usize, terminal: bool) -> Self {
        RunProgress {
            bars: terminal.then(|| ProgressBars::new(rounds)),
        }
    }

    /// Writes one line to stderr without breaking the bars.
    fn say(&self, line: &str) {
        match &self.bars {
            Some(bars) => bars.suspend(|| crate::say!("{line}")),
            None => crate::say!("{line}"),
        }
    }
}

/// The line a failed case gets on stderr, or `None` if it did not fail.
pub fn case_error_line(record: &CaseRecord) -> Option<String> {
    let error = record.error.as_ref()?;
    Some(format!("error: {}: {error}", record.label()))
}

impl Progress for RunProgress {
    fn planned(&self, estimate: &PlanEstimate) {
        self.say(&crate::report::plan_table::estimate_line(estimate));
    }

    fn round_started(&self, round: u32, cases: usize) {
        if let Some(bars) = &self.bars {
            bars.round_started(round, cases);
        }
    }

    fn case_started(&self, index: usize, total: usize, label: &str) {
        if let Some(bars) = &self.bars {
            bars.case_started(index, total, label);
        }
    }

    fn trial_finished(&self, counted: u32, warmup: bool, primary: f64, unit: &str) {
        if let Some(bars) = &self.bars {
            bars.trial_finished(counted, warmup, primary, unit);
        }
    }

    /// A failed case gets no further rounds, so its error is said once.
    fn case_finished(&self, record: &CaseRecord) {
        if let Some(bars) = &self.bars {
            bars.case_finished(record);
        }
        if let Some(line) = case_error_line(record) {
            self.say(&line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(error: Option<&str>) -> CaseRecord {
        CaseRecord {
            workload: "cpu.primes".to_string(),
            workload_version: 1,
            params: [("threads".to_string(), "2".to_string())].into(),
            given_as_all: None,
            warnings: Vec::new(),
            error: error.map(str::to_string),
            rounds: Vec::new(),
            trials: Vec::new(),
            metrics: Vec::new(),
            latency_histogram: None,
            values: None,
        }
    }

    #[test]
    fn a_failed_case_gets_a_line_naming_it_and_a_finished_one_none() {
        assert_eq!(
            case_error_line(&record(Some("no space left"))).as_deref(),
            Some("error: cpu.primes threads=2: no space left")
        );
        assert_eq!(case_error_line(&record(None)), None);
    }
}
