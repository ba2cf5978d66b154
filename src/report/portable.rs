//! The portable run document: what `sledge export` writes and `sledge
//! import` reads, so that runs made on different machines (each with its
//! own store) can meet in one store and be compared.
//!
//! One JSON object:
//!
//! ```text
//! { kind: "sledge-runs", format_version: 1, exported: RFC 3339 time,
//!   sledge_version, runs: [ run ] }
//! ```
//!
//! Each run has the documented shape of `sledge show --json` (`results.rs`:
//! raw samples, outlier flags and trial health included) and its UUID; a
//! case with a latency histogram also has `latency_histogram`: the
//! HdrHistogram (nanoseconds) in the V2 + deflate serialization, base64
//! encoded, which is the form HdrHistogram's own log files use.
//!
//! Reading is strict and says what is wrong with which file before anything
//! is stored: the wrong kind of document, a newer format version, text that
//! is not JSON or ends early, a missing field, a histogram that does not
//! decode. Non-finite numbers, which JSON cannot hold, are written as
//! `null` and read back as NaN.

use std::io::Read;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hdrhistogram::serialization::Deserializer;
use serde::Serialize;
use serde_json::Value;

use crate::results::{CaseRecord, RunRecord};

/// The `kind` of an export document.
pub const DOCUMENT_KIND: &str = "sledge-runs";

/// The format version this build writes and the newest it reads. Bumped
/// when a change would make older sledges misread a document; fields added
/// with defaults do not bump it.
pub const FORMAT_VERSION: u64 = 1;

/// The largest document `sledge import` reads: 256 MiB. A quick run exports
/// to about 1 MiB and the largest profile to a few MiB, so this leaves room
/// for hundreds of runs in one file while refusing to pull a stray
/// multi-gigabyte file into memory.
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// The member of an exported case that holds its latency histogram.
const HISTOGRAM_FIELD: &str = "latency_histogram";

/// The head of the document, in the order it is written.
#[derive(Serialize)]
struct DocumentHead<'a> {
    kind: &'a str,
    format_version: u64,
    exported: &'a str,
    sledge_version: &'a str,
    runs: Vec<Value>,
}

/// The export document of `runs`, as JSON with a final newline: compact,
/// or indented for people when `pretty` (about twice the size, which could
/// take a large export past what `import` reads). `exported` is the time
/// of the export (RFC 3339).
pub fn export(runs: &[RunRecord], exported: &str, pretty: bool) -> anyhow::Result<String> {
    let mut values = Vec::with_capacity(runs.len());
    for run in runs {
        let mut value = serde_json::to_value(run)?;
        let cases = value
            .get_mut("cases")
            .and_then(Value::as_array_mut)
            .ok_or_else(|| anyhow::anyhow!("run {} serialized without cases", run.id))?;
        for (case, json) in run.cases.iter().zip(cases.iter_mut()) {
            if let (Some(bytes), Some(object)) = (&case.latency_histogram, json.as_object_mut()) {
                object.insert(HISTOGRAM_FIELD.into(), Value::String(BASE64.encode(bytes)));
            }
        }
        values.push(value);
    }
    let head = DocumentHead {
        kind: DOCUMENT_KIND,
        format_version: FORMAT_VERSION,
        exported,
        sledge_version: env!("CARGO_PKG_VERSION"),
        runs: values,
    };
    let text = if pretty {
        serde_json::to_string_pretty(&head)?
    } else {
        serde_json::to_string(&head)?
    };
    Ok(text + "\n")
}

