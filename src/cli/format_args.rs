//! The output-format flags (`--json`, `--csv`, `--markdown`), parsed once
//! into a [`Format`] by one clap args struct that every printing command
//! flattens in.
//!
//! Commands offer different formats, with their own help text: each names
//! its set with a [`FormatSet`], so that `sledge list` keeps `--json`
//! alone and `sledge show` three, and a command never gains a flag it
//! had no output for. The flags of a set exclude each other: one format
//! per command line.

use std::marker::PhantomData;

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use crate::report::export::Format;

/// One format flag a command offers.
#[derive(Debug)]
pub struct FormatFlag {
    /// The format the flag asks for (not [`Format::Table`], the default).
    pub format: Format,
    /// The flag's help, as `--help` shows it.
    pub help: &'static str,
}

impl FormatFlag {
    /// The flag's id and long name: `json` for `--json`.
    fn id(&self) -> &'static str {
        self.format.name().trim_start_matches("--")
    }
}

/// The format flags one command offers.
pub trait FormatSet {
    /// The flags, in the order `--help` lists them.
    const FLAGS: &'static [FormatFlag];
}

/// The format a command's flags chose: flattened into its args
/// (`#[command(flatten)]`), read with [`FormatArgs::format`].
#[derive(Debug)]
pub struct FormatArgs<S> {
    format: Format,
    set: PhantomData<S>,
}

impl<S> FormatArgs<S> {
    /// The chosen format: the flag given, else the table.
    pub fn format(&self) -> Format {
        self.format
    }
}

impl<S: FormatSet> FromArgMatches for FormatArgs<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let format = S::FLAGS
            .iter()
            .find(|flag| matches.get_flag(flag.id()))
            .map_or(Format::Table, |flag| flag.format);
        Ok(FormatArgs {
            format,
            set: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl<S: FormatSet> Args for FormatArgs<S> {
    fn augment_args(cmd: Command) -> Command {
        S::FLAGS.iter().fold(cmd, |cmd, flag| {
            let others = S::FLAGS
                .iter()
                .map(FormatFlag::id)
                .filter(|&id| id != flag.id());
            cmd.arg(
                Arg::new(flag.id())
                    .long(flag.id())
                    .action(ArgAction::SetTrue)
                    .help(flag.help)
                    .conflicts_with_all(others),
            )
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug)]
    struct Two;

    impl FormatSet for Two {
        const FLAGS: &'static [FormatFlag] = &[
            FormatFlag {
                format: Format::Json,
                help: "As JSON",
            },
            FormatFlag {
                format: Format::Markdown,
                help: "As Markdown",
            },
        ];
    }

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        format: FormatArgs<Two>,
    }

    #[test]
    fn the_flag_given_is_the_format_and_none_is_the_table() {
        let format = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
                .map(|cli| cli.format.format())
        };
        assert_eq!(format(&[]).unwrap(), Format::Table);
        assert_eq!(format(&["--json"]).unwrap(), Format::Json);
        assert_eq!(format(&["--markdown"]).unwrap(), Format::Markdown);
        assert!(format(&["--json", "--markdown"]).is_err());
        assert!(format(&["--csv"]).is_err(), "a flag the set lacks");
    }
}
