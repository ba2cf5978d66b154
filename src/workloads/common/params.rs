//! Parameters shared by many workloads, declared once so that they mean
//! the same everywhere.

use std::time::Duration;

use crate::engine::{ParamKind, ParamRole, ParamSpec};

/// Most threads any workload accepts.
pub const MAX_THREADS: u64 = 4096;

/// `threads`: worker threads; `all` is one per CPU the run may use.
pub fn threads(default: &'static str) -> ParamSpec {
    ParamSpec {
        name: "threads",
        role: ParamRole::CpuCount,
        help: "worker threads (`all`: one per CPU the run may use)",
        kind: ParamKind::Threads { max: MAX_THREADS },
        default,
    }
}

/// `time`: how long one trial runs, like sysbench's `--time`.
pub fn time(default: &'static str) -> ParamSpec {
    ParamSpec {
        name: "time",
        role: ParamRole::TrialTime,
        help: "length of one trial (sysbench's --time)",
        kind: ParamKind::Seconds {
            min: 0.01,
            max: 86_400.0,
        },
        default,
    }
}

/// `events`: stop a trial after this many events (0: only the time limits).
pub fn events() -> ParamSpec {
    ParamSpec {
        name: "events",
        role: ParamRole::Other,
        help: "stop a trial after this many events in total; 0 = no limit (sysbench's --events)",
        kind: ParamKind::Int {
            min: 0,
            max: u64::MAX / 2,
        },
        default: "0",
    }
}

/// The `time` parameter (seconds) as a Duration.
pub fn trial_time(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}