/// Why a document cannot be imported. Every message starts with the file.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file cannot be opened or read.
    #[error("{file}: cannot read it: {source}")]
    Read {
        /// The file as the user named it.
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The path is a directory.
    #[error(
        "{file}: is a directory; give the export file itself (made by `sledge export -o FILE`)"
    )]
    Directory {
        /// The file as the user named it.
        file: String,
    },
    /// The file is larger than [`MAX_DOCUMENT_BYTES`].
    #[error(
        "{file}: is {size} bytes, more than the {limit} bytes an export document may have; it is not a sledge export, or split the export into several files"
    )]
    TooLarge {
        /// The file as the user named it.
        file: String,
        /// Its size (or how much was read before giving up).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The file holds nothing.
    #[error("{file}: is empty, not a sledge export (make one with `sledge export RUN -o FILE`)")]
    Empty {
        /// The file as the user named it.
        file: String,
    },
    /// The JSON text ends before the document does.
    #[error(
        "{file}: ends early at line {line}, column {column}: the file is truncated (copy it again)"
    )]
    Truncated {
        /// The file as the user named it.
        file: String,
        /// Where the text ended.
        line: usize,
        /// Where the text ended.
        column: usize,
    },
    /// The text is not JSON.
    #[error("{file}: is not JSON ({reason}), so not a sledge export")]
    NotJson {
        /// The file as the user named it.
        file: String,
        /// serde_json's message, with line and column.
        reason: String,
    },
    /// JSON, but not an export document.
    #[error("{file}: is not a sledge export: {reason}")]
    WrongKind {
        /// The file as the user named it.
        file: String,
        /// What was found instead.
        reason: String,
    },
    /// An export from a newer sledge.
    #[error(
        "{file}: has format version {found}, newer than the {supported} this sledge reads; import it with a newer sledge"
    )]
    TooNew {
        /// The file as the user named it.
        file: String,
        /// The version in the file.
        found: u64,
        /// The newest version this build reads.
        supported: u64,
    },
    /// A run or case does not have the documented shape.
    #[error("{file}: {at}: {reason}")]
    Invalid {
        /// The file as the user named it.
        file: String,
        /// Where in the document (`runs[0].cases[2] (cpu.primes threads=2)`).
        at: String,
        /// What is wrong.
        reason: String,
    },
}

