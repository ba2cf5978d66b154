//! `sledge __net-serve`: the server side of the `net.*` workloads, run on
//! a peer so that `peer=HOST:PORT` measures the network between the two
//! hosts. Hidden: a helper started by hand (or by a script) on the peer;
//! it serves until SIGINT or SIGTERM, then stops every test it runs.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Args;

use super::output::ExitStatus;
use crate::workloads::net::server::Server;

#[derive(Debug, Args)]
pub struct NetServeArgs {
    /// The address and port to listen on.
    #[arg(long, value_name = "ADDR:PORT", default_value = "0.0.0.0:5201")]
    pub listen: SocketAddr,
}

pub fn execute(args: NetServeArgs) -> anyhow::Result<ExitStatus> {
    let server = Server::start(args.listen)?;
    crate::say!("sledge net server listening on {}", server.addr());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .map_err(|e| anyhow::anyhow!("installing the signal handler: {e}"))?;
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
    server.stop();
    Ok(ExitStatus::Success)
}
