//! Throttling and temperature: the kernel's thermal-throttle counters, read
//! before and after a trial, and the hottest sensor during it.
//!
//! * `/sys/devices/system/cpu/cpuN/thermal_throttle/core_throttle_count`
//!   and `package_throttle_count` (x86 with the thermal interrupt) count
//!   the times a core or its package crossed its thermal limit and was
//!   slowed down. Any rise during a trial means the hardware throttled it.
//!   A package's counter appears under each of its CPUs, so it is read
//!   once per package (`topology/physical_package_id`).
//! * Temperatures come from every thermal zone
//!   (`/sys/class/thermal/thermal_zone*/temp`) and every hwmon temperature
//!   input (`/sys/class/hwmon/hwmon*/temp*_input`), both in millidegrees
//!   Celsius and readable by everyone. Values outside
//!   [`PLAUSIBLE_CELSIUS`] are dropped: some firmware reports -273 or 255
//!   for a sensor that is not wired. Drives' sensors ([`DRIVE_HWMON`]) are
//!   not read: each read is a command to the drive, which every 200 ms
//!   would disturb the storage workloads, and a disk's temperature says
//!   nothing about the CPU's limits.
//!
//! Readers take a root directory so that tests run on fixture trees.

use std::collections::BTreeSet;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use super::sysfs_value::{ReadFailure, entries, read_i64, read_text, read_u64};

/// Temperatures believed, in °C: below any data centre's air and above
/// every CPU's shutdown point (about 105 °C).
pub(crate) const PLAUSIBLE_CELSIUS: RangeInclusive<f64> = -40.0..=150.0;

/// hwmon drivers of drives (`name`), left out: reading them sends the
/// drive a command.
pub(crate) const DRIVE_HWMON: [&str; 2] = ["drivetemp", "nvme"];

/// The throttle counter files of one CPU.
const THROTTLE_COUNTERS: [&str; 2] = ["core_throttle_count", "package_throttle_count"];

fn cpu_dir(root: &Path, cpu: usize) -> PathBuf {
    root.join(format!("sys/devices/system/cpu/cpu{cpu}"))
}

/// The throttle counters that concern a set of CPUs.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ThrottleCounters {
    files: Vec<PathBuf>,
}

impl ThrottleCounters {
    /// The core counter of each of `cpus` and the package counter of each
    /// of their packages, once, where they exist under `root`.
    pub(crate) fn for_cpus(root: &Path, cpus: &[usize]) -> Self {
        let mut files = Vec::new();
        let mut packages = BTreeSet::new();
        for &cpu in cpus {
            let dir = cpu_dir(root, cpu).join("thermal_throttle");
            let core = dir.join(THROTTLE_COUNTERS[0]);
            if core.exists() {
                files.push(core);
            }
            let package = dir.join(THROTTLE_COUNTERS[1]);
            // Without a package id every CPU counts as its own package: a
            // rise is then seen several times, but never missed.
            let id = read_text(&cpu_dir(root, cpu).join("topology/physical_package_id"))
                .unwrap_or_else(|_| format!("cpu{cpu}"));
            if package.exists() && packages.insert(id) {
                files.push(package);
            }
        }
        ThrottleCounters { files }
    }

    /// Whether any counter was found.
    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Each counter's value, `None` where it could not be read.
    pub(crate) fn read(&self) -> Vec<Option<u64>> {
        self.files.iter().map(|f| read_u64(f).ok()).collect()
    }
}

/// Why no throttle counter can be read for `cpus`, if none can.
pub(crate) fn throttle_unavailable(root: &Path, cpus: &[usize]) -> Option<String> {
    let counters = ThrottleCounters::for_cpus(root, cpus);
    if counters.is_empty() {
        return Some("no thermal_throttle counters".to_string());
    }
    let readings = counters.read();
    if readings.iter().any(Option::is_some) {
        return None;
    }
    Some(match read_u64(&counters.files[0]) {
        Err(ReadFailure::Denied) => "thermal_throttle counters need root".to_string(),
        _ => "thermal_throttle counters are unreadable".to_string(),
    })
}

/// How many times the counters rose between two readings (a counter that
/// went down was reset and counts from zero); `None` when no counter was
/// read both times.
pub(crate) fn throttle_rise(before: &[Option<u64>], after: &[Option<u64>]) -> Option<u64> {
    let mut seen = false;
    let mut rise = 0u64;
    for (b, a) in before.iter().zip(after) {
        if let (Some(b), Some(a)) = (b, a) {
            seen = true;
            rise = rise.saturating_add(if a >= b { a - b } else { *a });
        }
    }
    seen.then_some(rise)
}

