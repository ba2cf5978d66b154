//! Figures a user reads from a command's output: `-p metric=...`.
//!
//! A metric is `NAME:UNIT:higher|lower:regex:PATTERN` (the last match of
//! the pattern in the output, its first group if it has one) or
//! `NAME:UNIT:higher|lower:json:/POINTER` (a JSON pointer, RFC 6901, into
//! the output read as one JSON document); several are separated by `;;`.
//! The pattern is the rest of the text, colons included. The last match,
//! not the first: tools print progress before their summary.

use regex::Regex;

use crate::engine::Metric;
use crate::stats::Direction;

/// Where a metric's value is in the output.
#[derive(Debug, Clone)]
enum Source {
    /// The last match of a regular expression (its first group, if any).
    Regex(Regex),
    /// A JSON pointer into the output as one JSON document.
    Json(String),
}

/// One metric to read from a command's output.
#[derive(Debug, Clone)]
pub struct OutputMetric {
    name: String,
    unit: String,
    direction: Direction,
    source: Source,
}

/// The figures every trial of a command stores whatever it prints
/// (`case.rs`): a metric read from the output may not take their names.
pub const TIMED_METRICS: &[&str] = &["wall", "user", "system", "max_rss", "exit_status"];

/// The separator between two metrics in one `metric=` value.
const SEPARATOR: &str = ";;";

/// What one metric's text looks like, for messages.
const FORM: &str = "NAME:UNIT:higher|lower:regex:PATTERN or NAME:UNIT:higher|lower:json:/POINTER (several separated by ;;), for example rps:req/s:higher:regex:([0-9.]+) requests per second";

impl OutputMetric {
    /// The metrics of a `metric=` value; none for an empty one. A name
    /// given twice, or one a trial stores anyway (`wall`, ...), is refused:
    /// two figures of one name would be stored as one, and the
    /// measured time would be lost under the output's.
    pub fn parse_all(text: &str) -> Result<Vec<OutputMetric>, String> {
        let metrics: Vec<OutputMetric> = text
            .split(SEPARATOR)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(OutputMetric::parse)
            .collect::<Result<_, _>>()?;
        for (i, metric) in metrics.iter().enumerate() {
            if TIMED_METRICS.contains(&metric.name()) {
                return Err(format!(
                    "metric `{}`: every trial stores {} itself; give this metric another name",
                    metric.name(),
                    TIMED_METRICS.join(", ")
                ));
            }
            if metrics[..i].iter().any(|m| m.name() == metric.name()) {
                return Err(format!(
                    "metric `{}` is given twice; each metric needs a name of its own",
                    metric.name()
                ));
            }
        }
        Ok(metrics)
    }

    fn parse(text: &str) -> Result<OutputMetric, String> {
        let mut fields = text.splitn(5, ':');
        let (Some(name), Some(unit), Some(direction), Some(kind), Some(pattern)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            return Err(format!("metric `{text}`: give {FORM}"));
        };
        let name = name.trim();
        if !super::template::is_name(name) {
            return Err(format!(
                "metric `{text}`: the name `{name}` must be lowercase letters, digits and _ (starting with a letter)"
            ));
        }
        let direction = match direction.trim() {
            "higher" => Direction::Higher,
            "lower" => Direction::Lower,
            other => {
                return Err(format!(
                    "metric `{text}`: `{other}` is not higher or lower (which way is better)"
                ));
            }
        };
        let unit = crate::results::Unit::parse(unit.trim());
        if let Some(natural) = unit.natural_direction()
            && natural != direction
        {
            return Err(format!(
                "metric `{name}`: in {unit} {} is better, as for every figure in that unit; give {} (or another unit)",
                direction_word(natural),
                direction_word(natural)
            ));
        }
        let source = match kind.trim() {
            "regex" => Source::Regex(
                Regex::new(pattern)
                    .map_err(|e| format!("metric `{name}`: the pattern does not compile: {e}"))?,
            ),
            "json" => {
                if !pattern.is_empty() && !pattern.starts_with('/') {
                    return Err(format!(
                        "metric `{name}`: a JSON pointer starts with / (`/jobs/0/read/iops`), not `{pattern}`"
                    ));
                }
                Source::Json(pattern.to_string())
            }
            other => {
                return Err(format!(
                    "metric `{name}`: `{other}` is not regex or json; give {FORM}"
                ));
            }
        };
        Ok(OutputMetric {
            name: name.to_string(),
            unit: unit.as_str().to_string(),
            direction,
            source,
        })
    }

