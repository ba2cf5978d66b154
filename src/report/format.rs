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

/// An uncertainty (a CI half-width) with three significant digits:
/// `91.3`, `0.00155`, `1250`.
pub fn uncertainty(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return value(v);
    }
    let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    trim_zeros(format!("{v:.decimals$}"))
}

/// A share as a percentage with one decimal: `0.0123` -> `1.2%`.
pub fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
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
        assert_eq!(uncertainty(91.32), "91.3");
        assert_eq!(uncertainty(0.0015456), "0.00155");
        assert_eq!(uncertainty(1254.0), "1254");
    }
}
