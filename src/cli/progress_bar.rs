//! Progress bars on stderr, shown only when stderr is a terminal.

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::Progress;
use crate::report::format;
use crate::results::CaseRecord;

/// One bar over the case rounds of a run, its message the current round,
/// case and latest trial.
pub struct ProgressBars {
    bar: ProgressBar,
    round: std::cell::Cell<u32>,
}

impl ProgressBars {
    /// A bar for `rounds` case rounds (cases times the minimum rounds; it
    /// grows when cases get extra rounds).
    pub fn new(rounds: usize) -> Self {
        let bar = ProgressBar::new(rounds as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} case rounds {elapsed} {wide_msg}",
            )
            .expect("constant template is valid")
            .progress_chars("=> "),
        );
        bar.set_prefix("sledge");
        ProgressBars {
            bar,
            round: std::cell::Cell::new(0),
        }
    }

    /// Runs `write` (which prints to stderr) with the bar cleared, then
    /// draws the bar again below what was printed.
    pub fn suspend(&self, write: impl FnOnce()) {
        self.bar.suspend(write);
    }
}

impl Progress for ProgressBars {
    fn round_started(&self, round: u32, cases: usize) {
        self.round.set(round);
        // Extra rounds were not in the first estimate.
        let needed = self.bar.position() + cases as u64;
        if needed > self.bar.length().unwrap_or(0) {
            self.bar.set_length(needed);
        }
    }

    fn case_started(&self, _index: usize, _total: usize, label: &str) {
        self.bar
            .set_message(format!("round {}: {label}", self.round.get() + 1));
    }

    fn trial_finished(&self, counted: u32, warmup: bool, primary: f64, unit: &str) {
        let what = if warmup {
            "warm-up".to_string()
        } else {
            format!("trial {counted}")
        };
        let message = self.bar.message();
        let case = message.split(" · ").next().unwrap_or_default().to_string();
        self.bar.set_message(format!(
            "{case} · {what}: {} {unit}",
            format::value(primary)
        ));
    }

    fn case_finished(&self, _record: &CaseRecord) {
        self.bar.inc(1);
    }
}

impl Drop for ProgressBars {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
