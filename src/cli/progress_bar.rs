//! Progress bars on stderr, shown only when stderr is a terminal.

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::Progress;
use crate::report::format;
use crate::results::CaseRecord;

/// One bar over the cases of a run, its message the current case and the
/// latest trial.
pub struct ProgressBars {
    bar: ProgressBar,
}

impl ProgressBars {
    /// A bar for `cases` cases.
    pub fn new(cases: usize) -> Self {
        let bar = ProgressBar::new(cases as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} cases {elapsed} {wide_msg}",
            )
            .expect("constant template is valid")
            .progress_chars("=> "),
        );
        bar.set_prefix("sledge");
        ProgressBars { bar }
    }

    /// Runs `write` (which prints to stderr) with the bar cleared, then
    /// draws the bar again below what was printed.
    pub fn suspend(&self, write: impl FnOnce()) {
        self.bar.suspend(write);
    }
}

impl Progress for ProgressBars {
    fn case_started(&self, _index: usize, _total: usize, label: &str) {
        self.bar.set_message(label.to_string());
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
