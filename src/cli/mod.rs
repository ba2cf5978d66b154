//! The command line: clap definitions (`command_line.rs`) and the wiring
//! from each subcommand to the library, one file per subcommand. No logic
//! beyond wiring lives here: this file only hands each parsed command to
//! its file, with what that file cannot name itself (the store the user
//! named, the command line's own definition).

mod ab;
mod calibrate;
mod command_line;
mod compare;
mod completions;
mod delete;
mod export;
mod fleet;
mod format_args;
mod history;
mod http;
mod http_agent;
mod http_args;
mod http_from;
mod import;
mod list;
mod man;
mod man_dir;
mod named_store;
mod net_serve;
mod open_runs;
mod output;
mod output_file;
mod plan;
mod probe;
mod progress_bar;
mod report;
mod round;
mod run;
mod run_args;
mod run_progress;
mod run_steps;
mod show;
mod workloads;

use clap::CommandFactory as _;

use named_store::{STORE_ENV, store_arg};

use command_line::Command;

pub use command_line::Cli;
pub use output::{Cancelled, ExitStatus, UsageError};

/// Runs the parsed command line.
pub fn execute(cli: Cli) -> anyhow::Result<ExitStatus> {
    // Only the commands that use a store read (and check) SLEDGE_STORE.
    let store = || store_arg(cli.store.clone(), std::env::var_os(STORE_ENV));
    match cli.command {
        Command::Run(args) => run::execute(args, store()?),
        Command::Plan(args) => plan::execute(args, store()?),
        Command::Ab(args) => ab::execute(*args, store()?),
        Command::Workloads => workloads::execute(),
        Command::Profiles => workloads::execute_profiles(),
        Command::Probe(args) => probe::execute(args),
        Command::List(args) => list::execute(args, store()?),
        Command::Show(args) => show::execute(args, store()?),
        Command::Calibrate(args) => calibrate::execute(args, store()?),
        Command::Compare(args) => compare::execute(args, store()?),
        Command::History(args) => history::execute(args, store()?),
        Command::Http(args) => http::execute(args),
        Command::Round => round::execute(),
        Command::HttpAgent => http_agent::execute(),
        Command::NetServe(args) => net_serve::execute(args),
        Command::Export(args) => export::execute(args, store()?),
        Command::Import(args) => import::execute(args, store()?),
        Command::Fleet(args) => fleet::execute(args, store()?, command_line::parse_run_args),
        Command::Delete(args) => delete::execute(args, store()?),
        Command::Report(args) => report::execute(args, store()?),
        Command::Completions(args) => completions::execute(args, Cli::command()),
        Command::Man(args) => man::execute(args, Cli::command()),
    }
}
