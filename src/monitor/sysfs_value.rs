//! Reading one value from a sysfs file, telling "not there" from "not
//! allowed": the hardware readers use the difference to say what needs
//! root (RAPL's `energy_uj` is readable by root only since Linux 5.10,
//! `/dev/cpu/N/msr` always was) instead of a bare "not available".

use std::io::ErrorKind;
use std::path::Path;

/// Why a value could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadFailure {
    /// The file (or a directory above it) does not exist.
    Missing,
    /// The file exists but this user may not read it (EACCES, EPERM).
    Denied,
    /// The read failed otherwise (EIO, ENODATA, a directory where a file
    /// was expected) or the text is not a number.
    Unreadable,
}

impl ReadFailure {
    /// From an I/O error.
    pub(crate) fn of(err: &std::io::Error) -> Self {
        match err.kind() {
            ErrorKind::NotFound => ReadFailure::Missing,
            ErrorKind::PermissionDenied => ReadFailure::Denied,
            _ => ReadFailure::Unreadable,
        }
    }
}

/// The file's text, trimmed.
pub(crate) fn read_text(path: &Path) -> Result<String, ReadFailure> {
    std::fs::read_to_string(path)
        .map(|text| text.trim().to_string())
        .map_err(|e| ReadFailure::of(&e))
}

/// A file holding one unsigned integer.
pub(crate) fn read_u64(path: &Path) -> Result<u64, ReadFailure> {
    read_text(path)?
        .parse()
        .map_err(|_| ReadFailure::Unreadable)
}

/// A file holding one signed integer (temperatures may be below zero).
pub(crate) fn read_i64(path: &Path) -> Result<i64, ReadFailure> {
    read_text(path)?
        .parse()
        .map_err(|_| ReadFailure::Unreadable)
}

/// The names of a directory's entries, sorted; empty when it cannot be
/// listed.
pub(crate) fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort_by(|a, b| natural_order(a, b));
    names
}

/// Orders `cpu2` before `cpu10` and `temp2_input` before `temp10_input`:
/// runs of digits compare as numbers.
fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, xa), (db, xb)) in ca.iter().zip(&cb) {
        let order = if *da && *db {
            let (na, nb) = (xa.trim_start_matches('0'), xb.trim_start_matches('0'));
            na.len().cmp(&nb.len()).then_with(|| na.cmp(nb))
        } else {
            xa.cmp(xb)
        };
        if order.is_ne() {
            return order;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

/// The CPUs listed in `root/sys/devices/system/cpu/online` (`0-3,8`);
/// empty when the file is missing or malformed.
pub(crate) fn online_cpus(root: &Path) -> Vec<usize> {
    let Ok(text) = read_text(&root.join("sys/devices/system/cpu/online")) else {
        return Vec::new();
    };
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let range: Option<(usize, usize)> = match part.split_once('-') {
            Some((lo, hi)) => lo.trim().parse().ok().zip(hi.trim().parse().ok()),
            None => part.parse().ok().map(|c| (c, c)),
        };
        // A corrupt range must not allocate millions of entries.
        match range {
            Some((lo, hi)) if lo <= hi && hi - lo <= 1 << 16 => cpus.extend(lo..=hi),
            _ => return Vec::new(),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("value");
        std::fs::write(&file, "42\n").unwrap();
        assert_eq!(read_u64(&file), Ok(42));
        assert_eq!(
            read_u64(&dir.path().join("absent")),
            Err(ReadFailure::Missing)
        );
        // A directory where a file is expected fails to read as root too.
        assert_eq!(read_u64(dir.path()), Err(ReadFailure::Unreadable));
        std::fs::write(&file, "forty-two\n").unwrap();
        assert_eq!(read_u64(&file), Err(ReadFailure::Unreadable));
        std::fs::write(&file, "-5000\n").unwrap();
        assert_eq!(read_i64(&file), Ok(-5000));
    }

    #[test]
    fn entries_sort_numbers_as_numbers() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["cpu10", "cpu2", "cpu1", "cpufreq"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        assert_eq!(entries(dir.path()), ["cpu1", "cpu2", "cpu10", "cpufreq"]);
        assert!(entries(&dir.path().join("absent")).is_empty());
    }

    #[test]
    fn online_lists() {
        let dir = tempfile::tempdir().unwrap();
        let cpu = dir.path().join("sys/devices/system/cpu");
        std::fs::create_dir_all(&cpu).unwrap();
        assert!(online_cpus(dir.path()).is_empty());
        std::fs::write(cpu.join("online"), "0-3,8\n").unwrap();
        assert_eq!(online_cpus(dir.path()), [0, 1, 2, 3, 8]);
        std::fs::write(cpu.join("online"), "0-4000000000\n").unwrap();
        assert!(online_cpus(dir.path()).is_empty());
    }
}