/// Reads a document from `path` (or standard input for `-`), refusing
/// directories and anything larger than `limit` bytes without reading it
/// whole.
pub fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, ImportError> {
    let file = path.display().to_string();
    let read_err = |source| ImportError::Read {
        file: file.clone(),
        source,
    };
    let too_large = |size| ImportError::TooLarge {
        file: file.clone(),
        size,
        limit,
    };
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(read_err)?;
    } else {
        let meta = std::fs::metadata(path).map_err(read_err)?;
        if meta.is_dir() {
            return Err(ImportError::Directory { file });
        }
        if meta.is_file() && meta.len() > limit {
            return Err(too_large(meta.len()));
        }
        // Pipes and devices report no size: read at most one byte past the
        // limit to know whether they exceed it.
        std::fs::File::open(path)
            .and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
            .map_err(read_err)?;
    }
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Parses and checks a whole document; `file` names it in errors. The runs
/// come back as they will be stored (ids are the exporting store's and are
/// ignored by the import).
pub fn parse(bytes: &[u8], file: &str) -> Result<Vec<RunRecord>, ImportError> {
    let file = file.to_string();
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ImportError::Empty { file });
    }
    let document: Value = serde_json::from_slice(bytes).map_err(|e| {
        if e.is_eof() {
            ImportError::Truncated {
                file: file.clone(),
                line: e.line(),
                column: e.column(),
            }
        } else {
            ImportError::NotJson {
                file: file.clone(),
                reason: e.to_string(),
            }
        }
    })?;
    let wrong_kind = |reason: String| ImportError::WrongKind {
        file: file.clone(),
        reason,
    };
    let Value::Object(mut document) = document else {
        return Err(wrong_kind(format!(
            "it holds {}, not an object with `kind: \"{DOCUMENT_KIND}\"`",
            json_type(&document)
        )));
    };
    match document.get("kind") {
        Some(Value::String(kind)) if kind == DOCUMENT_KIND => {}
        Some(other) => {
            return Err(wrong_kind(format!(
                "its kind is {other}, expected \"{DOCUMENT_KIND}\""
            )));
        }
        None if document.contains_key("cases") && document.contains_key("started") => {
            return Err(wrong_kind(
                "it is one run as `sledge show --json` prints it; export runs with `sledge export RUN -o FILE`"
                    .to_string(),
            ));
        }
        None => {
            return Err(wrong_kind(format!(
                "it has no `kind` member (expected \"{DOCUMENT_KIND}\")"
            )));
        }
    }
    let version = match document.get("format_version") {
        Some(Value::Number(n)) => n.as_u64().filter(|&v| v >= 1),
        _ => None,
    };
    let Some(version) = version else {
        return Err(wrong_kind(format!(
            "its format_version is {}, expected a whole number from 1",
            document
                .get("format_version")
                .map_or("missing".to_string(), Value::to_string)
        )));
    };
    if version > FORMAT_VERSION {
        return Err(ImportError::TooNew {
            file,
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let runs = match document.remove("runs") {
        Some(Value::Array(runs)) => runs,
        Some(other) => {
            return Err(ImportError::Invalid {
                file,
                at: "runs".into(),
                reason: format!("is {}, expected an array of runs", json_type(&other)),
            });
        }
        None => {
            return Err(ImportError::Invalid {
                file,
                at: "runs".into(),
                reason: "missing".into(),
            });
        }
    };
    runs.into_iter()
        .enumerate()
        .map(|(i, run)| {
            parse_run(run, &format!("runs[{i}]")).map_err(|(at, reason)| ImportError::Invalid {
                file: file.clone(),
                at,
                reason,
            })
        })
        .collect()
}

/// One run of the document; errors carry where they are and what is wrong.
fn parse_run(value: Value, at: &str) -> Result<RunRecord, (String, String)> {
    let here = |reason: String| (at.to_string(), reason);
    let Value::Object(mut run) = value else {
        return Err(here(format!("is {}, expected a run", json_type(&value))));
    };
    let cases = match run.insert("cases".into(), Value::Array(Vec::new())) {
        Some(Value::Array(cases)) => cases,
        Some(other) => {
            return Err(here(format!(
                "cases is {}, expected an array",
                json_type(&other)
            )));
        }
        None => return Err(here("missing field `cases`".into())),
    };
    if let Some(host) = run.get_mut("host") {
        drop_null_members(host);
    }
    let mut record: RunRecord =
        serde_json::from_value(Value::Object(run)).map_err(|e| here(e.to_string()))?;
    if uuid::Uuid::try_parse(&record.uuid).is_err() {
        return Err(here(if record.uuid.is_empty() {
            "missing field `uuid`".to_string()
        } else {
            format!("uuid `{}` is not a UUID", record.uuid)
        }));
    }
    for (i, case) in cases.into_iter().enumerate() {
        record
            .cases
            .push(parse_case(case, &format!("{at}.cases[{i}]"))?);
    }
    Ok(record)
}

/// One case: the documented shape plus its base64 histogram.
fn parse_case(value: Value, at: &str) -> Result<CaseRecord, (String, String)> {
    let Value::Object(mut case) = value else {
        return Err((
            at.to_string(),
            format!("is {}, expected a case", json_type(&value)),
        ));
    };
    // Name the case in errors when it has a name.
    let at = match case.get("workload").and_then(Value::as_str) {
        Some(workload) => format!("{at} ({workload})"),
        None => at.to_string(),
    };
    let here = |reason: String| (at.clone(), reason);
    let histogram = match case.remove(HISTOGRAM_FIELD) {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(decode_histogram(&text).map_err(&here)?),
        Some(other) => {
            return Err(here(format!(
                "{HISTOGRAM_FIELD} is {}, expected base64 text",
                json_type(&other)
            )));
        }
    };
    for trial in case
        .get_mut("trials")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(health) = trial.get_mut("health") {
            drop_null_members(health);
        }
    }
    let mut record: CaseRecord =
        serde_json::from_value(Value::Object(case)).map_err(|e| here(e.to_string()))?;
    record.latency_histogram = histogram;
    for metric in &record.metrics {
        if metric.outliers.len() > metric.samples.len() {
            return Err(here(format!(
                "metric {} has {} outlier flags for {} samples",
                metric.name,
                metric.outliers.len(),
                metric.samples.len()
            )));
        }
    }
    if record.trials.windows(2).any(|w| w[1].index <= w[0].index) {
        return Err(here("trial indexes do not increase".into()));
    }
    Ok(record)
}

/// Decodes a base64 V2 (+ deflate) histogram and checks that it is one.
fn decode_histogram(text: &str) -> Result<Vec<u8>, String> {
    let bytes = BASE64
        .decode(text.trim())
        .map_err(|e| format!("{HISTOGRAM_FIELD} is not base64: {e}"))?;
    Deserializer::new()
        .deserialize::<u64, _>(&mut bytes.as_slice())
        .map_err(|e| format!("{HISTOGRAM_FIELD} is not an HdrHistogram V2 serialization: {e:?}"))?;
    Ok(bytes)
}

/// Removes object members that are `null`, recursively. The host inventory
/// and trial health are all-default structs whose non-finite numbers were
/// written as `null`; without the member they read back as the default,
/// exactly as the store reads its own copy (`store/read.rs`).
fn drop_null_members(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_null_members);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_members),
        _ => {}
    }
}

