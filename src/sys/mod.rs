//! The lowest layer: thin, safe wrappers over the operating system and
//! threads that know nothing of benchmarks, shared by every layer above
//! (CPU affinity, the open-file limit, file-system space, anonymous memory
//! mappings, starting worker threads together, this program's own
//! executable, its peak resident memory, children that die with it, signals
//! by name, and a thread's timer slack).

pub mod affinity;
pub mod anon_map;
pub mod fd_limit;
pub mod fs_space;
pub mod own_exe;
pub mod peak_rss;
pub mod process;
pub mod signal;
pub mod timer_slack;
pub mod workers;
