//! Reading figures out of a tool's text report: the text after a label,
//! the number that begins a field, and a tool's own words made a metric
//! name. The text parsers share these so that each says only where its
//! figures are, and every one of them fails the same way on a figure that
//! is not a number.

/// The rest of the first line that begins with `label` once its
/// indentation is skipped, trimmed (`2.03s` of `    total time:   2.03s`).
pub fn after_label<'a>(text: &'a str, label: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|line| line.trim_start().strip_prefix(label))
        .map(str::trim)
}

/// The number that begins `field` (`1.23` of `1.23 ms`), or an error that
/// names what it was meant to be and shows what stood there instead.
pub fn leading_number(field: &str, what: &str) -> Result<f64, String> {
    let token = field.split_whitespace().next().unwrap_or("");
    number(token).ok_or_else(|| format!("{what}: expected a number, found `{field}`"))
}

/// The number after `label` in `text`, or an error that says which line
/// was missing or held no number.
pub fn labelled_number(text: &str, tool: &str, label: &str) -> Result<f64, String> {
    let field = after_label(text, label)
        .ok_or_else(|| format!("no `{}` line in {tool}'s output", label.trim()))?;
    leading_number(field, &format!("{tool}'s `{}`", label.trim()))
}

/// `token` as a finite number: a tool that prints `nan` or `inf` has no
/// figure to store.
pub fn number(token: &str) -> Option<f64> {
    token.parse::<f64>().ok().filter(|value| value.is_finite())
}

/// A tool's name for something (`LRANGE_100 (first 100 elements)`,
/// `af-alg`) as a metric name: letters and digits kept as the tool wrote
/// them, every run of anything else one `_`, none at either end.
pub fn metric_word(raw: &str) -> String {
    let mut word = String::with_capacity(raw.len());
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else if !word.is_empty() && !word.ends_with('_') {
            word.push('_');
        }
    }
    while word.ends_with('_') {
        word.pop();
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_is_found_after_indentation_and_its_value_trimmed() {
        let text = "General statistics:\n    total time:      1.0073s\n";
        assert_eq!(after_label(text, "total time:"), Some("1.0073s"));
        assert_eq!(after_label(text, "total number of events:"), None);
    }

    #[test]
    fn a_field_that_is_no_number_is_an_error_showing_the_field() {
        assert_eq!(leading_number("16.097 ms", "latency"), Ok(16.097));
        let err = leading_number("-nan%", "stdev").unwrap_err();
        assert!(err.contains("stdev") && err.contains("`-nan%`"), "{err}");
        assert_eq!(number("inf"), None);
        let missing = labelled_number("tps = 1\n", "pgbench", "latency average = ").unwrap_err();
        assert_eq!(missing, "no `latency average =` line in pgbench's output");
    }

    #[test]
    fn a_tool_word_becomes_a_metric_name_without_losing_its_letters() {
        assert_eq!(
            metric_word("LRANGE_100 (first 100 elements)"),
            "LRANGE_100_first_100_elements"
        );
        assert_eq!(metric_word("af-alg"), "af_alg");
        assert_eq!(metric_word("  SET  "), "SET");
    }
}
