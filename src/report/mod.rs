//! Reports: the terminal table, JSON, CSV and Markdown exports of a run,
//! comparisons of runs (with performance per unit of price), the listing
//! tables, and UnixBench's index of a run.

pub mod compare;
pub mod compare_table;
pub mod export;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod format;
pub mod history;
pub mod html;
mod import_check;
pub mod listing;
pub mod magnitude;
pub mod noise;
pub mod plan_table;
pub mod portable;
mod portable_stream;
pub mod price;
pub mod run_table;
pub mod summary;
pub mod sweeps;
pub mod unixbench_index;
