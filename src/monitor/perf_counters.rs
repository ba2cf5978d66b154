//! Core cycles and reference cycles of one CPU through `perf_event_open`:
//! the perf way to APERF/MPERF where the kernel exposes a hardware PMU.
//!
//! `cycles` counts unhalted core cycles at the clock the core really ran;
//! `ref-cycles` counts unhalted cycles at the constant reference (TSC)
//! rate. Their ratio times the TSC rate is the average clock while the
//! CPU was busy, the same figure turbostat's `Bzy_MHz` gives. The two are
//! opened as one group so that the kernel schedules them together: if the
//! PMU is shared and the group multiplexed, both miss the same time and
//! the ratio stays right, so no scaling by enabled/running time is needed.
//!
//! Counting a whole CPU (pid -1) needs root, CAP_PERFMON or
//! `kernel.perf_event_paranoid` at 0 or below; a guest without a virtual
//! PMU and most containers have none. The struct below is the first
//! version of `perf_event_attr` (`PERF_ATTR_SIZE_VER0`, 64 bytes), which
//! every kernel since 2.6.31 accepts.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `PERF_TYPE_HARDWARE`.
const PERF_TYPE_HARDWARE: u32 = 0;
/// `PERF_COUNT_HW_CPU_CYCLES`.
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
/// `PERF_COUNT_HW_REF_CPU_CYCLES`.
const PERF_COUNT_HW_REF_CPU_CYCLES: u64 = 9;
/// `PERF_FORMAT_GROUP`: one read of the leader returns every member.
const PERF_FORMAT_GROUP: u64 = 1 << 3;
/// `PERF_FLAG_FD_CLOEXEC`.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// `PERF_ATTR_SIZE_VER0`.
const PERF_ATTR_SIZE_VER0: u32 = 64;

/// The first 64 bytes of the kernel's `struct perf_event_attr`.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// The bit field (`disabled`, `inherit`, `exclude_*`...): all clear,
    /// so the counter starts at once and counts user and kernel time.
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    bp_addr: u64,
}

const _: () = assert!(std::mem::size_of::<PerfEventAttr>() == PERF_ATTR_SIZE_VER0 as usize);

/// Cycles and reference cycles of one CPU, counting from when it was
/// opened until dropped.
#[derive(Debug)]
pub(crate) struct CycleCounters {
    leader: OwnedFd,
    /// Kept open: closing it would remove it from the group.
    _member: OwnedFd,
}

fn open_counter(config: u64, cpu: usize, group: Option<&OwnedFd>) -> io::Result<OwnedFd> {
    let attr = PerfEventAttr {
        kind: PERF_TYPE_HARDWARE,
        size: PERF_ATTR_SIZE_VER0,
        config,
        read_format: PERF_FORMAT_GROUP,
        ..PerfEventAttr::default()
    };
    let cpu = libc::c_int::try_from(cpu).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let group_fd = group.map_or(-1, |fd| fd.as_raw_fd());
    // SAFETY: the attribute struct is valid for the size it declares and
    // outlives the call; the kernel only reads it.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            -1 as libc::pid_t,
            cpu,
            group_fd,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

impl CycleCounters {
    /// Starts counting on `cpu`.
    pub(crate) fn open(cpu: usize) -> io::Result<Self> {
        let leader = open_counter(PERF_COUNT_HW_CPU_CYCLES, cpu, None)?;
        let member = open_counter(PERF_COUNT_HW_REF_CPU_CYCLES, cpu, Some(&leader))?;
        Ok(CycleCounters {
            leader,
            _member: member,
        })
    }

    /// `(cycles, reference cycles)` since opening.
    pub(crate) fn read(&self) -> io::Result<(u64, u64)> {
        let mut words = [0u64; 3];
        // SAFETY: the buffer is valid for its whole size.
        let n = unsafe {
            libc::read(
                self.leader.as_raw_fd(),
                words.as_mut_ptr().cast(),
                std::mem::size_of_val(&words),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        parse_group(&words, n as usize)
    }
}

/// A group read: `nr`, then one value per member, leader first.
fn parse_group(words: &[u64; 3], bytes: usize) -> io::Result<(u64, u64)> {
    if bytes != std::mem::size_of_val(words) || words[0] != 2 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "perf group read gave {bytes} bytes and {} counters, expected 24 and 2",
                words[0]
            ),
        ));
    }
    Ok((words[1], words[2]))
}

/// Why counters could not be opened, in words a user can act on.
pub(crate) fn explain(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => "perf cycle counters of a whole CPU need root, \
             CAP_PERFMON or kernel.perf_event_paranoid <= 0"
            .to_string(),
        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL) => {
            "no hardware PMU with cycles and ref-cycles (usual in a VM)".to_string()
        }
        Some(libc::ENOSYS) => "the kernel has no perf events".to_string(),
        _ => format!("perf cycle counters cannot be opened ({err})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_reads_are_checked() {
        assert_eq!(parse_group(&[2, 3_000, 2_000], 24).unwrap(), (3_000, 2_000));
        assert!(parse_group(&[1, 3_000, 0], 16).is_err());
        assert!(parse_group(&[2, 3_000, 2_000], 16).is_err());
    }

    #[test]
    fn opening_either_counts_or_says_why_not() {
        // On a host with a PMU and the right to use it this counts; on one
        // without (this project's VMs) it must fail cleanly with a reason.
        match CycleCounters::open(0) {
            Ok(counters) => {
                let mut x = 0u64;
                for i in 0..1_000_000u64 {
                    x = std::hint::black_box(x.wrapping_add(i));
                }
                let (cycles, reference) = counters.read().unwrap();
                assert!(cycles > 0 && reference > 0, "{cycles} {reference}");
            }
            Err(err) => assert!(!explain(&err).is_empty()),
        }
    }

    #[test]
    fn reasons_name_what_to_do() {
        let denied = explain(&io::Error::from_raw_os_error(libc::EACCES));
        assert!(denied.contains("root"), "{denied}");
        let absent = explain(&io::Error::from_raw_os_error(libc::ENOENT));
        assert!(absent.contains("PMU"), "{absent}");
    }
}
