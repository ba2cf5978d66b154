//! The output formats every command that prints results shares: one
//! [`Format`], chosen once on the command line (`--json`, `--csv`,
//! `--markdown`, `--junit`, else the terminal table), and one module per
//! format rendering any [`View`], as hyperfine's `src/export/` has them.
//!
//! A command builds the view of what it prints (a run, a comparison, a
//! history, ...) and asks the chosen format to render it: it never looks
//! at which format that is. A format that has no rendering of a view
//! refuses it by name, though the command line offers a format only where
//! it has something to render. What a command does around its output that
//! depends on the format (a line on stderr for people) asks the format
//! what it is for ([`Format::is_for_people`]), not which one it is.

mod csv;
mod json;
mod junit;
mod markdown;
mod output_format;
mod table;
mod view;

pub use output_format::Format;
pub use view::{ComparisonShown, RunShown, RunView, View};
