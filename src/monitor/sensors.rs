//! The hardware side of a trial's health: effective clock, throttling,
//! temperature and energy, read with the `/proc` counters by the same
//! [`Monitor`](super::Monitor) and folded into the same
//! [`TrialHealth`].
//!
//! [`Sensors::discover`] finds once what the host offers under a root
//! directory (`/`, or a fixture tree in tests) and why the rest is missing;
//! [`Sensors::open`] prepares the readers of one trial's CPUs; each
//! [`SensorReaders::sample`] reads them (counters and throttle counts at
//! the trial's edges only, temperatures, cpufreq and energy at every
//! sample), and a [`SensorAccumulator`] folds the samples. Nothing here can
//! fail a trial: what cannot be read is left out of its health.

use std::path::{Path, PathBuf};

use super::effective_clock::{self, ClockAccumulator, ClockMethod, ClockReaders, ClockReading};
use super::energy::{self, EnergyAccumulator, EnergyReading, RaplZone};
use super::sysfs_value::online_cpus;
use super::thermal::{self, TemperatureSensors, ThrottleCounters};
use super::trial_health::TrialHealth;

/// What a host offers, found once.
#[derive(Debug, Clone, Default)]
pub struct Sensors {
    root: PathBuf,
    clock: Option<ClockMethod>,
    throttle: bool,
    temperatures: TemperatureSensors,
    energy: Vec<RaplZone>,
    /// What is missing and why: `(what, reasons)`.
    missing: Vec<(&'static str, String)>,
}

impl Sensors {
    /// Finds the clock source, throttle counters, temperature sensors and
    /// RAPL zones under `root`. Hardware counters that are not files (perf
    /// events) are only tried when `root` is `/`.
    pub fn discover(root: &Path) -> Sensors {
        let cpus = {
            let online = online_cpus(root);
            if online.is_empty() { vec![0] } else { online }
        };
        let mut missing = Vec::new();

        let found = effective_clock::discover(root, cpus[0], root == Path::new("/"));
        if found.method.is_none() {
            missing.push(("effective clock", found.why_not.join("; ")));
        }
        let throttle_why = thermal::throttle_unavailable(root, &cpus);
        if let Some(why) = &throttle_why {
            missing.push(("throttle counters", why.clone()));
        }
        let temperatures = TemperatureSensors::discover(root);
        if let Some(why) = thermal::temperature_unavailable(&temperatures) {
            missing.push(("temperature", why));
        }
        let energy = match energy::discover(root) {
            Ok(zones) => zones,
            Err(why) => {
                missing.push(("energy", why));
                Vec::new()
            }
        };
        Sensors {
            root: root.to_path_buf(),
            clock: found.method,
            throttle: throttle_why.is_none(),
            temperatures,
            energy,
            missing,
        }
    }

    /// No sensors at all.
    pub fn none() -> Sensors {
        Sensors::default()
    }

    /// Whether nothing can be read.
    pub fn is_empty(&self) -> bool {
        self.clock.is_none()
            && !self.throttle
            && self.temperatures.is_empty()
            && self.energy.is_empty()
    }

    /// The RAPL zones summed into a trial's energy, by name.
    pub fn energy_zones(&self) -> Vec<String> {
        self.energy.iter().map(|z| z.name.clone()).collect()
    }

    /// One sentence for the run's warnings naming what is not available
    /// and why, or `None` when everything is.
    pub fn not_available_warning(&self) -> Option<String> {
        if self.missing.is_empty() {
            return None;
        }
        let whats: Vec<&str> = self.missing.iter().map(|(what, _)| *what).collect();
        let whys: Vec<String> = self
            .missing
            .iter()
            .map(|(what, why)| format!("{what}: {why}"))
            .collect();
        let what = match whats.as_slice() {
            [one] => one.to_string(),
            [init @ .., last] => format!("{} and {last}", init.join(", ")),
            [] => unreachable!("missing is not empty"),
        };
        Some(format!(
            "{what} not available on this host ({}); trials carry no such figures",
            whys.join("; ")
        ))
    }

    /// The readers of one trial on `cpus`.
    pub fn open(&self, cpus: &[usize]) -> SensorReaders {
        SensorReaders {
            clock: self
                .clock
                .map(|method| ClockReaders::open(&self.root, method, cpus)),
            throttle: if self.throttle {
                ThrottleCounters::for_cpus(&self.root, cpus)
            } else {
                ThrottleCounters::default()
            },
            temperatures: self.temperatures.clone(),
            energy: self.energy.clone(),
        }
    }
}

/// The readers of one trial.
#[derive(Debug)]
pub struct SensorReaders {
    clock: Option<ClockReaders>,
    throttle: ThrottleCounters,
    temperatures: TemperatureSensors,
    energy: Vec<RaplZone>,
}

/// What the sensors read at one instant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SensorSample {
    /// The clock source's reading (counters only at the trial's edges).
    pub clock: Option<ClockReading>,
    /// The throttle counters (only at the trial's edges), `None` per
    /// counter that could not be read.
    pub throttle: Option<Vec<Option<u64>>>,
    /// The hottest sensor, °C.
    pub temperature_c: Option<f64>,
    /// Each RAPL zone's counter.
    pub energy: Vec<Option<EnergyReading>>,
}

impl SensorReaders {
    /// Reads the sensors; `edge` at the start and end of the trial.
    pub fn sample(&self, edge: bool) -> SensorSample {
        SensorSample {
            clock: self.clock.as_ref().and_then(|c| c.read(edge)),
            throttle: (edge && !self.throttle.is_empty()).then(|| self.throttle.read()),
            temperature_c: self.temperatures.read_max(),
            energy: energy::read(&self.energy),
        }
    }
}

