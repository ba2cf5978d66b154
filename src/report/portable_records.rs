//! The records of the portable run document, checked one at a time: a
//! run's members, a case with its base64 histogram, and what is wrong
//! with either ([`ImportError`]). The document's head and its stream are
//! read in `portable_stream.rs`; the format is described in
//! `portable.rs`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
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
pub(super) const HISTOGRAM_FIELD: &str = "latency_histogram";

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
