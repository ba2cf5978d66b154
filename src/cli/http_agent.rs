//! `sledge __http-agent`: one client host's side of `sledge http --from`
//! (see `http::distributed`). Hidden: only the coordinator starts it, over
//! ssh or as a child process; the protocol is on stdin and stdout.

use super::output::ExitStatus;
use crate::http::distributed::agent;

/// Serves one load. SIGINT is ignored: a Ctrl-C on the coordinator's
/// terminal also reaches agents started as its children, and the
/// coordinator stops them itself (a `stop`, or the end of their input)
/// so that they still send what they measured.
pub fn execute() -> anyhow::Result<ExitStatus> {
    crate::sys::signal::ignore_sigint();
    let input = std::io::BufReader::new(std::io::stdin());
    agent::serve(input, std::io::stdout())?;
    Ok(ExitStatus::Success)
}
