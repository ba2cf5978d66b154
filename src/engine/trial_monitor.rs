//! What watches the host while a trial runs, behind a trait so that the
//! engine's tests decide what the host "did" instead of depending on this
//! machine's load.

use std::sync::Mutex;
use std::time::Duration;

use crate::monitor::{Disturbance, Monitor, TrialHealth};

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

/// The real monitor: samples /proc on the run's CPUs (see [`Monitor`]).
pub struct ProcMonitor;

impl TrialMonitor for ProcMonitor {
    fn start(&self, cpus: &[usize]) -> Box<dyn RunningMonitor> {
        Box::new(Monitor::start_on(Some(cpus), MONITOR_INTERVAL))
    }
}

impl RunningMonitor for Monitor {
    fn finish(self: Box<Self>) -> TrialHealth {
        Monitor::finish(*self)
    }
}

/// A monitor that reports what it was told: for each counted trial in
/// turn, the disturbances listed (none once the list runs out). For tests.
#[derive(Debug, Default)]
pub struct ScriptedMonitor {
    script: Mutex<std::collections::VecDeque<Vec<Disturbance>>>,
}

impl ScriptedMonitor {
    /// Reports `flags[i]` for the i-th counted trial it watches.
    pub fn new(flags: Vec<Vec<Disturbance>>) -> Self {
        ScriptedMonitor {
            script: Mutex::new(flags.into()),
        }
    }

    /// A monitor that sees a quiet host for every trial.
    pub fn quiet() -> Self {
        Self::default()
    }
}

struct Scripted(Vec<Disturbance>);

impl TrialMonitor for ScriptedMonitor {
    fn start(&self, _cpus: &[usize]) -> Box<dyn RunningMonitor> {
        let flags = self
            .script
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
            .unwrap_or_default();
        Box::new(Scripted(flags))
    }
}

impl RunningMonitor for Scripted {
    fn finish(self: Box<Self>) -> TrialHealth {
        TrialHealth {
            flags: self.0,
            ..TrialHealth::default()
        }
    }
}
