//! Finding a tool's JSON report in what it printed. fio writes notes
//! (`note: both iodepth >= 1 and synchronous I/O engine are selected`) on
//! standard output before its JSON and may add lines after it, so the
//! report is the first object that begins a line and parses whole, read
//! up to its closing brace and no further.

use serde_json::{Map, Value};

/// The first JSON object in `tool`'s output `text` that begins a line
/// (after its indentation) and parses whole. When none does, the error
/// says why the first that began to was not one, where in the output: a
/// report cut short (the tool killed, its output truncated) or one that
/// does not parse is told apart from output with no JSON at all, which
/// usually means the option that makes the tool print JSON is missing.
pub fn first_object(text: &str, tool: &str) -> Result<Map<String, Value>, String> {
    let mut offset = 0;
    let mut first_error = None;
    // Lines inside an object that failed are not looked at again: one of
    // its inner objects (a fio job) would parse whole and be taken for
    // the report.
    let mut inside_failed_until = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let indent = line.len() - line.trim_start().len();
        if number + 1 > inside_failed_until && line.trim_start().starts_with('{') {
            let start = offset + indent;
            let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter();
            match values.next() {
                Some(Ok(Value::Object(object))) => return Ok(object),
                // Cut short: every line after is inside it.
                Some(Err(error)) if error.is_eof() => {
                    return Err(
                        first_error.unwrap_or_else(|| unreadable(tool, &error, number + 1, indent))
                    );
                }
                Some(Err(error)) => {
                    inside_failed_until = number + error.line();
                    first_error.get_or_insert_with(|| unreadable(tool, &error, number + 1, indent));
                }
                _ => {}
            }
        }
        offset += line.len();
    }
    Err(first_error.unwrap_or_else(|| format!("no JSON object in {tool}'s output")))
}

/// Why `tool`'s JSON, begun on `line` of its output after `indent`
/// bytes, could not be read, with the place in the whole output; worded
/// as `sledge import` words a document that ends early.
fn unreadable(tool: &str, error: &serde_json::Error, line: usize, indent: usize) -> String {
    let at_line = line + error.line() - 1;
    let at_column = if error.line() == 1 {
        indent + error.column()
    } else {
        error.column()
    };
    if error.is_eof() {
        format!(
            "{tool}'s JSON ends early at line {at_line}, column {at_column}: its output was cut short"
        )
    } else {
        // serde_json's message ends with its own place, relative to where
        // the object began; the whole output's replaces it.
        let message = error.to_string();
        let what = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(what, _)| what);
        format!("{tool}'s JSON does not parse at line {at_line}, column {at_column}: {what}")
    }
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
        let object = first_object(text, "fio").expect("an object");
        assert_eq!(object["jobs"], serde_json::json!([1, 2]));
    }

    #[test]
    fn a_brace_that_opens_no_object_is_passed_over() {
        let text = "{ not json\n  {\"a\": 1}\n";
        assert_eq!(first_object(text, "fio").expect("an object")["a"], 1);
        assert_eq!(
            first_object("no braces at all\n", "fio").unwrap_err(),
            "no JSON object in fio's output"
        );
    }

    #[test]
    fn a_report_cut_short_or_broken_says_where() {
        let text = "note: capped at 1\n{\n  \"jobs\" : [1,";
        assert_eq!(
            first_object(text, "fio").unwrap_err(),
            "fio's JSON ends early at line 3, column 14: its output was cut short"
        );
        let text = "note\n  {\"a\": 1 \"b\": 2}\n";
        assert_eq!(
            first_object(text, "iperf3").unwrap_err(),
            "iperf3's JSON does not parse at line 2, column 11: expected `,` or `}`"
        );
        let text = "{\n  \"a\": 1,\n  \"b\": x\n}\n";
        assert_eq!(
            first_object(text, "fio").unwrap_err(),
            "fio's JSON does not parse at line 3, column 8: expected value"
        );
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
