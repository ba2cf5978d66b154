//! Reports: the scorecard and the terminal tables, JSON, CSV and Markdown
//! exports of a run, comparisons of runs (with performance per unit of
//! price), the listing tables, pivot tables of two-parameter sweeps, the
//! sections a run's workloads add (UnixBench's index), and the outlier
//! hosts of a fleet. What they show is decided in `crate::analysis`; this
//! layer renders it.

pub mod calibration;
pub mod compare_table;
pub mod export;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod fleet_outliers;
pub mod fleet_run;
pub mod format;
pub mod history_text;
pub mod html;
pub mod http_load;
mod import_check;
pub mod import_summary;
pub mod listing;
pub mod magnitude;
pub mod pivot;
pub mod plan_table;
pub mod portable;
mod portable_records;
mod portable_stream;
pub mod run_sections;
pub mod run_table;
pub mod scorecard;
pub mod summary;
pub mod sweeps;
