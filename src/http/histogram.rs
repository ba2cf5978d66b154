//! The generator's latency histograms.

/// A latency histogram with the bounds every workload uses, so that the
/// generator's histograms merge with the engine's.
pub(crate) fn histogram() -> hdrhistogram::Histogram<u64> {
    crate::stats::latency_histogram()
}