/// `an array`, `a string`...: a JSON value's type for messages.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::demo_run;

    fn document(runs: &[RunRecord]) -> String {
        export(runs, "2026-03-01T12:00:00Z", false).unwrap()
    }

    fn error(text: &str) -> String {
        parse(text.as_bytes(), "runs.json").unwrap_err().to_string()
    }

    #[test]
    fn a_document_reads_back_as_the_runs_it_was_made_of() {
        let mut a = demo_run(1, "alpha", 1.0);
        let b = demo_run(2, "beta", 2.0);
        // A non-finite value survives (JSON has no NaN; it goes as null).
        a.cases[0].metrics[0].samples[1] = f64::NAN;
        a.cases[0].metrics[0].summary.stddev = f64::NAN;
        let text = document(&[a.clone(), b.clone()]);
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["kind"], DOCUMENT_KIND);
        assert_eq!(value["format_version"], FORMAT_VERSION);
        assert_eq!(value["exported"], "2026-03-01T12:00:00Z");
        let http = &value["runs"][0]["cases"][12];
        assert_eq!(http["workload"], "http.static");
        assert!(http[HISTOGRAM_FIELD].as_str().unwrap().starts_with("HISTF"));
        assert!(value["runs"][0]["cases"][0].get(HISTOGRAM_FIELD).is_none());

        let back = parse(text.as_bytes(), "runs.json").unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[1], b);
        // NaN != NaN, so compare the odd values apart.
        let metric = &back[0].cases[0].metrics[0];
        assert!(metric.samples[1].is_nan() && metric.summary.stddev.is_nan());
        let mut expected = a;
        let mut got = back[0].clone();
        for run in [&mut expected, &mut got] {
            run.cases[0].metrics[0].samples[1] = 0.0;
            run.cases[0].metrics[0].summary.stddev = 0.0;
        }
        assert_eq!(got, expected);
        assert_eq!(
            got.cases[12].latency_histogram,
            expected.cases[12].latency_histogram
        );
    }

    #[test]
    fn empty_truncated_and_non_json_files_are_named_and_explained() {
        for empty in ["", "  \n"] {
            let e = error(empty);
            assert!(e.starts_with("runs.json: is empty"), "{e}");
        }
        let whole = document(&[demo_run(1, "alpha", 1.0)]);
        let e = error(&whole[..whole.len() / 2]);
        assert!(e.starts_with("runs.json: ends early at line"), "{e}");
        assert!(e.contains("truncated"), "{e}");
        let e = error("run,workload\n1,cpu.primes\n");
        assert!(e.starts_with("runs.json: is not JSON"), "{e}");
        let e = parse(&[0xff, 0xfe, 0x00], "bin").unwrap_err().to_string();
        assert!(e.starts_with("bin: is not JSON"), "{e}");
    }

    #[test]
    fn other_documents_are_refused_with_what_they_are() {
        let e = error("[1, 2]");
        assert!(
            e.contains("is not a sledge export: it holds an array"),
            "{e}"
        );
        let e = error(r#"{"kind": "phoronix-result", "format_version": 1, "runs": []}"#);
        assert!(e.contains(r#"its kind is "phoronix-result""#), "{e}");
        let e = error(r#"{"format_version": 1, "runs": []}"#);
        assert!(e.contains("no `kind` member"), "{e}");
        let shown = serde_json::to_string(&demo_run(1, "alpha", 1.0)).unwrap();
        let e = error(&shown);
        assert!(e.contains("`sledge show --json`"), "{e}");
        let e = error(r#"{"kind": "sledge-runs", "format_version": 2, "runs": []}"#);
        assert!(e.contains("format version 2, newer than the 1"), "{e}");
        for version in ["0", "\"1\"", "1.5", "null"] {
            let e = error(&format!(
                r#"{{"kind": "sledge-runs", "format_version": {version}, "runs": []}}"#
            ));
            assert!(e.contains("format_version is"), "{version}: {e}");
        }
        let e = error(r#"{"kind": "sledge-runs", "format_version": 1}"#);
        assert!(e.contains("runs: missing"), "{e}");
        assert_eq!(
            parse(
                br#"{"kind": "sledge-runs", "format_version": 1, "runs": []}"#,
                "x"
            )
            .unwrap(),
            vec![]
        );
    }

    /// The document of one demo run, changed by `edit` before parsing.
    fn edited(edit: impl FnOnce(&mut Value)) -> String {
        let mut value: Value = serde_json::from_str(&document(&[demo_run(1, "a", 1.0)])).unwrap();
        edit(&mut value);
        error(&value.to_string())
    }

    #[test]
    fn a_missing_or_wrong_field_says_where_it_is() {
        let e = edited(|v| {
            v["runs"][0].as_object_mut().unwrap().remove("started");
        });
        assert_eq!(e, "runs.json: runs[0]: missing field `started`");
        let e = edited(|v| {
            v["runs"][0].as_object_mut().unwrap().remove("uuid");
        });
        assert_eq!(e, "runs.json: runs[0]: missing field `uuid`");
        let e = edited(|v| v["runs"][0]["uuid"] = "run-1".into());
        assert!(e.contains("uuid `run-1` is not a UUID"), "{e}");
        let e = edited(|v| {
            v["runs"][0]["cases"][1]["metrics"][0]
                .as_object_mut()
                .unwrap()
                .remove("unit");
        });
        assert_eq!(
            e,
            "runs.json: runs[0].cases[1] (cpu.primes): missing field `unit`"
        );
        let e = edited(|v| {
            v["runs"][0]["cases"][1]["metrics"][0]["summary"]
                .as_object_mut()
                .unwrap()
                .remove("mean");
        });
        assert!(e.contains("missing field `mean`"), "{e}");
        let e = edited(|v| v["runs"][0]["cases"][12][HISTOGRAM_FIELD] = "!!!".into());
        assert!(
            e.contains("runs[0].cases[12] (http.static): latency_histogram is not base64"),
            "{e}"
        );
        let e = edited(|v| v["runs"][0]["cases"][12][HISTOGRAM_FIELD] = "aGVsbG8=".into());
        assert!(e.contains("is not an HdrHistogram"), "{e}");
        let e = edited(|v| v["runs"][0]["status"] = "exploded".into());
        assert!(e.contains("runs[0]: unknown variant `exploded`"), "{e}");
        let e = edited(|v| v["runs"][0]["cases"] = "none".into());
        assert!(e.contains("cases is a string"), "{e}");
    }

    #[test]
    fn files_are_read_with_a_size_limit() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_file(dir.path(), 100).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "is a directory; give the export file itself (made by `sledge export -o FILE`)"
            ),
            "{e}"
        );
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; 101]).unwrap();
        let e = read_file(&big, 100).unwrap_err().to_string();
        assert!(e.contains("is 101 bytes, more than the 100 bytes"), "{e}");
        assert_eq!(read_file(&big, 101).unwrap().len(), 101);
        let missing = dir.path().join("missing.json");
        let e = read_file(&missing, 100).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: cannot read it", missing.display())),
            "{e}"
        );
    }
}
