//! `net.crr`: netperf's TCP_CRR. Every transaction opens a connection,
//! sends a request of `req_size` bytes, reads a response of `resp_size`
//! bytes and closes: the rate at which the host sets up and tears down
//! connections, which TCP_RR's one long connection never pays. The
//! parameters, the case and the client are `net.rr`'s ([`super::rr`]).

use super::rr::RrWorkload;

/// The `net.crr` workload.
pub const NET_CRR: RrWorkload = RrWorkload {
    id: "net.crr",
    summary: "a new TCP connection per request/response; compatible with netperf TCP_CRR (transactions/s, latency)",
    connect_each: true,
};
