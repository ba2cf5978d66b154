//! What every parser of a tool's output answers.

use crate::engine::Metric;

/// A classic tool's output format.
pub trait ToolParser: Sync {
    /// Its name for `-p parser=NAME` (`fio`, `redis-benchmark`).
    fn name(&self) -> &'static str;
    /// The program names that choose it when the command runs them
    /// (`fio`; `ab`, `ab2`).
    fn programs(&self) -> &'static [&'static str];
    /// How the tool must be run for this parser to read it, said when its
    /// output cannot be read (`--output-format=json`).
    fn needs(&self) -> &'static str;
    /// The figures of one run's standard output, as the tool names them;
    /// an error says what was expected and not found.
    fn parse(&self, stdout: &str) -> Result<Vec<Metric>, String>;
}
