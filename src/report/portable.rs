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
//! decode, and a run the engine could not have stored (`import_check.rs`:
//! times that are not RFC 3339, a sample count that is not the trial
//! count, an inverted confidence interval, a number that is `null` or
//! absurd). Non-finite numbers, which JSON cannot hold, are written as
//! `null`; in a trial's health they read back as unknown, anywhere a
//! result needs a number they are refused. The document is read as a
//! stream (`portable_stream.rs`), so there is no size limit.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Serialize;
use serde_json::{Map, Value};

use super::import_check;
use crate::results::{CaseRecord, RunRecord};

/// The `kind` of an export document.
pub const DOCUMENT_KIND: &str = "sledge-runs";

/// The format version this build writes and the newest it reads. Bumped
/// when a change would make older sledges misread a document; fields added
/// with defaults do not bump it.
pub const FORMAT_VERSION: u64 = 1;

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
    #[error("{file}: cannot read it: {reason}")]
    Read {
        /// The file as the user named it.
        file: String,
        /// Why. Said in the message, and not also the error's source, so
        /// that the chain `main` prints says it once.
        reason: std::io::Error,
    },
    /// The path is a directory.
    #[error(
        "{file}: is a directory; give the export file itself (made by `sledge export -o FILE`)"
    )]
    Directory {
        /// The file as the user named it.
        file: String,
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

/// Reads and checks the document at `path` (standard input for `-`) as
/// a stream, refusing a directory; the runs come back as they will be
/// stored.
pub fn read_file(path: &Path) -> Result<Vec<RunRecord>, ImportError> {
    let file = path.display().to_string();
    if path.as_os_str() == "-" {
        return super::portable_stream::read(std::io::stdin().lock(), &file);
    }
    let read_err = |reason| ImportError::Read {
        file: file.clone(),
        reason,
    };
    if std::fs::metadata(path).map_err(read_err)?.is_dir() {
        return Err(ImportError::Directory { file });
    }
    let opened = std::fs::File::open(path).map_err(read_err)?;
    super::portable_stream::read(opened, &file)
}

/// Parses and checks a whole document held in memory; `file` names it in
/// errors. The runs come back as they will be stored (ids are the
/// exporting store's and are ignored by the import).
pub fn parse(bytes: &[u8], file: &str) -> Result<Vec<RunRecord>, ImportError> {
    super::portable_stream::read(bytes, file)
}

/// One run of the document from its members other than `cases`, and its
/// cases (already parsed); errors carry where they are and what is wrong.
pub(super) fn parse_run(
    mut fields: Map<String, Value>,
    cases: Vec<CaseRecord>,
    at: &str,
) -> Result<RunRecord, (String, String)> {
    let here = |reason: String| (at.to_string(), reason);
    if let Some(host) = fields.get_mut("host") {
        drop_null_members(host);
    }
    if fields.get("uuid").and_then(Value::as_str) == Some("") {
        return Err(here(
            "uuid is empty; allowed is the run's UUID (such as 3f2a9c1e-8d4b-4f60-9a7e-2b1c0d5e6f70)"
                .into(),
        ));
    }
    let mut fields = Value::Object(fields);
    import_check::check_magnitudes(&fields, "").map_err(&here)?;
    // The cases come apart, already parsed.
    fields["cases"] = Value::Array(Vec::new());
    let mut record: RunRecord = serde_json::from_value(fields).map_err(|e| here(e.to_string()))?;
    if uuid::Uuid::try_parse(&record.uuid).is_err() {
        return Err(here(if record.uuid.is_empty() {
            "missing field `uuid`".to_string()
        } else {
            format!("uuid `{}` is not a UUID", record.uuid)
        }));
    }
    import_check::check_run(&record).map_err(&here)?;
    record.cases = cases;
    Ok(record)
}

/// One case: the documented shape plus its base64 histogram, checked
/// against what the engine stores.
pub(super) fn parse_case(value: Value, at: &str) -> Result<CaseRecord, (String, String)> {
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
    let case = Value::Object(case);
    import_check::check_magnitudes(&case, "").map_err(&here)?;
    let mut record: CaseRecord = serde_json::from_value(case).map_err(|e| here(e.to_string()))?;
    record.latency_histogram = histogram;
    import_check::check_case(&record).map_err(&here)?;
    Ok(record)
}

/// Decodes a base64 V2 (+ deflate) histogram and checks that it is one,
/// without trusting it (`stats::read_histogram`: the file may come from
/// anywhere).
fn decode_histogram(text: &str) -> Result<Vec<u8>, String> {
    let bytes = BASE64
        .decode(text.trim())
        .map_err(|e| format!("{HISTOGRAM_FIELD} is not base64: {e}"))?;
    crate::stats::read_histogram(&bytes)
        .map_err(|e| format!("{HISTOGRAM_FIELD} is not an HdrHistogram V2 serialization: {e}"))?;
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
        let a = demo_run(1, "alpha", 1.0);
        let b = demo_run(2, "beta", 2.0);
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
        assert_eq!(back, [a.clone(), b]);
        assert_eq!(
            back[0].cases[12].latency_histogram,
            a.cases[12].latency_histogram
        );
    }

    #[test]
    fn a_null_reads_as_unknown_in_trial_health_and_is_refused_in_a_result() {
        // JSON has no NaN: a non-finite number is written as null.
        let mut a = demo_run(1, "alpha", 1.0);
        a.cases[0].trials[0].health.steal_pct = f64::NAN;
        let back = parse(document(&[a]).as_bytes(), "runs.json").unwrap();
        assert_eq!(back[0].cases[0].trials[0].health.steal_pct, 0.0);

        for (edit, field) in [
            (
                (|run: &mut RunRecord| run.cases[0].metrics[0].samples[1] = f64::NAN)
                    as fn(&mut RunRecord),
                "samples[1] is null (not a number)",
            ),
            (
                |run: &mut RunRecord| run.cases[0].metrics[0].summary.mean = f64::NAN,
                "summary.mean is null (not a number)",
            ),
        ] {
            let mut run = demo_run(1, "alpha", 1.0);
            edit(&mut run);
            let e = error(&document(&[run]));
            assert_eq!(
                e,
                format!(
                    "runs.json: runs[0].cases[0] (cpu.primes): metric events_per_sec: {field}; allowed is a finite number"
                )
            );
        }
    }

    #[test]
    fn a_run_the_engine_could_not_have_stored_is_refused_naming_the_field() {
        let e = edited(|v| v["runs"][0]["started"] = "yesterday".into());
        assert_eq!(
            e,
            "runs.json: runs[0]: started `yesterday` is not an RFC 3339 time; allowed is a time such as 2026-03-01T10:00:00Z"
        );
        let e = edited(|v| {
            let summary = &mut v["runs"][0]["cases"][1]["metrics"][0]["summary"];
            let low = summary["ci_low"].take();
            summary["ci_low"] = summary["ci_high"].take();
            summary["ci_high"] = low;
        });
        assert!(
            e.starts_with(
                "runs.json: runs[0].cases[1] (cpu.primes): metric events_per_sec: summary.ci_low "
            ) && e.ends_with("; allowed is ci_low ≤ mean"),
            "{e}"
        );
        let e = edited(|v| {
            v["runs"][0]["cases"][1]["metrics"][0]["samples"] = vec![1600.0; 1000].into();
        });
        assert!(
            e.ends_with("it has 1000 samples for 3 trials; allowed is one sample per trial"),
            "{e}"
        );
        let e =
            edited(|v| v["runs"][0]["cases"][2]["metrics"][0]["summary"]["mean"] = 1e308.into());
        assert!(
            e.starts_with(
                "runs.json: runs[0].cases[2] (cpu.primes): metrics[0].summary.mean is 1e+308; allowed is a finite number, 0 or between 1e-300 and 1e300"
            ),
            "{e}"
        );
        let e = edited(|v| v["runs"][0]["cases"][2]["metrics"][0]["samples"][0] = 1e-307.into());
        assert!(
            e.contains("metrics[0].samples[0] is 1e-307; allowed is"),
            "{e}"
        );
        let e = edited(|v| v["runs"][0]["host"]["memory"]["total_bytes"] = 1e300.into());
        assert!(
            e.starts_with("runs.json: runs[0]: host.memory.total_bytes is 1e+300"),
            "{e}"
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
        let e = edited(|v| v["runs"][0]["uuid"] = "".into());
        assert!(
            e.starts_with("runs.json: runs[0]: uuid is empty; allowed is the run's UUID"),
            "{e}"
        );
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
    fn a_histogram_the_deserializer_would_panic_on_is_refused() {
        // The fuzz target of the agent protocol found this (fuzz/README.md);
        // an import reads its histograms with the same deserializer: a V2
        // header, then one count of nine 0xff bytes, i64::MIN zero counts,
        // which the deserializer negates (an overflow).
        let e = edited(|v| {
            v["runs"][0]["cases"][12][HISTOGRAM_FIELD] =
                "HISTEwAAAAkAAAAAAAAAAwAAAAAAAAABAAADRjG4oAQ/8AAAAAAAAP///////////w==".into();
        });
        assert!(
            e.ends_with(
                "latency_histogram is not an HdrHistogram V2 serialization: its run of zero counts at payload byte 0 is longer than any histogram"
            ),
            "{e}"
        );
    }

    #[test]
    fn files_are_read_as_a_stream_and_errors_say_their_cause_once() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_file(dir.path()).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "is a directory; give the export file itself (made by `sledge export -o FILE`)"
            ),
            "{e}"
        );
        let file = dir.path().join("runs.json");
        let runs = [demo_run(1, "alpha", 1.0)];
        std::fs::write(&file, document(&runs)).unwrap();
        assert_eq!(read_file(&file).unwrap(), runs);
        // The cause is in the message, and not again as its source (which
        // `main` would print after it).
        let missing = dir.path().join("missing.json");
        let e = read_file(&missing).unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("{}: cannot read it: ", missing.display()))
                && text.ends_with("(os error 2)"),
            "{text}"
        );
        assert!(std::error::Error::source(&e).is_none());
        // A device has no size to speak of: it is read, and is not JSON.
        let e = read_file(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.starts_with("/dev/zero: is not JSON"), "{e}");
    }
}
