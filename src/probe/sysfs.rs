//! Small helpers for reading /proc and /sys files.
//!
//! Every reader returns `Option` so that a missing or unreadable file only
//! blanks one field of the inventory; nothing here can fail the probe.

use std::path::Path;

/// Reads a whole file as text; `None` when it is missing or unreadable.
pub(crate) fn read_text(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Reads a one-value file, trimmed; `None` when missing, unreadable or empty.
pub(crate) fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    let text = read_text(path)?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Reads a file holding one unsigned integer.
pub(crate) fn read_u64(path: impl AsRef<Path>) -> Option<u64> {
    read_trimmed(path)?.parse().ok()
}

/// The selected choice of a sysfs multiple-choice file, the one in brackets:
/// `"always [madvise] never"` gives `"madvise"`.
///
/// A file with a single word and no brackets (some block devices show a bare
/// `none` as their scheduler) gives that word.
pub(crate) fn bracketed(text: &str) -> Option<String> {
    let text = text.trim();
    if let Some(start) = text.find('[') {
        let rest = &text[start + 1..];
        let end = rest.find(']')?;
        let choice = rest[..end].trim();
        return (!choice.is_empty()).then(|| choice.to_string());
    }
    let mut words = text.split_whitespace();
    match (words.next(), words.next()) {
        (Some(only), None) => Some(only.to_string()),
        _ => None,
    }
}

/// Parses a kernel CPU list such as `"0-3,8,10-11"` into sorted, distinct CPU
/// numbers. An empty list gives an empty vector; malformed text gives `None`.
pub(crate) fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.trim().is_empty()) {
        let part = part.trim();
        match part.split_once('-') {
            Some((lo, hi)) => {
                let lo: u32 = lo.trim().parse().ok()?;
                let hi: u32 = hi.trim().parse().ok()?;
                if hi < lo || hi - lo > 1 << 16 {
                    return None;
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_picks_the_selected_choice() {
        // /sys/kernel/mm/transparent_hugepage/enabled
        assert_eq!(
            bracketed("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            bracketed("[always] madvise never").as_deref(),
            Some("always")
        );
        assert_eq!(
            bracketed("always madvise [never]").as_deref(),
            Some("never")
        );
        // /sys/block/*/queue/scheduler
        assert_eq!(
            bracketed("none [mq-deadline] kyber bfq \n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(bracketed("[none] \n").as_deref(), Some("none"));
        assert_eq!(bracketed("none\n").as_deref(), Some("none"));
        assert_eq!(bracketed("always madvise never"), None);
        assert_eq!(bracketed(""), None);
        assert_eq!(bracketed("[unterminated"), None);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("3,1,1-2"), Some(vec![1, 2, 3]));
        assert_eq!(parse_cpu_list("\n"), Some(vec![]));
        assert_eq!(parse_cpu_list("a-b"), None);
        assert_eq!(parse_cpu_list("5-2"), None);
    }
}
