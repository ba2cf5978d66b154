//! fio's JSON report (`fio --output-format=json ...`).
//!
//! For each direction that did any I/O (`read`, `write`, `trim`, in that
//! order, so a read's IOPS is the headline of a mixed job):
//! `<dir>_iops` (ios/s), `<dir>_bw` (MiB/s, from fio's `bw_bytes`),
//! `<dir>_clat_mean` and, where fio computed them, `<dir>_clat_p50`,
//! `<dir>_clat_p99` and `<dir>_clat_p99_9` (completion latency, µs).
//!
//! Several jobs: fio's JSON has one entry per job, or one per group with
//! `--group_reporting`. IOPS and bandwidth are summed over the entries, as
//! fio's own group report sums them, and the mean latency is the entries'
//! mean weighted by their I/O counts, which is exact. Percentiles cannot
//! be merged from per-job percentiles, so they are stored only when the
//! report has one entry: one job, or several with `--group_reporting`,
//! where fio merged the jobs' histograms itself. Jobs of several groups
//! (`stonewall`, `new_group`) ran one after another, and their sum would
//! describe no moment of the run: such a report is refused.
//!
//! fio may print notes on standard output before its JSON; they are
//! skipped (`json_report`).

use serde_json::Value;

use super::json_report::{first_object, number_at};
use super::tool_parser::ToolParser;
use crate::engine::Metric;

/// fio's `--output-format=json`.
pub struct Fio;

/// The directions fio reports, in the order their metrics are stored.
const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// fio's percentile keys (its default list) and the suffix each is stored
/// under.
const PERCENTILES: [(&str, &str); 3] = [
    ("50.000000", "p50"),
    ("99.000000", "p99"),
    ("99.900000", "p99_9"),
];

const MIB: f64 = 1024.0 * 1024.0;
const NS_PER_US: f64 = 1e3;

impl ToolParser for Fio {
    fn name(&self) -> &'static str {
        "fio"
    }

    fn programs(&self) -> &'static [&'static str] {
        &["fio"]
    }

    fn needs(&self) -> &'static str {
        "--output-format=json"
    }

    fn parse(&self, stdout: &str) -> Result<Vec<Metric>, String> {
        let report = first_object(stdout, "fio")?;
        let entries = report
            .get("jobs")
            .and_then(Value::as_array)
            .filter(|jobs| !jobs.is_empty())
            .ok_or("fio's JSON has no `jobs` list with a job in it")?;
        check_entries(entries)?;
        let mut metrics = Vec::new();
        for direction in DIRECTIONS {
            metrics.extend(direction_metrics(entries, direction)?);
        }
        if metrics.is_empty() {
            return Err(
                "fio's JSON shows no I/O done in any direction (read, write or trim)".to_string(),
            );
        }
        Ok(metrics)
    }
}

/// An error for a job that failed, or for jobs of several groups.
fn check_entries(entries: &[Value]) -> Result<(), String> {
    for entry in entries {
        let error = number_at(entry, "/error", "fio")?;
        if error != 0.0 {
            let name = entry["jobname"].as_str().unwrap_or("?");
            return Err(format!("fio job `{name}` ended with error {error}"));
        }
    }
    let first_group = number_at(&entries[0], "/groupid", "fio")?;
    for entry in &entries[1..] {
        if number_at(entry, "/groupid", "fio")? != first_group {
            return Err(
                "fio's JSON holds jobs of several groups (stonewall or new_group), which ran \
                 one after another: run each group as a command of its own"
                    .to_string(),
            );
        }
    }
    Ok(())
}

