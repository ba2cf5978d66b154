//! Energy per trial from RAPL through the kernel's powercap interface.
//!
//! Each zone under `/sys/class/powercap` has a `name`, a cumulative
//! `energy_uj` counter and the `max_energy_range_uj` at which it wraps to
//! zero (262 kJ on most Intel parts, 65.5 kJ on AMD: at 300 W the AMD
//! counter wraps every 3.6 minutes). The monitor reads the counters at
//! every sample, so a wrap between two samples is recovered from the range,
//! and a trial of any length is measured.
//!
//! Which zones are summed: the packages (`package-N`, the whole socket:
//! cores, caches, memory controller) and the `dram` zones, which RAPL
//! keeps outside the package even where sysfs nests them under it. The
//! `core`, `uncore` and `psys` zones are left out: the first two are parts
//! of a package and `psys` (the whole platform, on laptops) overlaps them
//! all. Intel and AMD both appear as `intel-rapl:N` (AMD since Linux 5.8,
//! with `package-N` and per-package `core` zones); `intel-rapl-mmio:N` is
//! the same package read another way and is used only when there is no
//! `intel-rapl` package.
//!
//! `energy_uj` is readable by root only since Linux 5.10 (the PLATYPUS
//! power side channel, CVE-2020-8694); a run without root says so.
//!
//! Readers take a root directory so that tests run on fixture trees.

use std::path::{Path, PathBuf};

use super::sysfs_value::{ReadFailure, entries, read_text, read_u64};

/// One counter summed into a trial's energy.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RaplZone {
    /// The zone's `name` (`package-0`, `dram`).
    pub name: String,
    /// Its `energy_uj` file.
    pub energy_file: PathBuf,
    /// Its `max_energy_range_uj`: where the counter wraps to zero.
    pub max_range_uj: u64,
}

/// One reading of one zone's counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnergyReading {
    /// `energy_uj`.
    pub uj: u64,
    /// The zone's `max_energy_range_uj`.
    pub max_uj: u64,
}

/// A powercap zone directory name: its control type and index path
/// (`intel-rapl:0:1` is subzone 1 of zone 0 of `intel-rapl`).
fn parse_zone_dir(name: &str) -> Option<(&str, Vec<u32>)> {
    let (kind, indexes) = name.split_once(':')?;
    let indexes: Option<Vec<u32>> = indexes.split(':').map(|i| i.parse().ok()).collect();
    Some((kind, indexes?))
}

/// The zones to sum on the host under `root` (see the module docs), or
/// why there are none that can be read.
pub(crate) fn discover(root: &Path) -> Result<Vec<RaplZone>, String> {
    let powercap = root.join("sys/class/powercap");
    let mut candidates: Vec<(String, Vec<u32>, String, PathBuf)> = Vec::new();
    for dir_name in entries(&powercap) {
        let Some((kind, indexes)) = parse_zone_dir(&dir_name) else {
            continue;
        };
        if kind != "intel-rapl" && kind != "intel-rapl-mmio" {
            continue;
        }
        let dir = powercap.join(&dir_name);
        let Ok(name) = read_text(&dir.join("name")) else {
            continue;
        };
        let wanted = (indexes.len() == 1 && name.starts_with("package-")) || name == "dram";
        if wanted {
            candidates.push((kind.to_string(), indexes, name, dir));
        }
    }
    let has_msr_package = candidates
        .iter()
        .any(|(kind, _, name, _)| kind == "intel-rapl" && name.starts_with("package-"));
    let chosen_kind = if has_msr_package {
        "intel-rapl"
    } else {
        "intel-rapl-mmio"
    };
    candidates.retain(|(kind, ..)| kind == chosen_kind);
    if candidates.is_empty() {
        return Err("no RAPL package zones in /sys/class/powercap".to_string());
    }

    let mut zones = Vec::new();
    let mut failures = Vec::new();
    for (_, _, name, dir) in candidates {
        let energy_file = dir.join("energy_uj");
        let max = read_u64(&dir.join("max_energy_range_uj"));
        match (read_u64(&energy_file), max) {
            (Ok(_), Ok(max_range_uj)) if max_range_uj > 0 => zones.push(RaplZone {
                name,
                energy_file,
                max_range_uj,
            }),
            (Err(failure), _) | (_, Err(failure)) => failures.push(failure),
            (Ok(_), Ok(_)) => failures.push(ReadFailure::Unreadable),
        }
    }
    // A partial sum would be wrong, not just incomplete.
    match failures.first() {
        None => Ok(zones),
        Some(ReadFailure::Denied) => {
            Err("RAPL energy_uj is readable by root only (Linux 5.10 and later)".to_string())
        }
        Some(_) => Err("RAPL energy_uj or max_energy_range_uj is unreadable".to_string()),
    }
}

/// Reads every zone's counter now.
pub(crate) fn read(zones: &[RaplZone]) -> Vec<Option<EnergyReading>> {
    zones
        .iter()
        .map(|z| {
            read_u64(&z.energy_file).ok().map(|uj| EnergyReading {
                uj,
                max_uj: z.max_range_uj,
            })
        })
        .collect()
}

