//! Human-readable sizes for display.
//!
//! Kept apart from the probing code because the report and the CLI format
//! sizes the same way (binary units, as the kernel reports memory and caches).

/// Formats a byte count in binary units: `"512 B"`, `"32 KiB"`, `"1.5 GiB"`.
///
/// Whole multiples of a unit print without decimals (`"1 MiB"`); anything else
/// prints with one decimal (`"21.0 GiB"` means "about 21", not exactly 21).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut unit = 0;
    let mut divisor: u64 = 1;
    while unit + 1 < UNITS.len() && n / divisor >= 1024 {
        divisor *= 1024;
        unit += 1;
    }
    let whole = n / divisor;
    if whole * divisor == n {
        return format!("{whole} {}", UNITS[unit]);
    }
    let value = n as f64 / divisor as f64;
    // 1023.96 KiB would print as "1024.0 KiB"; move up a unit instead.
    if format!("{value:.1}") == "1024.0" && unit + 1 < UNITS.len() {
        return format!("1.0 {}", UNITS[unit + 1]);
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn whole_units_have_no_decimals() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1024), "1 KiB");
        assert_eq!(human_bytes(32 * 1024), "32 KiB");
        assert_eq!(human_bytes(1024 * 1024), "1 MiB");
        assert_eq!(human_bytes(32 * 1024 * 1024), "32 MiB");
        assert_eq!(human_bytes(u64::MAX - u64::MAX % (1 << 60)), "15 EiB");
    }

    #[test]
    fn fractions_have_one_decimal() {
        assert_eq!(human_bytes(1536 * 1024 * 1024), "1.5 GiB");
        assert_eq!(human_bytes(24_684_096 * 1024), "23.5 GiB");
        assert_eq!(human_bytes(1025), "1.0 KiB");
        assert_eq!(human_bytes(1024 * 1024 - 1), "1.0 MiB");
        assert_eq!(human_bytes(u64::MAX), "16.0 EiB");
    }
}
