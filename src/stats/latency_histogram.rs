//! The one shape of latency histogram sledge records, so that every
//! histogram of a case (the engine's, the HTTP generator's, the storage
//! workloads') can be merged and exported alike.

use hdrhistogram::Histogram;

/// Latency histograms record nanoseconds from 1 ns to one hour with three
/// significant digits, the resolution wrk and HdrHistogram's docs use.
pub const LATENCY_MAX_NS: u64 = 3_600_000_000_000;
/// Significant digits of latency histograms.
pub const LATENCY_SIGFIG: u8 = 3;

/// A fresh latency histogram with the common bounds, so that every
/// histogram of a case can be merged.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_MAX_NS, LATENCY_SIGFIG)
        .expect("constant histogram bounds are valid")
}