/// The metrics of one direction over all entries: none if no entry did
/// any I/O in it.
fn direction_metrics(entries: &[Value], direction: &str) -> Result<Vec<Metric>, String> {
    let field =
        |entry: &Value, path: &str| number_at(entry, &format!("/{direction}/{path}"), "fio");
    let mut ios = 0.0;
    let mut iops = 0.0;
    let mut bytes_per_sec = 0.0;
    let mut clat_ns_sum = 0.0;
    let mut clat_count = 0.0;
    for entry in entries {
        ios += field(entry, "total_ios")?;
        iops += field(entry, "iops")?;
        bytes_per_sec += field(entry, "bw_bytes")?;
        let count = field(entry, "clat_ns/N")?;
        clat_ns_sum += field(entry, "clat_ns/mean")? * count;
        clat_count += count;
    }
    if ios == 0.0 {
        return Ok(Vec::new());
    }
    let mut metrics = vec![
        Metric::higher(format!("{direction}_iops"), "ios/s", iops),
        Metric::higher(format!("{direction}_bw"), "MiB/s", bytes_per_sec / MIB),
    ];
    if clat_count > 0.0 {
        metrics.push(Metric::lower(
            format!("{direction}_clat_mean"),
            "µs",
            clat_ns_sum / clat_count / NS_PER_US,
        ));
    }
    if let [entry] = entries {
        for (key, suffix) in PERCENTILES {
            // fio omits the list with `--clat_percentiles=0` and a level
            // that a custom `--percentile_list` does not name.
            if let Some(ns) = entry[direction]["clat_ns"]["percentile"][key].as_f64() {
                metrics.push(Metric::lower(
                    format!("{direction}_clat_{suffix}"),
                    "µs",
                    ns / NS_PER_US,
                ));
            }
        }
    }
    Ok(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::command::parsers::tests::{figure, names};

    #[test]
    fn one_random_read_job_gives_its_iops_bandwidth_and_latency_percentiles() {
        let metrics = Fio
            .parse(include_str!("fixtures/fio-randread.stdout"))
            .expect("fio's report");
        assert_eq!(
            names(&metrics),
            [
                "read_iops",
                "read_bw",
                "read_clat_mean",
                "read_clat_p50",
                "read_clat_p99",
                "read_clat_p99_9"
            ]
        );
        assert_eq!(figure(&metrics, "read_iops", "ios/s"), 18582.417582);
        assert_eq!(figure(&metrics, "read_bw", "MiB/s"), 76113582.0 / MIB);
        assert_eq!(figure(&metrics, "read_clat_mean", "µs"), 52605.400301 / 1e3);
        assert_eq!(figure(&metrics, "read_clat_p50", "µs"), 31360.0 / 1e3);
        assert_eq!(figure(&metrics, "read_clat_p99", "µs"), 100864.0 / 1e3);
        assert_eq!(figure(&metrics, "read_clat_p99_9", "µs"), 5668864.0 / 1e3);
    }

    #[test]
    fn two_jobs_are_summed_after_the_notes_fio_printed_before_its_json() {
        let text = include_str!("fixtures/fio-randrw-2jobs.stdout");
        assert!(text.starts_with("note: both iodepth"));
        let metrics = Fio.parse(text).expect("fio's report");
        assert_eq!(
            names(&metrics),
            [
                "read_iops",
                "read_bw",
                "read_clat_mean",
                "write_iops",
                "write_bw",
                "write_clat_mean"
            ],
            "no percentiles: two jobs' percentiles do not merge"
        );
        assert_eq!(
            figure(&metrics, "read_iops", "ios/s"),
            14473.526474 + 14519.480519
        );
        assert_eq!(
            figure(&metrics, "write_bw", "MiB/s"),
            (25357554.0 + 25590793.0) / MIB
        );
        let jobs: Value = serde_json::from_str(&text[text.find('{').expect("json")..])
            .expect("the fixture's JSON");
        let clat = |job: usize, key: &str| jobs["jobs"][job]["write"]["clat_ns"][key].as_f64();
        let weighted = (clat(0, "mean").expect("mean") * clat(0, "N").expect("N")
            + clat(1, "mean").expect("mean") * clat(1, "N").expect("N"))
            / (clat(0, "N").expect("N") + clat(1, "N").expect("N"));
        assert_eq!(figure(&metrics, "write_clat_mean", "µs"), weighted / 1e3);
    }

    #[test]
    fn group_reporting_gives_one_entry_with_fio_s_merged_percentiles() {
        let metrics = Fio
            .parse(include_str!("fixtures/fio-randwrite-grouped.stdout"))
            .expect("fio's report");
        assert_eq!(metrics[0].name, "write_iops", "no read was done");
        assert_eq!(figure(&metrics, "write_iops", "ios/s"), 79075.289575);
        assert_eq!(figure(&metrics, "write_bw", "MiB/s"), 323892386.0 / MIB);
        assert!(names(&metrics).contains(&"write_clat_p99"));
    }

    #[test]
    fn a_job_that_failed_is_an_error_that_names_it() {
        // fio could not open /proc/version for its job and said so in the
        // job's `error`, with zero I/O everywhere.
        let err = Fio
            .parse(include_str!("fixtures/fio-job-error.stdout"))
            .unwrap_err();
        assert_eq!(err, "fio job `broken` ended with error 1");
    }

    #[test]
    fn jobs_of_two_groups_are_refused_rather_than_summed() {
        let err = Fio
            .parse(include_str!("fixtures/fio-two-groups.stdout"))
            .unwrap_err();
        assert!(err.contains("several groups"), "{err}");
    }

    #[test]
    fn a_report_without_json_says_so() {
        let err = Fio
            .parse(include_str!("fixtures/sysbench-fileio-rndrw.stdout"))
            .unwrap_err();
        assert_eq!(err, "no JSON object in fio's output");
    }

    #[test]
    fn a_report_cut_in_half_says_it_ends_early_and_where() {
        let whole = include_str!("fixtures/fio-randread.stdout");
        let half = &whole[..whole.len() / 2];
        let err = Fio.parse(half).unwrap_err();
        let lines = half.lines().count();
        assert!(
            err.starts_with(&format!("fio's JSON ends early at line {lines}, column ")),
            "{err}"
        );
        // Cut after its jobs have closed (in disk_util, or only the last
        // brace missing): a job object inside would parse whole, and must
        // not be taken for the report.
        for cut in [
            whole.rfind("\"disk_util\"").unwrap() + 20,
            whole.rfind('}').unwrap(),
        ] {
            let err = Fio.parse(&whole[..cut]).unwrap_err();
            assert!(err.starts_with("fio's JSON ends early at line "), "{err}");
        }
    }
}
