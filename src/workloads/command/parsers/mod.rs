//! Parsers of the classic tools' outputs: what fio, pgbench, sysbench,
//! redis-benchmark, wrk, ab, stress-ng and iperf3 print, read into
//! metrics named as the tool names them, with their units and which way
//! is better. A command workload picks one by its program's name or by
//! `-p parser=NAME`.
//!
//! Each parser is a module of its own, tested on output the real tool
//! printed (the fixtures beside them), so that what sledge stores is what
//! the tool printed.

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

/// Every parser.
pub fn all() -> Vec<&'static dyn ToolParser> {
    Vec::new()
}

/// The parser named `name`.
pub fn by_name(name: &str) -> Option<&'static dyn ToolParser> {
    all().into_iter().find(|p| p.name() == name)
}

/// The parser for a program (its file name, without the directory).
pub fn for_program(program: &str) -> Option<&'static dyn ToolParser> {
    let name = std::path::Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    all().into_iter().find(|p| p.programs().contains(&name))
}
