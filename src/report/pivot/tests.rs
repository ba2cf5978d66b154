//! The pivot tables on fixed runs: which tables a run makes, and their
//! terminal, Markdown and CSV text exactly.

use super::*;
use crate::analysis::pivot_grouping::{PivotChoice, tables};
use crate::report::fixtures::{demo_run, pivot_run};
use crate::results::{CaseRecord, RunRecord};

fn given(row: &str, column: &str) -> PivotChoice {
    PivotChoice::Given {
        row: row.into(),
        column: column.into(),
    }
}

#[test]
fn each_workload_gets_its_own_table_split_by_its_other_parameters() {
    let run = pivot_run(1, "alpha", 1.0);
    let tables = tables(&run, &PivotChoice::Natural);
    let summary: Vec<(String, String, String, usize, usize)> = tables
        .iter()
        .map(|t| {
            (
                t.workload.clone(),
                format!("{},{}", t.row, t.column),
                t.fixed_text(),
                t.rows.len(),
                t.columns.len(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "crypto.speed".into(),
                "algorithm,block_size".into(),
                "copies=1".into(),
                2,
                3
            ),
            (
                "crypto.speed".into(),
                "algorithm,block_size".into(),
                "copies=2".into(),
                2,
                3
            ),
            (
                "http.static".into(),
                "size,concurrency".into(),
                String::new(),
                3,
                2
            ),
        ]
    );
    // copies=2 was given as `all`: the key says so, to match other hosts.
    assert_eq!(tables[1].fixed_as_given["copies"], "all");
    assert_eq!(tables[2].cells[1][1], Cell::Failed { case: 16 });
    assert_eq!(tables[2].cells[2][1], Cell::Missing);
    // The demo run sweeps one parameter at a time: no table.
    assert!(tables_of(&demo_run(1, "a", 1.0), &PivotChoice::Natural).is_empty());
}

fn tables_of(run: &RunRecord, choice: &PivotChoice) -> Vec<PivotTable> {
    tables(run, choice)
}

#[test]
fn a_given_pair_turns_the_table_and_folds_the_other_parameters() {
    let run = pivot_run(1, "alpha", 1.0);
    let turned = tables(&run, &given("block_size", "copies"));
    // Two algorithms: two tables of three block sizes by two copies.
    assert_eq!(turned.len(), 2);
    assert_eq!(turned[0].fixed_text(), "algorithm=sha256");
    assert_eq!(turned[0].rows, ["16", "1024", "8192"]);
    assert_eq!(turned[0].columns, ["1", "2"]);
    assert!(tables(&run, &given("threads", "size")).is_empty());
}

#[test]
fn terminal_text_snapshot() {
    let run = pivot_run(1, "alpha", 1.0);
    let text = text(&tables(&run, &PivotChoice::Natural));
    assert_eq!(
        text,
        r#"
crypto.speed · mb_per_sec (MB/s, higher is better) · copies=1, mean ± 95% CI
  algorithm ↓ block_size →          16       1024        8192
  sha256                    60.0 ± 3.0   320 ± 16    400 ± 20
  aes-128-gcm                 375 ± 19  2000 ± 99  2500 ± 120
crypto.speed · mb_per_sec (MB/s, higher is better) · copies=2, mean ± 95% CI
  algorithm ↓ block_size →           16        1024        8192
  sha256                    114.0 ± 5.7    608 ± 30    760 ± 38
  aes-128-gcm                  713 ± 35  3800 ± 190  4750 ± 240
http.static · requests_per_sec (req/s, higher is better), mean ± 95% CI
  size ↓ concurrency →           1            16
  1                     9000 ± 450  60000 ± 3000
  200K                  3000 ± 150        failed
  2M                      800 ± 40             -
"#
        .strip_prefix('\n')
        .unwrap()
    );
}

#[test]
fn wide_tables_split_their_columns_within_the_width() {
    let mut run = pivot_run(1, "alpha", 1000.0);
    // Eight block sizes: too wide for one grid.
    let extra: Vec<CaseRecord> = ["32", "64", "128", "256", "512"]
        .iter()
        .flat_map(|b| {
            run.cases[..12].iter().map(move |c| {
                let mut c = c.clone();
                c.params.insert("block_size".into(), b.to_string());
                c
            })
        })
        .collect();
    run.cases.extend(extra);
    let text = text(&tables(&run, &given("algorithm", "block_size")));
    assert!(
        text.lines().all(|l| l.chars().count() <= REPORT_WIDTH),
        "{text}"
    );
    let corners = text.lines().filter(|l| l.contains("algorithm ↓")).count();
    assert_eq!(corners, 4, "two tables of two grids each: {text}");
}

#[test]
fn markdown_snapshot() {
    let run = pivot_run(1, "alpha", 1.0);
    let text = markdown(&tables(&run, &PivotChoice::Natural));
    assert_eq!(
        text,
        r#"

**crypto.speed · mb_per_sec (MB/s, higher is better) · copies=1**, mean ± 95% CI

| algorithm ↓ block_size → | 16 | 1024 | 8192 |
|---|---:|---:|---:|
| sha256 | 60.0 ± 3.0 | 320 ± 16 | 400 ± 20 |
| aes-128-gcm | 375 ± 19 | 2000 ± 99 | 2500 ± 120 |

**crypto.speed · mb_per_sec (MB/s, higher is better) · copies=2**, mean ± 95% CI

| algorithm ↓ block_size → | 16 | 1024 | 8192 |
|---|---:|---:|---:|
| sha256 | 114.0 ± 5.7 | 608 ± 30 | 760 ± 38 |
| aes-128-gcm | 713 ± 35 | 3800 ± 190 | 4750 ± 240 |

**http.static · requests_per_sec (req/s, higher is better)**, mean ± 95% CI

| size ↓ concurrency → | 1 | 16 |
|---|---:|---:|
| 1 | 9000 ± 450 | 60000 ± 3000 |
| 200K | 3000 ± 150 | failed |
| 2M | 800 ± 40 | - |
"#
        .strip_prefix('\n')
        .unwrap()
    );
}

#[test]
fn csv_snapshot() {
    let run = pivot_run(1, "alpha", 1.0);
    let text = csv(&tables(&run, &PivotChoice::Natural)).unwrap();
    assert_eq!(text, r#"
workload,parameters,metric,unit,algorithm,block_size=16 mean,block_size=16 ci_low,block_size=16 ci_high,block_size=1024 mean,block_size=1024 ci_low,block_size=1024 ci_high,block_size=8192 mean,block_size=8192 ci_low,block_size=8192 ci_high
crypto.speed,copies=1,mb_per_sec,MB/s,sha256,60,57.019034745899596,62.980965254100404,320,304.1015186447979,335.8984813552021,400,380.1268983059973,419.8731016940027
crypto.speed,copies=1,mb_per_sec,MB/s,aes-128-gcm,375,356.3689671618725,393.6310328381275,2000,1900.6344915299867,2099.3655084700135,2500,2375.793114412483,2624.206885587517
crypto.speed,copies=2,mb_per_sec,MB/s,sha256,114,108.33616601720924,119.66383398279076,608,577.7928854251161,638.2071145748839,760,722.2411067813948,797.7588932186052
crypto.speed,copies=2,mb_per_sec,MB/s,aes-128-gcm,712.5,677.1010376075577,747.8989623924423,3800,3611.205533906975,3988.794466093025,4750,4514.006917383718,4985.993082616282

workload,parameters,metric,unit,size,concurrency=1 mean,concurrency=1 ci_low,concurrency=1 ci_high,concurrency=16 mean,concurrency=16 ci_low,concurrency=16 ci_high
http.static,,requests_per_sec,req/s,1,9000,8552.85521188494,9447.14478811506,60000,57019.0347458996,62980.9652541004
http.static,,requests_per_sec,req/s,200K,3000,2850.95173729498,3149.04826270502,,,
http.static,,requests_per_sec,req/s,2M,800,760.2537966119946,839.7462033880054,,,
"#.strip_prefix('\n').unwrap());
}

#[test]
fn the_full_view_shows_each_workloads_tables_after_its_cases() {
    use crate::report::summary::{self, Defaults};
    use crate::visible::Escaped;
    let run = Escaped::new(pivot_run(1, "alpha", 1.0));
    let full = summary::render(&run, &Defaults::new());
    let crypto_table = full
        .find("crypto.speed · mb_per_sec (MB/s, higher is better) · copies=1, mean")
        .unwrap();
    let http_section = full.find("\nhttp.static · requests_per_sec").unwrap();
    let http_table = full
        .find("http.static · requests_per_sec (req/s, higher is better), mean")
        .unwrap();
    assert!(
        crypto_table < http_section && http_section < http_table,
        "{full}"
    );
    // A given pair replaces the workloads' own tables.
    let turned = summary::render_pivoted(&run, &Defaults::new(), &given("block_size", "copies"));
    assert!(turned.contains("  block_size ↓ copies →"), "{turned}");
    assert!(!turned.contains("algorithm ↓"), "{turned}");
}
