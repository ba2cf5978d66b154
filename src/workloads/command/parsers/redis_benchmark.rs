//! redis-benchmark's CSV (`--csv`).
//!
//! Redis 7 prints a header, `"test","rps","avg_latency_ms",
//! "min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms",
//! "max_latency_ms"`, then a row per test. Every figure is stored as
//! `<test>_<column>`, both as the tool names them: `SET_rps` (req/s) and
//! `SET_avg_latency_ms`, `SET_p99_latency_ms`... (ms). A test whose name
//! has spaces or parentheses keeps its letters and digits, each run of
//! anything else one `_` (`LRANGE_100 (first 100 elements)` gives
//! `LRANGE_100_first_100_elements_rps`). The first test's `rps` is the
//! headline.
//!
//! Redis 6 and older printed two columns and no header, `"SET","20202.02"`:
//! that gives `SET_rps` alone.

use std::collections::HashSet;

use super::figures::{metric_word, number};
use super::tool_parser::ToolParser;
use crate::engine::Metric;

/// redis-benchmark's `--csv`.
pub struct RedisBenchmark;

/// The rate column; every other figure is a latency in a `_ms` column.
const RATE_COLUMN: &str = "rps";

impl ToolParser for RedisBenchmark {
    fn name(&self) -> &'static str {
        "redis-benchmark"
    }

    fn programs(&self) -> &'static [&'static str] {
        &["redis-benchmark"]
    }

    fn needs(&self) -> &'static str {
        "--csv"
    }

    fn parse(&self, stdout: &str) -> Result<Vec<Metric>, String> {
        let mut columns = vec![String::from("test"), String::from(RATE_COLUMN)];
        let mut metrics = Vec::new();
        let mut tests = HashSet::new();
        for line in stdout.lines().filter(|line| line.starts_with('"')) {
            let fields = csv_fields(line)
                .ok_or_else(|| format!("redis-benchmark's CSV line `{line}` is not quoted CSV"))?;
            if fields.first().is_some_and(|first| first == "test") {
                columns = fields;
                continue;
            }
            if fields.len() != columns.len() {
                return Err(format!(
                    "redis-benchmark's CSV line `{line}` has {} fields, its header {}",
                    fields.len(),
                    columns.len()
                ));
            }
            let test = metric_word(&fields[0]);
            if test.is_empty() || !tests.insert(test.clone()) {
                return Err(format!(
                    "redis-benchmark's test `{}` is empty or listed twice",
                    fields[0]
                ));
            }
            for (column, field) in columns.iter().zip(&fields).skip(1) {
                let value = number(field).ok_or_else(|| {
                    format!(
                        "redis-benchmark's `{column}` of `{}` is `{field}`",
                        fields[0]
                    )
                })?;
                let name = format!("{test}_{column}");
                if column == RATE_COLUMN {
                    metrics.push(Metric::higher(name, "req/s", value));
                } else if column.ends_with("_ms") {
                    metrics.push(Metric::lower(name, "ms", value));
                }
            }
        }
        if metrics.is_empty() {
            return Err(
                "no CSV rows (`\"SET\",\"20202.02\",...`) in redis-benchmark's output".to_string(),
            );
        }
        Ok(metrics)
    }
}

/// The fields of a line of quoted CSV as redis-benchmark writes it
/// (`"a","b"`, a doubled quote inside a field being one quote), or `None`
/// for anything else.
fn csv_fields(line: &str) -> Option<Vec<String>> {
    let mut fields = Vec::new();
    let mut rest = line.trim_end();
    loop {
        rest = rest.strip_prefix('"')?;
        let mut field = String::new();
        loop {
            let end = rest.find('"')?;
            field.push_str(&rest[..end]);
            rest = &rest[end + 1..];
            match rest.strip_prefix('"') {
                Some(after) => {
                    field.push('"');
                    rest = after;
                }
                None => break,
            }
        }
        fields.push(field);
        if rest.is_empty() {
            return Some(fields);
        }
        rest = rest.strip_prefix(',')?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::command::parsers::tests::{figure, names};

    const COLUMNS: [&str; 7] = [
        "rps",
        "avg_latency_ms",
        "min_latency_ms",
        "p50_latency_ms",
        "p95_latency_ms",
        "p99_latency_ms",
        "max_latency_ms",
    ];

    #[test]
    fn every_test_gives_its_rate_and_latency_columns_under_the_tool_s_names() {
        let metrics = RedisBenchmark
            .parse(include_str!("fixtures/redis-benchmark-csv.stdout"))
            .expect("redis-benchmark's CSV");
        let expected: Vec<String> = ["SET", "GET", "LPUSH"]
            .iter()
            .flat_map(|test| COLUMNS.iter().map(move |c| format!("{test}_{c}")))
            .collect();
        assert_eq!(names(&metrics), expected);
        assert_eq!(figure(&metrics, "SET_rps", "req/s"), 20202.02);
        assert_eq!(figure(&metrics, "GET_p50_latency_ms", "ms"), 0.039);
        assert_eq!(figure(&metrics, "GET_p99_latency_ms", "ms"), 4.103);
        assert_eq!(figure(&metrics, "LPUSH_max_latency_ms", "ms"), 83.583);
    }

    #[test]
    fn test_names_with_spaces_keep_their_words() {
        let metrics = RedisBenchmark
            .parse(include_str!("fixtures/redis-benchmark-csv-lrange.stdout"))
            .expect("redis-benchmark's CSV");
        assert_eq!(figure(&metrics, "LPUSH_rps", "req/s"), 17857.14);
        assert_eq!(
            figure(&metrics, "LPUSH_needed_to_benchmark_LRANGE_rps", "req/s"),
            14705.88
        );
        assert_eq!(
            figure(
                &metrics,
                "LRANGE_100_first_100_elements_p95_latency_ms",
                "ms"
            ),
            3.071
        );
        assert_eq!(figure(&metrics, "MSET_10_keys_rps", "req/s"), 11363.64);
        assert_eq!(metrics[0].name, "PING_INLINE_rps");
    }

    #[test]
    fn redis_6_s_two_columns_give_the_rates() {
        // Redis 6's `--csv` (its benchmark.c: `"%s","%.2f"`), with this
        // machine's figures.
        let metrics = RedisBenchmark
            .parse("\"SET\",\"20202.02\"\n\"GET\",\"22222.22\"\n")
            .expect("redis-benchmark's CSV");
        assert_eq!(names(&metrics), ["SET_rps", "GET_rps"]);
        assert_eq!(figure(&metrics, "GET_rps", "req/s"), 22222.22);
    }

    #[test]
    fn the_text_report_is_refused_with_what_is_expected() {
        let err = RedisBenchmark
            .parse(include_str!("fixtures/wrk.stdout"))
            .unwrap_err();
        assert!(err.starts_with("no CSV rows"), "{err}");
    }

    #[test]
    fn a_row_shorter_than_its_header_is_an_error() {
        let text = include_str!("fixtures/redis-benchmark-csv.stdout");
        let cut = text.replace(",\"8.191\"", "");
        let err = RedisBenchmark.parse(&cut).unwrap_err();
        assert!(err.contains("has 7 fields, its header 8"), "{err}");
    }
}