/// Folds a trial's sensor samples into its health.
#[derive(Debug, Clone, Default)]
pub struct SensorAccumulator {
    clock: ClockAccumulator,
    throttle_first: Option<Vec<Option<u64>>>,
    throttle_last: Option<Vec<Option<u64>>>,
    temperature_max: Option<f64>,
    energy: EnergyAccumulator,
    energy_zones: bool,
    last_energy: Vec<Option<EnergyReading>>,
    first_at: f64,
    last_at: f64,
}

impl SensorAccumulator {
    /// Starts from the trial's first sample, taken at `at` seconds.
    pub fn new(at: f64, first: &SensorSample) -> Self {
        let mut acc = SensorAccumulator {
            first_at: at,
            last_at: at,
            energy_zones: !first.energy.is_empty(),
            ..SensorAccumulator::default()
        };
        acc.take(0.0, first, &[]);
        acc
    }

    /// Adds a sample taken at `at` seconds, ending an interval of
    /// `interval` seconds in which each CPU (by number) was busy `busy`
    /// ticks (empty when unknown).
    pub fn push(&mut self, at: f64, interval: f64, sample: &SensorSample, busy: &[u64]) {
        self.last_at = at;
        self.take(interval, sample, busy);
    }

    fn take(&mut self, interval: f64, sample: &SensorSample, busy: &[u64]) {
        if let Some(reading) = &sample.clock {
            self.clock.push(interval, reading, busy);
        }
        if let Some(counts) = &sample.throttle {
            if self.throttle_first.is_none() {
                self.throttle_first = Some(counts.clone());
            } else {
                self.throttle_last = Some(counts.clone());
            }
        }
        if let Some(c) = sample.temperature_c {
            self.temperature_max = Some(self.temperature_max.map_or(c, |m| m.max(c)));
        }
        if self.energy_zones {
            self.energy.push(&sample.energy);
            self.last_energy.clone_from(&sample.energy);
        }
    }

    /// Writes what the samples showed into `health`; leaves a field `None`
    /// where its sensor gave nothing.
    pub fn finish(mut self, health: &mut TrialHealth) {
        if let Some((mhz, source)) = self.clock.finish() {
            health.clock_mhz = Some(mhz);
            health.clock_source = Some(source);
        }
        if let (Some(before), Some(after)) = (&self.throttle_first, &self.throttle_last) {
            health.throttle_events = thermal::throttle_rise(before, after);
        }
        health.temperature_max_c = self.temperature_max;
        if self.energy_zones {
            self.energy.end(&self.last_energy);
            let seconds = self.last_at - self.first_at;
            if let Some(joules) = self.energy.joules()
                && seconds > 0.0
            {
                health.energy_joules = Some(joules);
                health.power_watts = Some(joules / seconds);
            }
        }
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
    fn an_empty_tree_has_nothing_and_says_so_once() {
        let dir = tempfile::tempdir().unwrap();
        let sensors = Sensors::discover(dir.path());
        assert!(sensors.is_empty());
        let warning = sensors.not_available_warning().unwrap();
        assert!(
            warning.starts_with(
                "effective clock, throttle counters, temperature and energy not available on this host"
            ),
            "{warning}"
        );
        let mut health = TrialHealth::default();
        let readers = sensors.open(&[0]);
        let mut acc = SensorAccumulator::new(0.0, &readers.sample(true));
        acc.push(0.5, 0.5, &readers.sample(true), &[]);
        acc.finish(&mut health);
        assert_eq!(health, TrialHealth::default());
    }

    #[test]
    fn a_trial_reads_clock_throttling_temperature_and_energy() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "sys/devices/system/cpu/online", "0\n");
        let cpu0 = "sys/devices/system/cpu/cpu0";
        write(
            root,
            &format!("{cpu0}/cpufreq/scaling_cur_freq"),
            "3000000\n",
        );
        write(
            root,
            &format!("{cpu0}/thermal_throttle/core_throttle_count"),
            "4\n",
        );
        write(root, "sys/class/thermal/thermal_zone0/temp", "50000\n");
        write(root, "sys/class/powercap/intel-rapl:0/name", "package-0\n");
        write(
            root,
            "sys/class/powercap/intel-rapl:0/energy_uj",
            "1000000\n",
        );
        write(
            root,
            "sys/class/powercap/intel-rapl:0/max_energy_range_uj",
            "262143328850\n",
        );
        let sensors = Sensors::discover(root);
        assert_eq!(sensors.energy_zones(), ["package-0"]);
        // Perf is not tried under a fixture root; everything else is here.
        let readers = sensors.open(&[0]);
        let mut acc = SensorAccumulator::new(0.0, &readers.sample(true));
        write(root, "sys/class/thermal/thermal_zone0/temp", "71000\n");
        write(
            root,
            "sys/class/powercap/intel-rapl:0/energy_uj",
            "6000000\n",
        );
        acc.push(0.25, 0.25, &readers.sample(false), &[]);
        write(root, "sys/class/thermal/thermal_zone0/temp", "65000\n");
        write(
            root,
            "sys/class/powercap/intel-rapl:0/energy_uj",
            "11000000\n",
        );
        write(
            root,
            &format!("{cpu0}/thermal_throttle/core_throttle_count"),
            "6\n",
        );
        acc.push(0.5, 0.25, &readers.sample(true), &[]);
        let mut health = TrialHealth::default();
        acc.finish(&mut health);
        assert_eq!(health.throttle_events, Some(2));
        assert_eq!(health.temperature_max_c, Some(71.0));
        assert_eq!(health.energy_joules, Some(10.0));
        assert_eq!(health.power_watts, Some(20.0));
        assert_eq!(
            health.clock_source,
            Some(effective_clock::ClockSource::Cpufreq)
        );
        assert_eq!(health.clock_mhz, Some(3000.0));
    }
}