/// Every temperature input of the host.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TemperatureSensors {
    files: Vec<PathBuf>,
}

impl TemperatureSensors {
    /// Thermal zones' `temp` and hwmon's `temp*_input` under `root`.
    pub(crate) fn discover(root: &Path) -> Self {
        let mut files = Vec::new();
        let thermal = root.join("sys/class/thermal");
        for zone in entries(&thermal)
            .into_iter()
            .filter(|n| n.starts_with("thermal_zone"))
        {
            let temp = thermal.join(&zone).join("temp");
            if temp.exists() {
                files.push(temp);
            }
        }
        let hwmon = root.join("sys/class/hwmon");
        for device in entries(&hwmon) {
            let dir = hwmon.join(&device);
            let name = read_text(&dir.join("name")).unwrap_or_default();
            if DRIVE_HWMON.contains(&name.as_str()) {
                continue;
            }
            for name in entries(&dir)
                .into_iter()
                .filter(|n| n.starts_with("temp") && n.ends_with("_input"))
            {
                files.push(dir.join(name));
            }
        }
        TemperatureSensors { files }
    }

    /// Whether any sensor was found.
    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The hottest plausible reading now, °C; `None` when none could be
    /// read.
    pub(crate) fn read_max(&self) -> Option<f64> {
        self.files
            .iter()
            .filter_map(|f| read_i64(f).ok())
            .map(|milli| milli as f64 / 1000.0)
            .filter(|c| PLAUSIBLE_CELSIUS.contains(c))
            .reduce(f64::max)
    }
}

/// Why no temperature can be read, if none can.
pub(crate) fn temperature_unavailable(sensors: &TemperatureSensors) -> Option<String> {
    if sensors.is_empty() {
        Some("no thermal zones or hwmon temperature sensors".to_string())
    } else if sensors.read_max().is_none() {
        Some("no thermal zone or hwmon sensor gives a plausible reading".to_string())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn package_counters_are_read_once_per_package() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for cpu in 0..4 {
            let base = format!("sys/devices/system/cpu/cpu{cpu}");
            write(
                root,
                &format!("{base}/thermal_throttle/core_throttle_count"),
                "0\n",
            );
            write(
                root,
                &format!("{base}/thermal_throttle/package_throttle_count"),
                "7\n",
            );
            write(
                root,
                &format!("{base}/topology/physical_package_id"),
                &format!("{}\n", cpu / 2),
            );
        }
        let counters = ThrottleCounters::for_cpus(root, &[0, 1, 2, 3]);
        // Four core counters, two package counters.
        assert_eq!(
            counters.read(),
            [Some(0), Some(7), Some(0), Some(0), Some(7), Some(0)]
        );
        assert_eq!(
            ThrottleCounters::for_cpus(root, &[1]).read(),
            [Some(0), Some(7)]
        );
        assert!(ThrottleCounters::for_cpus(root, &[9]).is_empty());
        assert_eq!(throttle_unavailable(root, &[0]), None);
        assert_eq!(
            throttle_unavailable(root, &[9]).as_deref(),
            Some("no thermal_throttle counters")
        );
    }

    #[test]
    fn rises_are_summed_and_resets_count_from_zero() {
        assert_eq!(
            throttle_rise(&[Some(3), Some(10)], &[Some(5), Some(10)]),
            Some(2)
        );
        assert_eq!(throttle_rise(&[Some(3)], &[Some(1)]), Some(1));
        assert_eq!(throttle_rise(&[Some(3), None], &[None, Some(4)]), None);
        assert_eq!(throttle_rise(&[], &[]), None);
    }

    #[test]
    fn the_hottest_plausible_sensor_wins() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "sys/class/thermal/thermal_zone0/temp", "45000\n");
        write(root, "sys/class/thermal/thermal_zone1/temp", "255000\n");
        write(root, "sys/class/thermal/cooling_device0/cur_state", "0\n");
        write(root, "sys/class/hwmon/hwmon0/temp1_input", "61500\n");
        write(root, "sys/class/hwmon/hwmon0/temp1_crit", "100000\n");
        write(root, "sys/class/hwmon/hwmon1/temp2_input", "-273150\n");
        // A hot NVMe drive is not read at all.
        write(root, "sys/class/hwmon/hwmon2/name", "nvme\n");
        write(root, "sys/class/hwmon/hwmon2/temp1_input", "79850\n");
        let sensors = TemperatureSensors::discover(root);
        assert_eq!(sensors.files.len(), 4);
        assert_eq!(sensors.read_max(), Some(61.5));
        assert_eq!(temperature_unavailable(&sensors), None);
        assert!(temperature_unavailable(&TemperatureSensors::discover(&root.join("x"))).is_some());
    }
}
