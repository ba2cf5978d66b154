//! The terminal table of one run: one row per metric, the case named on
//! its first row.

use comfy_table::{Cell, CellAlignment, Table};

use super::format;
use super::listing::new_table;
use crate::results::{CaseRecord, MetricRecord, RunRecord};
use crate::visible::Escaped;

/// Renders the run's header and its results table, then the sections its
/// workloads add (UnixBench's index tables when it has UnixBench cases).
pub fn render(run: &Escaped<RunRecord>) -> String {
    let mut out = header(run);
    out.push('\n');
    out.push_str(&table(run).to_string());
    out.push('\n');
    out.push_str(&super::run_sections::text(run));
    for case in &run.cases {
        if let Some(line) = hardware_line(case) {
            out.push_str(&format!("hardware: {}: {line}\n", case.label()));
        }
        for warning in &case.warnings {
            out.push_str(&format!("warning: {}: {warning}\n", case.label()));
        }
        if let Some(error) = &case.error {
            out.push_str(&format!("error: {}: {error}\n", case.label()));
        }
    }
    for warning in &run.warnings {
        out.push_str(&format!("warning: {warning}\n"));
    }
    out
}

/// What the hardware did during a case's trials (the ones its statistics
/// use): mean effective clock, hottest temperature, mean power, throttle
/// events; `None` when the host showed none of it.
pub fn hardware_line(case: &CaseRecord) -> Option<String> {
    let used: Vec<&crate::monitor::TrialHealth> = case
        .trials
        .iter()
        .filter(|t| !t.replaced)
        .map(|t| &t.health)
        .collect();
    let mean = |values: Vec<f64>| {
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    let mut parts = Vec::new();
    if let Some(mhz) = mean(used.iter().filter_map(|h| h.clock_mhz).collect()) {
        parts.push(format!("clock {} MHz", format::value(mhz)));
    }
    if let Some(max) = used
        .iter()
        .filter_map(|h| h.temperature_max_c)
        .reduce(f64::max)
    {
        parts.push(format!("up to {max:.0} °C"));
    }
    if let Some(watts) = mean(used.iter().filter_map(|h| h.power_watts).collect()) {
        parts.push(format!("{} W", format::value(watts)));
    }
    let throttles: Vec<u64> = used.iter().filter_map(|h| h.throttle_events).collect();
    if !throttles.is_empty() {
        parts.push(format!("{} throttle events", throttles.iter().sum::<u64>()));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// One line about the run (id, profile, status, host, time), and its
/// notes on a second line when it has any.
pub fn header(run: &RunRecord) -> String {
    let notes = if run.notes.is_empty() {
        String::new()
    } else {
        format!(
            "notes: {}\n",
            crate::results::shown_notes(&run.notes).join(" · ")
        )
    };
    format!(
        "run {} · profile {} · {} · {} ({} CPUs used) · {} · sledge {}\n{notes}",
        run.id,
        run.profile,
        run.status.as_str(),
        if run.host.hostname.is_empty() {
            "unknown host"
        } else {
            &run.host.hostname
        },
        run.cpus.len(),
        run.started,
        run.sledge_version
    )
}

/// The results table.
pub fn table(run: &RunRecord) -> Table {
    let mut table = new_table(vec![
        "workload",
        "parameters",
        "metric",
        "value ± 95% CI",
        "rounds×n",
        "unit",
        "flags",
    ]);
    for case in &run.cases {
        if case.metrics.is_empty() {
            table.add_row(vec![
                Cell::new(&case.workload),
                Cell::new(case.params_text()),
                Cell::new("-"),
                Cell::new("-"),
                Cell::new("0"),
                Cell::new(""),
                Cell::new("failed"),
            ]);
            continue;
        }
        for (i, metric) in case.metrics.iter().enumerate() {
            let first = i == 0;
            table.add_row(vec![
                Cell::new(if first { case.workload.as_str() } else { "" }),
                Cell::new(if first {
                    case.params_text()
                } else {
                    String::new()
                }),
                Cell::new(&metric.name),
                Cell::new(value_with_ci(metric)).set_alignment(CellAlignment::Right),
                Cell::new(trials_text(case, metric)).set_alignment(CellAlignment::Right),
                Cell::new(&metric.unit),
                Cell::new(flags(case, metric, first)),
            ]);
        }
    }
    table
}

/// The trials behind a value: `6` for one round, `3×2` for three rounds
/// of two trials (`6 in 3` when the rounds hold different numbers).
pub fn trials_text(case: &CaseRecord, metric: &MetricRecord) -> String {
    let rounds = metric.rounds(&case.trials);
    let rounds: Vec<usize> = rounds.iter().map(Vec::len).filter(|&n| n > 0).collect();
    match rounds.as_slice() {
        [] | [_] => metric.summary.n.to_string(),
        [first, rest @ ..] if rest.iter().all(|n| n == first) => {
            format!("{}×{first}", rounds.len())
        }
        _ => format!("{} in {}", metric.summary.n, rounds.len()),
    }
}

/// `807.3 ± 3.1`; just the value when there is a single sample.
pub fn value_with_ci(metric: &MetricRecord) -> String {
    let s = &metric.summary;
    if s.n < 2 {
        format::value(s.mean)
    } else {
        format::with_uncertainty(s.mean, s.ci_half_width())
    }
}

/// Outliers of this metric, and (on the case's first row) disturbed trials
/// and failure.
pub fn flags(case: &CaseRecord, metric: &MetricRecord, first_row: bool) -> String {
    let mut flags = Vec::new();
    let outliers = metric.outliers.iter().filter(|&&o| o).count();
    if outliers > 0 {
        flags.push(format!(
            "{outliers} outlier{}",
            if outliers > 1 { "s" } else { "" }
        ));
    }
    if first_row {
        for (kind, count) in case.disturbances() {
            flags.push(format!("{kind} {count}/{}", case.used_trials()));
        }
        let replaced = case.replaced_trials();
        if replaced > 0 {
            flags.push(format!("{replaced} disturbed replaced"));
        }
        if case.error.is_some() {
            flags.push("failed".to_string());
        }
    }
    flags.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::results::TrialRecord;

    fn case(healths: &[serde_json::Value]) -> CaseRecord {
        CaseRecord {
            workload: "cpu.primes".into(),
            workload_version: 1,
            params: Default::default(),
            given_as_all: None,
            warnings: vec![],
            error: None,
            rounds: vec![],
            trials: healths
                .iter()
                .enumerate()
                .map(|(i, h)| TrialRecord {
                    index: i as u32,
                    round: 0,
                    replaced: i == 2,
                    seconds: 1.0,
                    health: serde_json::from_value(h.clone()).unwrap(),
                })
                .collect(),
            metrics: vec![],
            latency_histogram: None,
            values: None,
        }
    }

    #[test]
    fn the_hardware_line_sums_up_the_used_trials() {
        let c = case(&[
            json!({"clock_mhz": 3000.0, "temperature_max_c": 70.0, "power_watts": 100.0,
                   "throttle_events": 0}),
            json!({"clock_mhz": 3100.0, "temperature_max_c": 74.4, "power_watts": 110.0,
                   "throttle_events": 1}),
            // Replaced: left out.
            json!({"clock_mhz": 1000.0, "temperature_max_c": 99.0, "power_watts": 300.0,
                   "throttle_events": 5}),
        ]);
        assert_eq!(
            hardware_line(&c).as_deref(),
            Some("clock 3050 MHz, up to 74 °C, 105 W, 1 throttle events")
        );
        assert_eq!(hardware_line(&case(&[json!({}), json!({})])), None);
    }
}
