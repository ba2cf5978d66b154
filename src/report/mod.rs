//! Reports: the terminal table, JSON, CSV and Markdown exports of a run,
//! comparisons of runs, the listing tables, and UnixBench's index of a run.

pub mod compare;
pub mod export;
pub mod format;
pub mod listing;
pub mod run_table;
pub mod unixbench_index;
