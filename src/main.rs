//! The sledge binary: parse, run, print the error chain, exit.

use std::process::ExitCode;

use clap::Parser;
use sledge::cli::{Cli, UsageError, execute};

fn main() -> ExitCode {
    // A UnixBench copy (or execl image) runs before anything else.
    if let Some(code) = sledge::workloads::unixbench::run_if_asked() {
        return ExitCode::from(code);
    }
    let cli = Cli::parse();
    match execute(cli) {
        Ok(status) => ExitCode::from(status.code()),
        Err(err) => {
            // An error may quote a document, a store or another host:
            // its control characters are shown, not obeyed.
            sledge::say!("error: {err:#}");
            if err.is::<UsageError>() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}
