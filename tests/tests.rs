//! Integration tests: one test binary, one module per area (as ripgrep
//! does), which keeps build time down.

mod common;

mod ab;
mod battery;
mod build;
mod cli_errors;
mod cli_flags;
mod cli_run;
mod cli_store;
mod command;
mod compute;
mod db_workloads;
mod fleet;
mod hardware;
mod history;
mod host_needs;
mod http;
mod http_db;
mod http_distributed;
mod http_server;
mod http_url;
mod i686;
mod install;
mod junit;
mod layers;
mod module_cycles;
mod net;
mod netns_hosts;
mod notes;
mod output_rules;
mod pg_store;
mod plan;
mod portable;
mod report;
mod rounds;
mod sched;
mod storage;
mod tool_parsers;
mod toy;
mod unixbench;
