//! Number formatting shared by the text reports.
//!
//! Every number printed fits its column: a magnitude that plain digits
//! would spell over a dozen characters or round to 0 is written in a
//! compact scientific form (`1.2e290`, `3.4e-9`); a percentage is never
//! rounded to 0% or 100% when it is neither; and what is not a number
//! (a ratio against 0, a share of nothing) is said in words, never as
//! `inf` or `NaN`.

/// From here up, plain digits grow past a dozen characters: scientific
/// form instead.
const FIXED_MAX: f64 = 1e12;

/// Below this magnitude, plain digits (at most nine decimals) would lose
/// the significant ones: scientific form instead.
const FIXED_MIN: f64 = 1e-5;

/// `v` in scientific form with at most `digits` significant digits and
/// no trailing zeros: `1.2e290`, `3e-12`, `-4.5678e15`.
pub fn scientific(v: f64, digits: usize) -> String {
    if !v.is_finite() {
        return not_finite(v).to_string();
    }
    let text = format!("{:.*e}", digits.saturating_sub(1), v);
    match text.split_once('e') {
        Some((mantissa, exponent)) if mantissa.contains('.') => format!(
            "{}e{exponent}",
            mantissa.trim_end_matches('0').trim_end_matches('.')
        ),
        _ => text,
    }
}

/// A number that is not finite, in words (a report never shows `inf` or
/// `NaN`).
fn not_finite(v: f64) -> &'static str {
    if v.is_nan() {
        "undefined"
    } else if v > 0.0 {
        "infinite"
    } else {
        "-infinite"
    }
}

/// Whether `v`'s magnitude needs the scientific form.
fn needs_scientific(v: f64) -> bool {
    let magnitude = v.abs();
    magnitude >= FIXED_MAX || (magnitude > 0.0 && magnitude < FIXED_MIN)
}

