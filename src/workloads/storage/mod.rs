//! Storage workloads: sysbench-compatible file I/O, a bonnie++-style disk
//! test and a dbench/tbench-style file-server load. All of them write only
//! inside a scratch subdirectory of `--param dir=PATH` (see `common::workdir`).

pub mod disk;
pub mod fileio;
pub mod fileio_requests;
pub mod fileserver;
pub mod fileserver_load;
pub mod fileserver_mix;
pub mod fileserver_net;
pub mod io;
