//! The lowest layer: thin, safe wrappers over the operating system and
//! threads that know nothing of benchmarks, shared by every layer above
//! (CPU affinity, the open-file limit, file-system space, anonymous memory
//! mappings, starting worker threads together, this program's own
//! executable and which architecture a build is for, its peak resident memory, children that die with it, commands run as process groups of their own
//! and ended with nothing left behind, signals
//! by name, a thread's timer slack, and a kernel tunable's file found so
//! that writing it can change nothing else).

pub mod affinity;
pub mod anon_map;
pub mod build_arch;
pub mod child_process;
pub mod fd_limit;
pub mod fs_space;
pub mod group_command;
pub mod own_exe;
pub mod peak_rss;
pub mod signal;
pub mod timer_slack;
pub mod tunable_file;
pub mod workers;
