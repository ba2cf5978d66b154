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

/// The stored runs, newest first.
pub fn runs(runs: &Escaped<Vec<RunListing>>) -> String {
    if runs.is_empty() {
        return "no runs stored yet; `sledge run` makes one\n".to_string();
    }
    let mut table = new_table(vec![
        "id", "uuid", "started", "profile", "status", "host", "cases", "sledge",
    ]);
    for r in runs.iter() {
        table.add_row(vec![
            r.id.to_string(),
            // The first group is enough to name a run (`sledge show 3f2a9c1e`).
            r.uuid.chars().take(crate::store::MIN_UUID_PREFIX).collect(),
            r.started.clone(),
            r.profile.clone(),
            r.status.as_str().to_string(),
            r.hostname.clone(),
            r.cases.to_string(),
            r.sledge_version.clone(),
        ]);
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

/// The built-in profiles and their cases.
pub fn profiles(profiles: &[Profile]) -> String {
    let mut out = String::new();
    for p in profiles {
        out.push_str(&format!("{}: {}\n", p.name, p.summary));
        for e in &p.entries {
            out.push_str(&format!("  {} {}\n", e.workload, e.params.join(" ")));
        }
        out.push('\n');
    }
    out
}

/// The host inventory as a two-column table.
pub fn host(host: &Escaped<HostInfo>) -> String {
    let mut table = new_table(vec!["", ""]);
    for (key, value) in host.display_lines() {
        table.add_row(vec![key, value]);
    }
    format!("{table}\n")
}
