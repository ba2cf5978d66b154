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
//! stream (`portable_stream.rs`), so there is no size limit; its records are
//! checked one at a time (`portable_records.rs`).

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Serialize;
use serde_json::Value;

use super::portable_records::HISTOGRAM_FIELD;
pub use super::portable_records::{DOCUMENT_KIND, FORMAT_VERSION, ImportError};
use crate::results::RunRecord;

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
