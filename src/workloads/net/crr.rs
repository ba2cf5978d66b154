//! `net.crr`: netperf's TCP_CRR. Every transaction opens a connection,
//! sends a request of `req_size` bytes, reads a response of `resp_size`
//! bytes and closes: the rate at which the host sets up and tears down
//! connections, which TCP_RR's one long connection never pays.

use crate::engine::{Case, CaseEnv, ParamSet, ParamSpec, Params, Workload};

use super::client::Peer;
use super::rr::{RrCase, RrParams};

const ID: &str = "net.crr";

/// The `net.crr` workload.
pub struct NetCrr;

impl Workload for NetCrr {
    fn id(&self) -> &'static str {
        ID
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "a new TCP connection per request/response; compatible with netperf TCP_CRR (transactions/s, latency)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        RrParams::specs()
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        let p = RrParams::from_set(p);
        Ok(Box::new(RrCase {
            id: ID,
            peer: Peer::parse(ID, &p.peer, p.port as u16)?,
            target: None,
            streams: p.streams as u32,
            req_size: p.req_size as u32,
            resp_size: p.resp_size as u32,
            time: p.time,
            connect_each: true,
        }))
    }
    fn cpus_used(&self, _params: &ParamSet) -> Option<usize> {
        super::cpus_used()
    }
    fn latency_spectrum(&self) -> bool {
        true
    }
}
