//! The kinds of result whose renderings live beside their data in
//! `report/` (`http_load.rs`, `calibration.rs`, `fleet_run.rs`), one
//! function per format there: the format is matched here, once, so the
//! exporters keep one method per kind without each repeating the match.
//! A format without a rendering of the kind is refused by name, as the
//! trait's defaults refuse.

use super::{Format, not_offered};
use crate::report::calibration::{self, Calibration};
use crate::report::fleet_run::{self, FleetRunSummary};
use crate::report::http_load::{HostsShown, LoadShown};

/// An ad-hoc HTTP load from this host: text, or JSON.
pub(super) fn http_load(format: Format, load: &LoadShown<'_>) -> anyhow::Result<String> {
    match format {
        Format::Table => Ok(load.text()),
        Format::Json => Ok(load.json()?),
        Format::Csv | Format::Markdown => Err(not_offered(format, "an HTTP load")),
    }
}

/// An ad-hoc HTTP load from several client hosts: text, or JSON.
pub(super) fn http_hosts(format: Format, load: &HostsShown<'_>) -> anyhow::Result<String> {
    match format {
        Format::Table => Ok(load.text()),
        Format::Json => Ok(load.json()?),
        Format::Csv | Format::Markdown => Err(not_offered(format, "an HTTP load")),
    }
}

/// The run-to-run noise after a calibration: a table only.
pub(super) fn calibration(format: Format, noise: &Calibration) -> anyhow::Result<String> {
    match format {
        Format::Table => Ok(calibration::render(noise)),
        _ => Err(not_offered(format, "the run-to-run noise")),
    }
}

/// The closing table of a fleet run: a table only.
pub(super) fn fleet_run(format: Format, summary: &FleetRunSummary) -> anyhow::Result<String> {
    match format {
        Format::Table => Ok(fleet_run::render(summary)),
        _ => Err(not_offered(format, "a fleet run")),
    }
}
