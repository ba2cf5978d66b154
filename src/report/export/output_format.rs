//! [`Format`], the output format a command was asked for, and the one
//! place that hands a view to that format's module. The modules render
//! what they can and say `None` for a view they have no rendering of;
//! the refusal, which names the format's flag, is made here, so that no
//! format module needs to know the others or the enum that lists them.

use super::view::View;
use super::{csv, json, junit, markdown, table};

/// How a command prints its results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// Text for a terminal: the scorecard, the tables (the default).
    #[default]
    Table,
    /// The documented JSON shapes (docs/json.md), pretty-printed.
    Json,
    /// One CSV row per metric.
    Csv,
    /// Markdown tables, for pasting into an issue or a report.
    Markdown,
    /// A JUnit XML report of a comparison, for CI systems: a test case
    /// per compared case, failed where the regression gate fails it.
    Junit,
}

impl Format {
    /// `view` in this format: the whole text to write to stdout, or the
    /// refusal of a view the format has no rendering of.
    pub fn render(self, view: &View<'_>) -> anyhow::Result<String> {
        let rendered = match self {
            Format::Table => Some(table::render(view)),
            Format::Json => json::render(view),
            Format::Csv => csv::render(view),
            Format::Markdown => markdown::render(view),
            Format::Junit => junit::render(view),
        };
        rendered.unwrap_or_else(|| Err(not_offered(self, view)))
    }

    /// The flag that asks for the format (`--json`), or `table` for the
    /// default: what a refusal names.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "--json",
            Format::Csv => "--csv",
            Format::Markdown => "--markdown",
            Format::Junit => "--junit",
        }
    }

    /// Whether people read this format (the terminal's table, Markdown),
    /// rather than programs (JSON, CSV, JUnit): what a person is told on
    /// stderr beside the output (where a run was stored) a program finds
    /// in the output or does without, and a result that only has a table
    /// for people (a calibration's noise) has nothing for programs.
    pub fn is_for_people(self) -> bool {
        match self {
            Format::Table | Format::Markdown => true,
            Format::Json | Format::Csv | Format::Junit => false,
        }
    }

    /// Whether the format shows a run's pivot tables (`--pivot`), so that
    /// a `--pivot` that makes no table is worth a note: every format of a
    /// run but JSON, whose run is the stored record.
    pub fn shows_pivot_tables(self) -> bool {
        match self {
            Format::Table | Format::Csv | Format::Markdown => true,
            Format::Json | Format::Junit => false,
        }
    }
}

/// The refusal of a format that has no rendering of `view`.
fn not_offered(format: Format, view: &View<'_>) -> anyhow::Error {
    anyhow::anyhow!("{} cannot show {}", format.name(), view.what())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_without_a_rendering_of_a_view_refuses_it_by_name() {
        let none = View::Runs {
            runs: &[],
            no_store_at: None,
        };
        assert_eq!(Format::Json.render(&none).unwrap(), "[]\n");
        for (format, refusal) in [
            (Format::Csv, "--csv cannot show the list of runs"),
            (Format::Markdown, "--markdown cannot show the list of runs"),
            (Format::Junit, "--junit cannot show the list of runs"),
        ] {
            assert_eq!(format.render(&none).unwrap_err().to_string(), refusal);
        }
        let missing = View::Runs {
            runs: &[],
            no_store_at: Some(std::path::Path::new("/x/results.db")),
        };
        assert_eq!(
            Format::Table.render(&missing).unwrap(),
            "no runs stored yet (there is no store at /x/results.db); `sledge run` makes one\n"
        );
        assert_eq!(Format::Json.render(&missing).unwrap(), "[]\n");
    }
}
