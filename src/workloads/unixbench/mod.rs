//! The UnixBench family: each of the tests behind UnixBench's System
//! Benchmarks Index as its own workload, defined as byte-unixbench 6.0
//! defines them (its `Run` script and `src/` programs), reporting
//! UnixBench's units (lps, lpm, KBps, MWIPS).
//!
//! | workload | UnixBench test |
//! |---|---|
//! | `unixbench.dhrystone` | dhry2reg: Dhrystone 2 using register variables |
//! | `unixbench.whetstone` | whetstone-double: Double-Precision Whetstone |
//! | `unixbench.execl` | execl: Execl Throughput |
//! | `unixbench.fcopy` | fstime, fsbuffer, fsdisk: File Copy 1024 / 256 / 4096 bufsize |
//! | `unixbench.pipe` | pipe: Pipe Throughput |
//! | `unixbench.context` | context1: Pipe-based Context Switching |
//! | `unixbench.spawn` | spawn: Process Creation |
//! | `unixbench.syscall` | syscall: System Call Overhead |
//! | `unixbench.shell` | shell1, shell8: Shell Scripts (1 / 8 concurrent) |
//!
//! As in UnixBench, every copy is a fresh process of its own (a sledge
//! started with a hidden first argument, see [`copy_main`]), `copies=N`
//! runs N at once and the score is their sum; the index over the tests is
//! computed from a stored run by [`index`], the section these workloads
//! add to a run's report.

pub mod case;
pub mod context;
pub mod copies;
pub mod copy_main;
pub mod dhrystone;
pub mod execl;
pub mod fcopy;
pub mod forkexec;
pub mod index;
pub mod pipe;
pub mod process;
pub mod program;
pub mod protocol;
pub mod score;
pub mod shell;
pub mod shell_script;
pub mod spawn;
pub mod syscall;
pub mod timed;
pub mod whetstone;

use std::path::PathBuf;
use std::sync::OnceLock;

pub use copy_main::run_if_asked;

/// The executable copies are started from, when not this process's own.
static COPY_PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Makes copies start from `path` instead of this process's executable:
/// for a program that embeds sledge's library (such as its test binaries)
/// and so cannot run copies itself. The first call wins.
pub fn use_copy_program(path: impl Into<PathBuf>) {
    let _ = COPY_PROGRAM.set(path.into());
}

/// The executable that runs copies: the one set by [`use_copy_program`],
/// else this process's own (through `/proc/self/exe` when the file was
/// replaced while sledge runs).
pub fn copy_program() -> anyhow::Result<PathBuf> {
    if let Some(path) = COPY_PROGRAM.get() {
        return Ok(path.clone());
    }
    Ok(crate::sys::own_exe::own_executable()?)
}
