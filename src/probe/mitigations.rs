//! CPU vulnerability mitigations, from
//! `/sys/devices/system/cpu/vulnerabilities/*`.
//!
//! Mitigations such as retpolines, IBRS or page-table isolation can cost a
//! syscall-heavy benchmark tens of percent, so two runs are only comparable
//! when these match. The kernel's own text is stored verbatim; the summary
//! for display counts the three states it reports.

use std::collections::BTreeMap;

/// Directory with one file per known vulnerability.
const VULNERABILITIES_DIR: &str = "/sys/devices/system/cpu/vulnerabilities";

/// The state a vulnerability file reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// `Not affected`.
    NotAffected,
    /// `Mitigation: ...`.
    Mitigated,
    /// `Vulnerable...`.
    Vulnerable,
    /// Anything else, e.g. `Unknown: Dependent on hypervisor status`.
    Other,
}

/// Classifies one vulnerability file's text. A `KVM: ` prefix (as
/// `itlb_multihit` prints) is looked through.
pub(crate) fn classify(text: &str) -> State {
    let text = text.trim();
    let text = text.strip_prefix("KVM:").map_or(text, str::trim_start);
    if text.starts_with("Not affected") {
        State::NotAffected
    } else if text.starts_with("Vulnerable") {
        State::Vulnerable
    } else if text.starts_with("Mitigation") {
        State::Mitigated
    } else {
        State::Other
    }
}

/// One-line summary for display, e.g. `"3 mitigated, 12 not affected,
/// 1 vulnerable (spec_rstack_overflow: Vulnerable: Microcode, no safe RET)"`.
/// Vulnerable (and unclassifiable) entries are named with their text,
/// separated by ` | ` (the texts themselves contain `;` and `,`). `None`
/// when there is nothing to summarize.
pub(crate) fn summarize(mitigations: &BTreeMap<String, String>) -> Option<String> {
    if mitigations.is_empty() {
        return None;
    }
    let mut mitigated = 0;
    let mut not_affected = 0;
    let mut vulnerable = Vec::new();
    let mut other = Vec::new();
    for (name, text) in mitigations {
        match classify(text) {
            State::Mitigated => mitigated += 1,
            State::NotAffected => not_affected += 1,
            State::Vulnerable => vulnerable.push(format!("{name}: {}", text.trim())),
            State::Other => other.push(format!("{name}: {}", text.trim())),
        }
    }
    let mut parts = Vec::new();
    if mitigated > 0 {
        parts.push(format!("{mitigated} mitigated"));
    }
    if not_affected > 0 {
        parts.push(format!("{not_affected} not affected"));
    }
    if !vulnerable.is_empty() {
        parts.push(format!(
            "{} vulnerable ({})",
            vulnerable.len(),
            vulnerable.join(" | ")
        ));
    }
    if !other.is_empty() {
        parts.push(format!("{} other ({})", other.len(), other.join(" | ")));
    }
    Some(parts.join(", "))
}

/// Reads every vulnerability file: name → the kernel's text, trimmed.
/// Empty when the directory is absent (old kernels, non-x86/ARM hosts).
pub(crate) fn probe() -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(VULNERABILITIES_DIR) else {
        return map;
    };
    for entry in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        map.insert(
            entry.file_name().to_string_lossy().into_owned(),
            text.trim().to_string(),
        );
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `grep . /sys/devices/system/cpu/vulnerabilities/*` on this KVM guest
    /// (AMD EPYC, kernel 6.18).
    const VULNERABILITIES_KVM: &str = "\
gather_data_sampling:Not affected
ghostwrite:Not affected
indirect_target_selection:Not affected
itlb_multihit:Not affected
l1tf:Not affected
mds:Not affected
meltdown:Not affected
mmio_stale_data:Not affected
old_microcode:Not affected
reg_file_data_sampling:Not affected
retbleed:Not affected
spec_rstack_overflow:Vulnerable: Microcode, no safe RET
spec_store_bypass:Mitigation: Speculative Store Bypass disabled via prctl
spectre_v1:Mitigation: usercopy/swapgs barriers and __user pointer sanitization
spectre_v2:Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; STIBP: disabled; PBRSB-eIBRS: Not affected; BHI: Not affected
srbds:Not affected
tsa:Not affected
tsx_async_abort:Not affected
vmscape:Not affected
";

    fn map(grep_output: &str) -> BTreeMap<String, String> {
        grep_output
            .lines()
            .filter_map(|line| line.split_once(':'))
            .map(|(name, text)| (name.to_string(), text.to_string()))
            .collect()
    }

    #[test]
    fn classification() {
        assert_eq!(classify("Not affected\n"), State::NotAffected);
        assert_eq!(classify("Mitigation: PTI"), State::Mitigated);
        assert_eq!(classify("Vulnerable; SMT vulnerable"), State::Vulnerable);
        assert_eq!(
            classify("KVM: Mitigation: Split huge pages"),
            State::Mitigated
        );
        assert_eq!(classify("KVM: Vulnerable"), State::Vulnerable);
        assert_eq!(
            classify("Unknown: Dependent on hypervisor status"),
            State::Other
        );
    }

    #[test]
    fn summary_of_this_guest() {
        assert_eq!(
            summarize(&map(VULNERABILITIES_KVM)).as_deref(),
            Some(
                "3 mitigated, 15 not affected, 1 vulnerable \
                 (spec_rstack_overflow: Vulnerable: Microcode, no safe RET)"
            )
        );
    }

    #[test]
    fn summary_with_several_vulnerable_and_unknown() {
        let text = "\
meltdown:Mitigation: PTI
mds:Vulnerable: Clear CPU buffers attempted, no microcode; SMT Host state unknown
spectre_v1:Vulnerable: __user pointer sanitization and usercopy barriers only; no swapgs barriers
mmio_stale_data:Unknown: No mitigations
";
        assert_eq!(
            summarize(&map(text)).as_deref(),
            Some(
                "1 mitigated, 2 vulnerable (mds: Vulnerable: Clear CPU buffers attempted, \
                 no microcode; SMT Host state unknown | spectre_v1: Vulnerable: __user pointer \
                 sanitization and usercopy barriers only; no swapgs barriers), \
                 1 other (mmio_stale_data: Unknown: No mitigations)"
            )
        );
        assert_eq!(summarize(&BTreeMap::new()), None);
    }
}
