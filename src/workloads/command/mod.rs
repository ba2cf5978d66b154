//! The user's own software as a workload: any command, timed as hyperfine
//! times it (`workload.rs`, `case.rs`, one run in `run_once.rs`), with
//! placeholders filled from parameters (`template.rs`) and figures read
//! from what it prints: a regular expression or a JSON pointer the user
//! gives (`output_metric.rs`), or a parser of the classic tool it is
//! (`parsers/`).

pub mod case;
pub mod output_metric;
pub mod parsers;
pub mod run_once;
pub mod template;
pub mod workload;
