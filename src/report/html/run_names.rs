//! How a run is named in the page's tables and charts.

use maud::{Markup, html};

use super::charts;
use crate::results::RunRecord;

/// `run 3`: how a run is named in tables and charts.
pub(super) fn run_name(run: &RunRecord) -> String {
    format!("run {}", run.id)
}

/// A coloured square and the run's name.
pub(super) fn run_heading(index: usize, run: &RunRecord) -> Markup {
    html! {
        span class="swatch" style=(format!("background:{}", charts::css_color(index))) {}
        (run_name(run))
    }
}
