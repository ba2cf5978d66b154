//! Number formatting shared by the text reports.

/// A value with about five significant digits and no exponent:
/// `807.31`, `1646.2`, `24562`, `0.0123`.
pub fn value(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let magnitude = v.abs();
    let decimals = if magnitude == 0.0 || magnitude >= 10_000.0 {
        0
    } else {
        // Digits after the point so that about 5 significant digits show.
        (4 - magnitude.log10().floor() as i32).clamp(0, 9) as usize
    };
    let text = format!("{v:.decimals$}");
    trim_zeros(text)
}

fn trim_zeros(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A mean and its CI half-width, both rounded at the second significant
/// digit of the half-width (the usual convention for a measured value
/// with its uncertainty): `4259.8 ± 421.3` -> `4260 ± 420`.
pub fn with_uncertainty(mean: f64, half_width: f64) -> String {
    if !(half_width.is_finite() && half_width > 0.0 && mean.is_finite()) {
        return value(mean);
    }
    let exponent = half_width.log10().floor() as i32 - 1;
    let scale = 10f64.powi(exponent);
    let round = |v: f64| (v / scale).round() * scale;
    let decimals = (-exponent).max(0) as usize;
    format!(
        "{:.decimals$} ± {:.decimals$}",
        round(mean),
        round(half_width)
    )
}

/// The widest line the text reports print, piped or not: fits a default
/// 100-column terminal and a code review's side-by-side view.
pub const REPORT_WIDTH: usize = 100;

/// Wraps `text` at spaces so that no line is longer than `width`
/// characters (a single longer word stays whole); continuation lines are
/// indented by two spaces.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split(' ') {
            let len = line.chars().count();
            if len > 0 && len + 1 + word.chars().count() > width {
                out.push_str(&line);
                out.push('\n');
                line = format!("  {word}");
            } else {
                if len > 0 {
                    line.push(' ');
                }
                line.push_str(word);
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `text` as one Markdown table cell: a `|` would end the cell and a line
/// break the table.
pub fn markdown_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A share as a percentage with one decimal: `0.0123` -> `1.2%`.
pub fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// A share as a percentage without trailing zeros, for a figure the user
/// gave: `0.05` -> `5%`, `0.025` -> `2.5%`.
pub fn percent_given(share: f64) -> String {
    format!("{}%", value(share * 100.0))
}

/// What a no-difference verdict rules out, from the largest change its
/// interval leaves open (a share): `±3.1%`; past ±1000% (an interval
/// wide enough to say nothing) `more than ±1000%`.
pub fn within(share: f64) -> String {
    if share <= 10.0 {
        format!("±{}", percent(share))
    } else {
        "more than ±1000%".to_string()
    }
}

/// Parameters as `k=v k=v`, in their map's order.
pub fn params_text(params: &std::collections::BTreeMap<String, String>) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_five_significant_digits() {
        assert_eq!(value(807.3149), "807.31");
        assert_eq!(value(1646.23), "1646.2");
        assert_eq!(value(24562.7), "24563");
        assert_eq!(value(0.012345678), "0.012346");
        assert_eq!(value(3.0), "3");
        assert_eq!(value(0.0), "0");
        assert_eq!(percent(0.0123), "1.2%");
        assert_eq!(percent_given(0.05), "5%");
        assert_eq!(percent_given(0.025), "2.5%");
        assert_eq!(within(0.031), "±3.1%");
        assert_eq!(within(f64::MAX), "more than ±1000%");
        assert_eq!(with_uncertainty(4259.8, 421.3), "4260 ± 420");
        assert_eq!(with_uncertainty(807.3149, 3.1), "807.3 ± 3.1");
        assert_eq!(
            with_uncertainty(0.00007977, 0.0000188),
            "0.000080 ± 0.000019"
        );
        assert_eq!(with_uncertainty(5.0, 0.0), "5");
    }

    #[test]
    fn wrap_breaks_at_spaces_within_the_width() {
        assert_eq!(wrap("aaa bbb ccc", 7), "aaa bbb\n  ccc\n");
        assert_eq!(wrap("short", 80), "short\n");
        assert_eq!(
            wrap("averyveryverylongword x", 5),
            "averyveryverylongword\n  x\n"
        );
        assert_eq!(wrap("a\nb", 80), "a\nb\n");
    }
}
