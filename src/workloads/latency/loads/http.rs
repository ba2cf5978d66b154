//! The `http` load: sledge's built-in server and its load generator on
//! loopback, a closed loop of 2 KiB requests (siege's page size).

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;

use crate::engine::CancelToken;
use crate::http::{LoadConfig, Model, Server, ServerConfig, parse_target};

/// The page requested.
const PAGE_BYTES: u64 = 2 << 10;
/// Connections per generator thread.
const CONNECTIONS_PER_THREAD: usize = 8;
/// The generator needs a duration; the stop flag ends it long before.
const AT_MOST: Duration = Duration::from_secs(24 * 3600);

/// Serves and loads until `stop` is set, with `threads` threads in all
/// (half serving, half generating; one each at least).
pub fn serve_and_load_until_stopped(threads: usize, stop: &CancelToken) -> anyhow::Result<()> {
    let half = (threads / 2).max(1);
    let mut server = Server::start(&ServerConfig {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        model: Model::Async,
        threads: half,
        cpus: None,
        sizes: vec![PAGE_BYTES],
        dynamic: None,
        limits: Default::default(),
    })
    .context("starting the built-in server for the http load")?;
    let url = server.url(&format!("/static/{PAGE_BYTES}"));
    let result = parse_target(&url)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .and_then(|target| {
            let mut config = LoadConfig::closed(vec![target], half * CONNECTIONS_PER_THREAD);
            config.threads = half;
            config.duration = Some(AT_MOST);
            crate::http::run_until_cancelled(&config, stop)
        });
    let stopped = server.stop();
    let (report, _cancelled) = result.context("the http load's generator failed")?;
    stopped.context("stopping the http load's server")?;
    if report.responses == 0 && !stop.is_cancelled() {
        anyhow::bail!("the http load got no response from the built-in server");
    }
    Ok(())
}
