//! `--json`: every result in its documented shape (docs/json.md),
//! pretty-printed with a final newline. JSON carries the text as stored,
//! unescaped: its readers are programs.

use serde::Serialize;

use super::view::View;

/// `view` as JSON. A run's shape is `RunRecord`'s, documented field by
/// field in `results.rs` and pinned by a snapshot test: the terminal's
/// views of it and its pivot tables are not part of it. A comparison has
/// every metric whichever `--metrics` is given. A calibration and a fleet
/// run's closing table have no JSON (their runs have, through `show`):
/// `None`.
pub(super) fn render(view: &View<'_>) -> Option<anyhow::Result<String>> {
    Some(match *view {
        View::Run { run, .. } => pretty(run),
        View::Comparison(shown) => pretty(shown.comparison),
        View::History(history) => pretty(history),
        View::Runs { runs, .. } => pretty(&runs),
        View::Host(host) => pretty(host),
        View::Plan {
            estimate,
            methodology,
            detect,
        } => crate::report::plan_table::json(estimate, methodology, detect),
        View::FleetOutliers(outliers) => pretty(outliers),
        View::HttpLoad(load) => load.json().map_err(Into::into),
        View::HttpHosts(load) => load.json().map_err(Into::into),
        View::FleetRun(_) | View::Calibration(_) => return None,
    })
}

/// `value` as pretty JSON and a newline.
fn pretty(value: &impl Serialize) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}
