//! Real-time scheduling and the power-management latency request, as
//! cyclictest uses them.
//!
//! `policy=fifo` runs the measuring threads under `SCHED_FIFO` at a given
//! priority; that needs `CAP_SYS_NICE` or an `RLIMIT_RTPRIO` at least as
//! high. sledge checks it before anything runs and refuses the case with
//! the reason (rather than measuring `other` under a `fifo` label).
//!
//! cyclictest also holds `/dev/cpu_dma_latency` at 0 µs while it runs,
//! which keeps the CPUs out of deep idle states whose exit would be
//! counted as wake-up latency; [`DmaLatency`] does the same.

use std::io::Write;

use anyhow::bail;

/// Scheduling policy of the measuring threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `SCHED_OTHER`, the default time-sharing policy.
    Other,
    /// `SCHED_FIFO` at a priority from 1 to 99.
    Fifo(i32),
}

impl Policy {
    /// Applies the policy to the calling thread.
    pub fn apply(self) -> std::io::Result<()> {
        let (policy, priority) = match self {
            Policy::Other => (libc::SCHED_OTHER, 0),
            Policy::Fifo(p) => (libc::SCHED_FIFO, p),
        };
        let param = libc::sched_param {
            sched_priority: priority,
        };
        // SAFETY: pid 0 is the calling thread; the param is ours.
        if unsafe { libc::sched_setscheduler(0, policy, &param) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Checks, on a short-lived thread, that this process may use the
    /// policy; a clear error names what is missing.
    pub fn check_allowed(self) -> anyhow::Result<()> {
        let Policy::Fifo(priority) = self else {
            return Ok(());
        };
        let result = std::thread::spawn(move || Policy::Fifo(priority).apply())
            .join()
            .map_err(|_| anyhow::anyhow!("the scheduling check panicked"))?;
        if let Err(e) = result {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: getrlimit writes into our struct.
            unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut limit) };
            bail!(
                "policy=fifo priority={priority} is not allowed here ({e}); it needs root, CAP_SYS_NICE or `ulimit -r` of at least {priority} (now {}), and a cgroup with real-time time: use policy=other, or run with the privilege",
                limit.rlim_cur
            );
        }
        Ok(())
    }
}

/// Holds `/dev/cpu_dma_latency` at 0 µs while alive (cyclictest's
/// default; the kernel restores the system's choice when the file is
/// closed).
#[derive(Debug)]
pub struct DmaLatency {
    _file: std::fs::File,
}

/// The PM QoS device.
const DMA_LATENCY_PATH: &str = "/dev/cpu_dma_latency";

impl DmaLatency {
    /// Opens the device and writes 0; the error says why not (commonly: not
    /// root).
    pub fn hold_zero() -> Result<DmaLatency, String> {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(DMA_LATENCY_PATH)
            .map_err(|e| format!("{DMA_LATENCY_PATH}: {e}"))?;
        file.write_all(&0i32.to_ne_bytes())
            .map_err(|e| format!("writing 0 to {DMA_LATENCY_PATH}: {e}"))?;
        Ok(DmaLatency { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_is_always_allowed_and_fifo_is_either_allowed_or_explained() {
        Policy::Other.check_allowed().unwrap();
        match Policy::Fifo(1).check_allowed() {
            Ok(()) => {}
            Err(e) => assert!(e.to_string().contains("CAP_SYS_NICE"), "{e}"),
        }
    }
}
