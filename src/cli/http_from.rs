//! `sledge http --from HOSTS`: the load of `sledge http` generated from
//! several client hosts at once, their results merged exactly.

use super::http_args::{HttpArgs, load_usage};
use super::output::{Cancelled, ExitStatus, print};
use crate::engine::CancelToken;
use crate::http::LoadConfig;
use crate::http::distributed::run_from;
use crate::report::export::View;
use crate::report::http_load::{HostsShown, hosts_failures};

/// Runs `config` (checked already) from every host of `hosts` and prints
/// each host's figures and the merged ones.
pub fn execute(
    args: &HttpArgs,
    hosts: &str,
    config: &LoadConfig,
    cancel: &CancelToken,
) -> anyhow::Result<ExitStatus> {
    let from = args.client_hosts(hosts);
    let note = |host: &crate::remote::SshHost, text: &str| crate::say!("[{host}] {text}");
    let report = match run_from(&from, &args.urls, args.threads, config, cancel, &note) {
        Err(e) if e.is::<Cancelled>() => {
            crate::say!("interrupted (Ctrl-C) before the start: nothing was sent to the server");
            return Ok(ExitStatus::Interrupted);
        }
        other => other.map_err(load_usage)?,
    };
    let shown = HostsShown {
        urls: &args.urls,
        report: &report,
    };
    print(&args.format.format().render(&View::HttpHosts(&shown))?)?;
    if report.interrupted {
        return Ok(ExitStatus::Interrupted);
    }
    let failures = hosts_failures(&report);
    for line in &failures {
        crate::say!("error: {line}");
    }
    Ok(if failures.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
