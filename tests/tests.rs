//! Integration tests: one test binary, one module per area (as ripgrep
//! does), which keeps build time down.

mod common;

mod cli_errors;
mod cli_run;
mod compute;
mod http;
mod http_db;
mod storage;
mod unixbench;
