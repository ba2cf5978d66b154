//! Reading header values, for both HTTP parsers (the generator's response
//! parser and the server's request parser): the same rules on each side.

/// `bytes` without leading and trailing ASCII whitespace.
pub(crate) fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

/// A length: decimal digits only (no sign, no spaces), fewer than 20 so
/// that it cannot overflow.
pub(crate) fn parse_length(bytes: &[u8]) -> Option<u64> {
    if bytes.is_empty() || bytes.len() > 19 {
        return None;
    }
    bytes.iter().try_fold(0u64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u64::from(b - b'0'))
    })
}

/// Whether `needle` occurs in `haystack`, ignoring ASCII case.
pub(crate) fn contains_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_plain_digits_that_fit() {
        assert_eq!(parse_length(b"0"), Some(0));
        assert_eq!(
            parse_length(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        for bad in [
            &b""[..],
            b"-1",
            b"+1",
            b"1 2",
            b"0x10",
            b"12345678901234567890",
        ] {
            assert_eq!(parse_length(bad), None, "{bad:?}");
        }
        assert_eq!(trim(b" \t 5 \r"), b"5");
        assert_eq!(trim(b"   "), b"");
        assert!(contains_ignore_case(b"Keep-Alive, Upgrade", b"keep-alive"));
        assert!(!contains_ignore_case(b"close", b"keep-alive"));
    }
}