/// A value with about five significant digits and no exponent:
/// `807.31`, `1646.2`, `24562`, `0.0123`; beyond 10^12 or below 10^-5
/// in magnitude, five significant digits in scientific form (`1e290`).
pub fn value(v: f64) -> String {
    if !v.is_finite() {
        return not_finite(v).to_string();
    }
    if needs_scientific(v) {
        return scientific(v, 5);
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
    if needs_scientific(mean) || needs_scientific(half_width) || exponent < -MAX_DECIMALS {
        // Both in scientific form: the half-width to two significant
        // digits, the mean to the same last digit (`1.234e290 ±
        // 1.2e288`), at most six.
        let mean_exponent = if mean == 0.0 {
            exponent + 1
        } else {
            mean.abs().log10().floor() as i32
        };
        let digits = (mean_exponent - exponent + 1).clamp(1, 6) as usize;
        return format!(
            "{} ± {}",
            scientific(mean, digits),
            scientific(half_width, 2)
        );
    }
    let scale = 10f64.powi(exponent);
    let round = |v: f64| (v / scale).round() * scale;
    let decimals = (-exponent).max(0) as usize;
    format!(
        "{:.decimals$} ± {:.decimals$}",
        round(mean),
        round(half_width)
    )
}

/// The most decimals [`with_uncertainty`] writes before it turns to the
/// scientific form: `0.000080 ± 0.000019` is as long as it gets.
const MAX_DECIMALS: i32 = 6;

/// `v` with `decimals` decimals (`0.930`, `+4.2`), or in scientific form
/// with three significant digits where those decimals would show 0 or
/// plain digits would run long (`1.2e-5`, `3.4e12`): for ratios and
/// scores, whose size is not bounded by a unit.
pub fn compact(v: f64, decimals: usize) -> String {
    let magnitude = v.abs();
    if !v.is_finite() {
        return not_finite(v).to_string();
    }
    let smallest_shown = 10f64.powi(-(decimals as i32));
    if magnitude != 0.0 && (magnitude < smallest_shown || magnitude >= 1e6) {
        return scientific(v, 3);
    }
    format!("{v:.decimals$}")
}

/// A ratio as the tables print it (`0.930`, [`compact`]); a ratio
/// against 0 in words.
pub fn ratio(r: f64) -> String {
    if r.is_nan() {
        "0 against 0".to_string()
    } else if r.is_infinite() {
        "against 0".to_string()
    } else {
        compact(r, 3)
    }
}

/// `n` and the word for what it counts, agreeing in number: `1 case`,
/// `3 cases`, `0 cases`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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

/// A share as a percentage with one decimal: `0.0123` -> `1.2%`. Never
/// a figure it is not: a share above 0 but under 0.05% is `<0.1%`, not
/// `0.0%`; one just under or over 100% gets the decimals that tell it
/// from 100% (`99.99%`); one of 10^5 % or more is in scientific form
/// (`1e29%`); one that is not finite is said in words.
pub fn percent(share: f64) -> String {
    let pct = share * 100.0;
    if !pct.is_finite() {
        return format!("an {} share", not_finite(pct).trim_start_matches('-'));
    }
    let sign = if pct < 0.0 { "-" } else { "" };
    let magnitude = pct.abs();
    if magnitude == 0.0 {
        return "0.0%".to_string();
    }
    if magnitude < 0.05 {
        return format!("{sign}<0.1%");
    }
    if magnitude >= 1e5 {
        return format!("{}%", scientific(pct, 2));
    }
    let one_decimal = format!("{magnitude:.1}");
    if one_decimal != "100.0" || magnitude == 100.0 {
        return format!("{sign}{one_decimal}%");
    }
    // 99.95% up to 100.05%: as many decimals as tell it from 100%.
    (2..=4)
        .map(|decimals| format!("{magnitude:.decimals$}"))
        .find(|text| text.parse::<f64>().is_ok_and(|shown| shown != 100.0))
        .map_or_else(
            || {
                if magnitude < 100.0 {
                    format!("{sign}>99.9999%")
                } else {
                    format!("{sign}<100.0001%")
                }
            },
            |text| format!("{sign}{text}%"),
        )
}

/// A share as a percentage without trailing zeros, for a figure the user
/// gave: `0.05` -> `5%`, `0.025` -> `2.5%`, `0.9999` -> `99.99%`,
/// `1e-11` -> `1e-9%`.
pub fn percent_given(share: f64) -> String {
    format!("{}%", value(share * 100.0))
}

/// A change by `ratio` (the new value over the old) with its verdict
/// (`faster`, `slower`), as a host's history says it: `7.0% slower`,
/// `<0.1% faster`, `99.99% slower`. A change from 0 has no percentage and
/// says so (`slower, from 0: no percentage`). Every change percentage a
/// report prints comes from here.
pub fn change(ratio: f64, verdict: &str) -> String {
    if ratio.is_nan() {
        format!("{verdict}, 0 before and after: no percentage")
    } else if ratio.is_infinite() {
        format!("{verdict}, from 0: no percentage")
    } else {
        format!("{} {verdict}", percent((ratio - 1.0).abs()))
    }
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
    fn huge_and_tiny_values_are_short_and_never_zero() {
        assert_eq!(value(1e290), "1e290");
        assert_eq!(value(-2.41678e290), "-2.4168e290");
        assert_eq!(value(1e-290), "1e-290");
        assert_eq!(value(87_000_000.0), "87000000");
        assert_eq!(value(1.5e12), "1.5e12");
        assert_eq!(value(0.00001), "0.00001");
        assert_eq!(value(f64::NAN), "undefined");
        assert_eq!(value(f64::NEG_INFINITY), "-infinite");
        assert_eq!(with_uncertainty(1e290, 1e289), "1e290 ± 1e289");
        assert_eq!(
            with_uncertainty(1.23456e290, 1.2e288),
            "1.235e290 ± 1.2e288"
        );
        assert_eq!(with_uncertainty(1e-290, 1e-291), "1e-290 ± 1e-291");
        assert_eq!(with_uncertainty(0.001, 1e-10), "1e-3 ± 1e-10");
        // Never wider than a column of the scorecard.
        for (mean, half) in [(1e290, 1e289), (1e-290, 3e-291), (-1.23456789e300, 1.0)] {
            let text = with_uncertainty(mean, half);
            assert!(text.chars().count() <= 25, "{text}");
        }
        assert_eq!(compact(0.93, 3), "0.930");
        assert_eq!(compact(1e290, 3), "1e290");
        assert_eq!(compact(1e-290, 3), "1e-290");
        assert_eq!(compact(-1.0, 3), "-1.000");
        assert_eq!(ratio(f64::INFINITY), "against 0");
        assert_eq!(ratio(f64::NAN), "0 against 0");
    }

    #[test]
    fn percentages_are_never_rounded_to_a_figure_they_are_not() {
        assert_eq!(percent(0.9999), "99.99%");
        assert_eq!(percent(0.99999), "99.999%");
        assert_eq!(percent(0.9999999999), ">99.9999%");
        assert_eq!(percent(1.0), "100.0%");
        assert_eq!(percent(1.0004), "100.04%");
        assert_eq!(percent(1e-11), "<0.1%");
        assert_eq!(percent(0.0), "0.0%");
        assert_eq!(percent(0.0004), "<0.1%");
        assert_eq!(percent(0.0006), "0.1%");
        assert_eq!(percent(-0.0123), "-1.2%");
        assert_eq!(percent(1e288), "1e290%");
        assert_eq!(percent(f64::INFINITY), "an infinite share");
        assert_eq!(percent(f64::NAN), "an undefined share");
        assert_eq!(percent_given(0.9999), "99.99%");
        assert_eq!(percent_given(1e-11), "1e-9%");
        assert_eq!(within(0.9999), "±99.99%");
    }

    #[test]
    fn a_change_says_its_size_and_way_and_a_change_from_0_in_words() {
        // The hostile history: -2416.8 -> 2416.8 is no percentage at all
        // (the import refuses it); what remains printable is printed so.
        assert_eq!(change(0.930, "slower"), "7.0% slower");
        assert_eq!(change(1.0 + 1e-11, "faster"), "<0.1% faster");
        assert_eq!(change(1e-4, "slower"), "99.99% slower");
        assert_eq!(
            change(1e290 / 1e-290, "faster"),
            "faster, from 0: no percentage"
        );
        assert_eq!(change(1e27, "faster"), "1e29% faster");
        assert_eq!(
            change(f64::NAN, "slower"),
            "slower, 0 before and after: no percentage"
        );
    }

    #[test]
    fn a_count_agrees_with_its_word() {
        assert_eq!(count(1, "case", "cases"), "1 case");
        assert_eq!(count(0, "case", "cases"), "0 cases");
        assert_eq!(count(3, "copy", "copies"), "3 copies");
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
