//! `sledge __net-serve`: the server side of the `net.*` workloads, run on
//! a peer so that `peer=HOST:PORT` measures the network between the two
//! hosts. Hidden: a helper started by hand (or by a script) on the peer,
//! or by sledge itself over ssh for `peer=USER@HOST`. It serves until
//! SIGINT or SIGTERM (or, with `--until-eof`, the end of its standard
//! input), then stops every test it runs.
//!
//! Its one line on standard output, `sledge net server listening on
//! ADDR:PORT`, carries the port the kernel picked for `--listen ADDR:0`:
//! that is how sledge learns where a server it started over ssh listens.

use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::output::ExitStatus;
use crate::workloads::net::server::{LISTENING, Server};

#[derive(Debug, Args)]
pub struct NetServeArgs {
    /// The address and port to listen on (port 0: one the kernel picks).
    #[arg(long, value_name = "ADDR:PORT", default_value = "0.0.0.0:5201")]
    pub listen: SocketAddr,
    /// Also stop at the end of standard input: started over ssh, the
    /// server then stops when its starter closes its end, when the
    /// connection drops, or when its starter dies.
    #[arg(long)]
    pub until_eof: bool,
}

pub fn execute(args: NetServeArgs) -> anyhow::Result<ExitStatus> {
    let server = Server::start(args.listen)?;
    crate::visible::print_text(&format!("{LISTENING}{}\n", server.addr()))
        .context("writing the listening address to standard output")?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .map_err(|e| anyhow::anyhow!("installing the signal handler: {e}"))?;
    if args.until_eof {
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("net-serve-input".into())
            .spawn(move || {
                let mut sink = [0u8; 256];
                // Whatever comes is ignored; the end (or an error) stops.
                while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
                flag.store(true, Ordering::SeqCst);
            })
            .context("starting the thread that watches standard input")?;
    }
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
    server.stop();
    Ok(ExitStatus::Success)
}
