//! What `sledge calibrate` prints: each case's run-to-run noise on this
//! host after the calibration runs, read from the store's history of the
//! case ([`case_noise`]), as a table of one row per case.
//!
//! The noise is gathered into [`Calibration`] first and rendered apart, so
//! that the exporter chooses the rendering as it does for every other
//! command's result.

use comfy_table::{Cell, CellAlignment};

use super::format;
use super::listing::new_table;
use super::noise::case_noise;
use crate::results::RunRecord;
use crate::stats::{MIN_HISTORY_RUNS, RunNoise};
use crate::store::Store;
use crate::visible;

/// Each case's run-to-run noise after a calibration.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// One per case of the last run that reports a metric, in its order.
    pub cases: Vec<CaseCalibration>,
}

/// One case's run-to-run noise.
#[derive(Debug, Clone)]
pub struct CaseCalibration {
    /// The case's label (`cpu.primes threads=1`).
    pub case: String,
    /// Its headline metric, the one the noise is of.
    pub metric: String,
    /// The noise, when the store holds enough runs of the case.
    pub noise: Option<RunNoise>,
}

/// The noise of the headline metric of every case of `run` (the last
/// calibration run), from the store's runs of each case on its host.
pub fn calibration(store: &Store, run: &RunRecord) -> Calibration {
    let cases = run
        .cases
        .iter()
        .filter_map(|case| {
            let headline = case.metrics.first()?;
            let noise = case_noise(store, run, case, &[]).remove(&headline.name);
            Some(CaseCalibration {
                case: case.label(),
                metric: headline.name.clone(),
                noise,
            })
        })
        .collect();
    Calibration { cases }
}

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