    /// The metric's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The metric's value in `output`, or an error that says what was
    /// looked for and shows the output's start.
    pub fn read(&self, output: &str) -> Result<Metric, String> {
        let text = match &self.source {
            Source::Regex(regex) => {
                let found = regex
                    .captures_iter(output)
                    .last()
                    .and_then(|c| c.get(1).or_else(|| c.get(0)))
                    .ok_or_else(|| {
                        format!(
                            "metric `{}`: the pattern `{}` matched nothing in the output{}",
                            self.name,
                            regex.as_str(),
                            excerpt(output)
                        )
                    })?;
                found.as_str().trim().to_string()
            }
            Source::Json(pointer) => {
                let document: serde_json::Value =
                    serde_json::from_str(json_part(output)).map_err(|e| {
                        format!(
                            "metric `{}`: the output is not one JSON document ({e}){}",
                            self.name,
                            excerpt(output)
                        )
                    })?;
                match document.pointer(pointer) {
                    Some(serde_json::Value::Number(n)) => n.to_string(),
                    Some(serde_json::Value::String(s)) => s.clone(),
                    Some(other) => {
                        return Err(format!(
                            "metric `{}`: {pointer} is {}, not a number",
                            self.name,
                            kind_of(other)
                        ));
                    }
                    None => {
                        return Err(format!(
                            "metric `{}`: the output's JSON has nothing at {pointer}",
                            self.name
                        ));
                    }
                }
            }
        };
        let value: f64 = text.parse().map_err(|_| {
            format!(
                "metric `{}`: `{text}` is not a number (give the pattern a group around the number alone)",
                self.name
            )
        })?;
        if !value.is_finite() {
            return Err(format!(
                "metric `{}`: `{text}` is not a finite number",
                self.name
            ));
        }
        Ok(match self.direction {
            Direction::Higher => Metric::higher(self.name.clone(), self.unit.clone(), value),
            Direction::Lower => Metric::lower(self.name.clone(), self.unit.clone(), value),
        })
    }
}

fn direction_word(direction: Direction) -> &'static str {
    match direction {
        Direction::Higher => "higher",
        Direction::Lower => "lower",
    }
}

/// The JSON document in an output that may have lines before it (fio's
/// warnings): from the first `{` or `[` that starts a line.
fn json_part(output: &str) -> &str {
    let trimmed = output.trim_start();
    if trimmed.starts_with(['{', '[']) {
        return trimmed;
    }
    output
        .match_indices('\n')
        .map(|(at, _)| at + 1)
        .find(|&at| output[at..].starts_with(['{', '[']))
        .map_or(output, |at| &output[at..])
}

fn kind_of(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
        serde_json::Value::Number(_) | serde_json::Value::String(_) => "a value",
    }
}

/// The output's first 200 characters, for an error, or a note that it
/// was empty.
fn excerpt(output: &str) -> String {
    if output.trim().is_empty() {
        return " (the output was empty)".to_string();
    }
    let shown: String = output.chars().take(200).collect();
    let more = if shown.len() < output.len() {
        "…"
    } else {
        ""
    };
    format!(" (it began: {:?}{more})", shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regex_reads_the_last_match_and_its_group() {
        let metrics = OutputMetric::parse_all(
            "rps:req/s:higher:regex:SET: ([0-9.]+) requests ;; took:s:lower:regex:took [0-9.]+",
        )
        .unwrap();
        let out = "SET: 10.5 requests per second\nSET: 99.25 requests per second\ntook 3";
        let rps = metrics[0].read(out).unwrap();
        assert_eq!((rps.name.as_str(), rps.value), ("rps", 99.25));
        assert_eq!(rps.direction, Direction::Higher);
        let err = metrics[1].read(out).unwrap_err();
        assert!(err.contains("`took 3` is not a number"), "{err}");
    }

    #[test]
    fn a_json_pointer_reads_a_number_after_leading_lines() {
        let metric = OutputMetric::parse_all("iops:IOPS:higher:json:/jobs/0/read/iops").unwrap();
        let out = "note: a warning first\n{\"jobs\": [{\"read\": {\"iops\": 1234.5, \"x\": [1]}}]}";
        assert_eq!(metric[0].read(out).unwrap().value, 1234.5);
        let missing = OutputMetric::parse_all("w:IOPS:higher:json:/jobs/0/write/iops").unwrap();
        let err = missing[0].read(out).unwrap_err();
        assert!(err.contains("has nothing at /jobs/0/write/iops"), "{err}");
        let not_json = metric[0].read("plain text").unwrap_err();
        assert!(not_json.contains("not one JSON document"), "{not_json}");
    }

    #[test]
    fn a_pattern_that_never_matches_says_what_the_output_held() {
        let metric = OutputMetric::parse_all("x:s:lower:regex:nope ([0-9]+)").unwrap();
        let err = metric[0].read("something else").unwrap_err();
        assert!(err.contains("matched nothing"), "{err}");
        assert!(err.contains("something else"), "{err}");
        assert!(metric[0].read("").unwrap_err().contains("was empty"));
    }

    #[test]
    fn bad_specs_are_named() {
        for (text, expect) in [
            ("rps", "give NAME:UNIT"),
            ("Rps:x:higher:regex:a", "lowercase"),
            ("rps:x:up:regex:a", "not higher or lower"),
            ("rps:x:higher:xpath:a", "not regex or json"),
            ("rps:x:higher:regex:(", "does not compile"),
            ("rps:x:higher:json:jobs", "starts with /"),
            ("took:s:higher:regex:a", "in s lower is better"),
            (
                "wall:s:lower:regex:([0-9]+)",
                "every trial stores wall, user",
            ),
            (
                "a:s:lower:regex:([0-9]+);;a:s:lower:regex:([0-9]+)",
                "`a` is given twice",
            ),
        ] {
            let err = OutputMetric::parse_all(text).unwrap_err();
            assert!(err.contains(expect), "{text}: {err}");
        }
        assert!(OutputMetric::parse_all("").unwrap().is_empty());
    }
}
