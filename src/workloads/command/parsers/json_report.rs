//! Finding a tool's JSON report in what it printed. fio writes notes
//! (`note: both iodepth >= 1 and synchronous I/O engine are selected`) on
//! standard output before its JSON and may add lines after it, so the
//! report is the first object that begins a line and parses whole, read
//! up to its closing brace and no further.

use serde_json::{Map, Value};

/// The first JSON object in `text` that begins a line (after its
/// indentation) and parses whole.
pub fn first_object(text: &str) -> Option<Map<String, Value>> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        if line.trim_start().starts_with('{') {
            let start = offset + indent;
            let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter();
            if let Some(Ok(Value::Object(object))) = values.next() {
                return Some(object);
            }
        }
        offset += line.len();
    }
    None
}

/// The number at `pointer` (`/read/iops`) in `value`, or an error naming
/// the field of `tool`'s report that was missing or no number.
pub fn number_at(value: &Value, pointer: &str, tool: &str) -> Result<f64, String> {
    value
        .pointer(pointer)
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite())
        .ok_or_else(|| format!("{tool}'s JSON has no number at `{pointer}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_before_and_after_the_object_is_skipped() {
        let text = "note: capped at 1\n{\n  \"jobs\" : [1, 2]\n}\nfio: trailing line\n";
        let object = first_object(text).expect("an object");
        assert_eq!(object["jobs"], serde_json::json!([1, 2]));
    }

    #[test]
    fn a_brace_that_opens_no_object_is_passed_over() {
        let text = "{ not json\n  {\"a\": 1}\n";
        assert_eq!(first_object(text).expect("an object")["a"], 1);
        assert!(first_object("no braces at all\n").is_none());
    }

    #[test]
    fn a_missing_number_names_its_place() {
        let value = serde_json::json!({"read": {"iops": 5.5, "bw": "x"}});
        assert_eq!(number_at(&value, "/read/iops", "fio"), Ok(5.5));
        assert_eq!(
            number_at(&value, "/read/bw", "fio").unwrap_err(),
            "fio's JSON has no number at `/read/bw`"
        );
    }
}