/// Microjoules between two readings of one counter, across one wrap-around
/// at `max_uj`; `None` when the readings cannot be from one counter (the
/// earlier one above the range).
pub(crate) fn energy_delta_uj(before: u64, after: u64, max_uj: u64) -> Option<u64> {
    if after >= before {
        Some(after - before)
    } else if before <= max_uj {
        Some(max_uj - before + after)
    } else {
        None
    }
}

/// Folds a trial's energy readings, zone by zone.
#[derive(Debug, Clone, Default)]
pub(crate) struct EnergyAccumulator {
    /// Per zone: the last reading and the microjoules so far.
    zones: Vec<(Option<u64>, u64)>,
    /// Whether every zone was read at the start, at the end, and every
    /// delta in between made sense.
    complete: bool,
    started: bool,
}

impl EnergyAccumulator {
    /// Takes the next reading of every zone, in the same order each time.
    pub(crate) fn push(&mut self, readings: &[Option<EnergyReading>]) {
        if !self.started {
            self.started = true;
            self.complete = !readings.is_empty() && readings.iter().all(Option::is_some);
            self.zones = readings.iter().map(|r| (r.map(|r| r.uj), 0)).collect();
            return;
        }
        if readings.len() != self.zones.len() {
            self.complete = false;
            return;
        }
        for ((last, total), reading) in self.zones.iter_mut().zip(readings) {
            // A missed reading is bridged by the next one: the counter
            // kept counting meanwhile (one wrap at most, see the docs).
            let Some(reading) = reading else {
                continue;
            };
            if let Some(before) = *last {
                match energy_delta_uj(before, reading.uj, reading.max_uj) {
                    Some(delta) => *total = total.saturating_add(delta),
                    None => self.complete = false,
                }
            }
            *last = Some(reading.uj);
        }
    }

    /// Marks the trial incomplete unless the last reading had every zone.
    pub(crate) fn end(&mut self, last: &[Option<EnergyReading>]) {
        if last.len() != self.zones.len() || last.iter().any(Option::is_none) {
            self.complete = false;
        }
    }

    /// Joules over the trial; `None` unless every zone was read at both
    /// ends.
    pub(crate) fn joules(&self) -> Option<f64> {
        (self.started && self.complete)
            .then(|| self.zones.iter().map(|(_, uj)| *uj as f64).sum::<f64>() / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(uj: u64) -> Option<EnergyReading> {
        Some(EnergyReading {
            uj,
            max_uj: 262_143_328_850,
        })
    }

    #[test]
    fn wrap_around_is_recovered_from_the_range() {
        assert_eq!(energy_delta_uj(100, 350, 1000), Some(250));
        // 900 -> wrap at 1000 -> 50: 100 + 50.
        assert_eq!(energy_delta_uj(900, 50, 1000), Some(150));
        // A real Intel range: 5 J before the wrap, 3 J after.
        assert_eq!(
            energy_delta_uj(262_138_328_850, 3_000_000, 262_143_328_850),
            Some(8_000_000)
        );
        // The earlier reading cannot be above the range.
        assert_eq!(energy_delta_uj(2000, 50, 1000), None);
    }

    #[test]
    fn readings_are_summed_zone_by_zone_through_a_wrap() {
        let mut acc = EnergyAccumulator::default();
        acc.push(&[reading(262_143_000_000), reading(1_000_000)]);
        acc.push(&[reading(100_000), reading(2_000_000)]);
        // Zone 1 missed a sample: the next one bridges it.
        acc.push(&[reading(600_000), None]);
        let last = [reading(1_100_000), reading(4_000_000)];
        acc.push(&last);
        acc.end(&last);
        // Zone 0: 328 850 + 100 000 + 500 000 + 500 000; zone 1: 3 J.
        let joules = acc.joules().unwrap();
        assert!((joules - (1.428_850 + 3.0)).abs() < 1e-9, "{joules}");
    }

    #[test]
    fn a_zone_missing_at_either_end_gives_no_energy() {
        let mut acc = EnergyAccumulator::default();
        acc.push(&[reading(0), None]);
        acc.push(&[reading(10), reading(10)]);
        assert_eq!(acc.joules(), None);

        let mut acc = EnergyAccumulator::default();
        acc.push(&[reading(0)]);
        let last = [None];
        acc.push(&last);
        acc.end(&last);
        assert_eq!(acc.joules(), None);
        assert_eq!(EnergyAccumulator::default().joules(), None);
    }

    #[test]
    fn zone_directory_names() {
        assert_eq!(
            parse_zone_dir("intel-rapl:0"),
            Some(("intel-rapl", vec![0]))
        );
        assert_eq!(
            parse_zone_dir("intel-rapl:1:0"),
            Some(("intel-rapl", vec![1, 0]))
        );
        assert_eq!(parse_zone_dir("intel-rapl"), None);
        assert_eq!(parse_zone_dir("dtpm:x"), None);
    }
}
