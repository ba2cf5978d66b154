//! Tables for `sledge list`, `sledge workloads`, `sledge probe` and
//! `sledge profiles`.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use crate::engine::Workload;
use crate::probe::HostInfo;
use crate::store::RunListing;
use crate::suite::Profile;
use crate::visible::Escaped;

/// A table in sledge's style: condensed UTF-8 borders, columns that fit
/// the terminal.
pub fn new_table(header: Vec<&str>) -> Table {
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header);
    table
}

/// The stored runs, newest first. A `fleet host` column, after `host`,
/// names the host a fleet run ran on (as `--hosts` named it) when any run
/// has one: clones of one image share a host name.
pub fn runs(runs: &Escaped<Vec<RunListing>>) -> String {
    if runs.is_empty() {
        return "no runs stored yet; `sledge run` makes one\n".to_string();
    }
    let fleet = runs.iter().any(|r| r.fleet_host.is_some());
    let mut header = vec!["id", "uuid", "started", "profile", "status", "host"];
    if fleet {
        header.push("fleet host");
    }
    header.extend(["cases", "sledge"]);
    let mut table = new_table(header);
    for r in runs.iter() {
        let mut row = vec![
            r.id.to_string(),
            // The first group is enough to name a run (`sledge show 3f2a9c1e`).
            r.uuid.chars().take(crate::store::MIN_UUID_PREFIX).collect(),
            r.started.clone(),
            r.profile.clone(),
            r.status.as_str().to_string(),
            r.hostname.clone(),
        ];
        if fleet {
            row.push(r.fleet_host.clone().unwrap_or_default());
        }
        row.extend([r.cases.to_string(), r.sledge_version.clone()]);
        table.add_row(row);
    }
    format!("{table}\n")
}

/// Every workload with its parameters, defaults and allowed values.
pub fn workloads(workloads: &[&'static dyn Workload]) -> String {
    let mut out = String::new();
    for w in workloads {
        out.push_str(&format!("{} (v{}): {}\n", w.id(), w.version(), w.summary()));
        let mut table = new_table(vec!["parameter", "default", "allowed", "meaning"]);
        for p in w.params() {
            table.add_row(vec![
                p.name.to_string(),
                p.default.to_string(),
                p.allowed(),
                p.help.to_string(),
            ]);
        }
        out.push_str(&format!("{table}\n\n"));
    }
    out
}

/// The profiles and their cases, a battery file's with its path. A
/// battery file is the user's text: shown escaped.
pub fn profiles(profiles: &[Profile]) -> String {
    let mut out = String::new();
    for p in profiles {
        let name = match &p.file {
            Some(file) => format!("{} (battery file {})", p.name, file.path.display()),
            None => p.name.clone(),
        };
        out.push_str(&format!("{name}: {}\n", p.summary));
        for e in &p.entries {
            out.push_str(&format!("  {} {}\n", e.workload.id(), e.params.join(" ")));
        }
        out.push('\n');
    }
    crate::visible::escape_lines(&out).into_owned()
}

/// The host inventory as a two-column table.
pub fn host(host: &Escaped<HostInfo>) -> String {
    let mut table = new_table(vec!["", ""]);
    for (key, value) in host.display_lines() {
        table.add_row(vec![key, value]);
    }
    format!("{table}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::RunStatus;

    fn listed(id: i64, fleet_host: Option<&str>) -> RunListing {
        RunListing {
            id,
            uuid: format!("{id:08}-0000-4000-8000-000000000000"),
            started: "2026-03-01T10:00:00Z".into(),
            finished: None,
            profile: "quick".into(),
            status: RunStatus::Complete,
            hostname: "vm".into(),
            fleet_host: fleet_host.map(String::from),
            cases: 3,
            sledge_version: "0.1.0".into(),
        }
    }

    #[test]
    fn fleet_clones_that_share_a_host_name_are_told_apart() {
        let text = runs(&Escaped::new(vec![
            listed(3, Some("198.18.2.2")),
            listed(2, Some("198.18.1.2")),
            listed(1, None),
        ]));
        let header = text.lines().find(|l| l.contains("uuid")).unwrap();
        assert!(header.contains("┆ host ┆ fleet host ┆ cases"), "{text}");
        let row = |id: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("│ {id}  ┆")))
                .unwrap_or_else(|| panic!("no run {id}: {text}"))
                .to_string()
        };
        assert!(row("3").contains("┆ vm   ┆ 198.18.2.2 ┆"), "{text}");
        assert!(row("2").contains("┆ vm   ┆ 198.18.1.2 ┆"), "{text}");
        // Without fleet runs, no such column.
        assert!(!runs(&Escaped::new(vec![listed(1, None)])).contains("fleet host"));
    }
}
