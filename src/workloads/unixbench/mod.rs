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
mod copy_executable;
pub mod copy_main;
pub mod dhrystone;
pub mod execl;
pub mod fcopy;
pub mod forkexec;
pub mod index;
pub mod libc_process;
pub mod pipe;
pub mod program;
pub mod protocol;
pub mod score;
pub mod shell;
pub mod shell_script;
pub mod spawn;
pub mod syscall;
pub mod timed;
pub mod whetstone;

pub use copy_executable::{copy_program, use_copy_program};
pub use copy_main::run_if_asked;
