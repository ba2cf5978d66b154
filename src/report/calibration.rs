//! What `sledge calibrate` prints: each case's run-to-run noise on this
//! host after the calibration runs ([`Calibration`], gathered in
//! `analysis::noise_history`), as a table of one row per case.
//!
//! The noise is gathered first and rendered apart, so that the exporter
//! chooses the rendering as it does for every other command's result.

use comfy_table::{Cell, CellAlignment};

use super::format;
use super::listing::new_table;
use crate::analysis::MIN_HISTORY_RUNS;
use crate::analysis::noise_history::Calibration;
use crate::visible;

/// The table `sledge calibrate` prints, with the line that says what the
/// noise is.
pub fn render(calibration: &Calibration) -> String {
    let mut table = new_table(vec!["case", "metric", "runs", "run-to-run noise"]);
    table.set_width(format::REPORT_WIDTH as u16);
    for case in &calibration.cases {
        let (runs, text) = match &case.noise {
            Some(n) => (
                n.runs.to_string(),
                format!("±{}", format::percent(n.sd_log.exp_m1())),
            ),
            None => (
                "-".to_string(),
                format!("unknown (fewer than {MIN_HISTORY_RUNS} runs)"),
            ),
        };
        table.add_row(vec![
            Cell::new(visible::escape(&case.case)),
            Cell::new(visible::escape(&case.metric)),
            Cell::new(runs).set_alignment(CellAlignment::Right),
            Cell::new(text).set_alignment(CellAlignment::Right),
        ]);
    }
    format!(
        "run-to-run noise of each case on this host (one standard deviation of a run's value):\n{table}\n"
    )
}
