//! What watches the host while a trial runs, behind a trait so that the
//! engine's tests decide what the host "did" instead of depending on this
//! machine's load.

use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::monitor::{
    Disturbance, Monitor, SensorAccumulator, SensorReaders, Sensors, TrialHealth,
};

/// How often the real monitor samples /proc during a trial.
const MONITOR_INTERVAL: Duration = Duration::from_millis(200);

/// Starts watching the host for one trial.
pub trait TrialMonitor: Sync {
    /// Called just before a counted trial starts on `cpus`.
    fn start(&self, cpus: &[usize]) -> Box<dyn RunningMonitor>;
}

/// A monitor watching one trial.
pub trait RunningMonitor {
    /// Called just after the trial ends: what the host did meanwhile.
    fn finish(self: Box<Self>) -> TrialHealth;
}

/// The real monitor: samples /proc on the run's CPUs, and the host's
/// clock, throttle counters, temperatures and energy where it has them
/// (see [`Monitor`] and [`Sensors`]).
pub struct ProcMonitor;

/// The host's sensors, found once per process (each round is a process).
pub fn host_sensors() -> &'static Sensors {
    static SENSORS: OnceLock<Sensors> = OnceLock::new();
    SENSORS.get_or_init(|| Sensors::discover(Path::new("/")))
}

impl TrialMonitor for ProcMonitor {
    fn start(&self, cpus: &[usize]) -> Box<dyn RunningMonitor> {
        let sensors = host_sensors();
        let readers = (!sensors.is_empty()).then(|| sensors.open(cpus));
        Box::new(Monitor::start_with_sensors(
            Some(cpus),
            MONITOR_INTERVAL,
            readers,
        ))
    }
}

impl RunningMonitor for Monitor {
    fn finish(self: Box<Self>) -> TrialHealth {
        Monitor::finish(*self)
    }
}

/// A monitor that reports what it was told: for each counted trial in
/// turn, the disturbances listed (none once the list runs out). For tests.
///
/// With [`with_sensors`](Self::with_sensors) it also reads hardware
/// sensors (a fixture tree the test changes as its "hardware" would) at
/// the start and end of each trial, and adds what they show: clock,
/// throttling, temperature, energy, and a `throttled` flag when a throttle
/// counter rose. `/proc` is never read, so this machine's load cannot flag
/// a trial.
#[derive(Debug, Default)]
pub struct ScriptedMonitor {
    script: Mutex<std::collections::VecDeque<Vec<Disturbance>>>,
    sensors: Option<Sensors>,
}

impl ScriptedMonitor {
    /// Reports `flags[i]` for the i-th counted trial it watches.
    pub fn new(flags: Vec<Vec<Disturbance>>) -> Self {
        ScriptedMonitor {
            script: Mutex::new(flags.into()),
            sensors: None,
        }
    }

    /// A monitor that sees a quiet host for every trial.
    pub fn quiet() -> Self {
        Self::default()
    }

    /// Also reads `sensors` around each trial.
    pub fn with_sensors(mut self, sensors: Sensors) -> Self {
        self.sensors = Some(sensors);
        self
    }
}

struct Scripted {
    flags: Vec<Disturbance>,
    /// The sensors' readers, their first sample and when it was taken.
    sensors: Option<(SensorReaders, SensorAccumulator, Instant)>,
}

impl TrialMonitor for ScriptedMonitor {
    fn start(&self, cpus: &[usize]) -> Box<dyn RunningMonitor> {
        let flags = self
            .script
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
            .unwrap_or_default();
        let sensors = self.sensors.as_ref().map(|sensors| {
            let readers = sensors.open(cpus);
            let acc = SensorAccumulator::new(0.0, &readers.sample(true));
            (readers, acc, Instant::now())
        });
        Box::new(Scripted { flags, sensors })
    }
}

impl RunningMonitor for Scripted {
    fn finish(self: Box<Self>) -> TrialHealth {
        let mut health = TrialHealth {
            flags: self.flags,
            ..TrialHealth::default()
        };
        if let Some((readers, mut acc, started)) = self.sensors {
            let seconds = started.elapsed().as_secs_f64();
            acc.push(seconds, seconds, &readers.sample(true), &[]);
            acc.finish(&mut health);
            health.seconds = seconds;
            if health.throttle_events.unwrap_or(0) > 0
                && !health.flags.contains(&Disturbance::Throttled)
            {
                health.flags.push(Disturbance::Throttled);
            }
        }
        health
    }
}
