//! The latency percentile spectrum of a case: from the HdrHistogram stored
//! with its counted trials, the latency at every quarter of a nine, as far
//! into the tail as the number of values supports. The HTML report draws
//! it for the workloads that measure latency per request.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;

/// The deepest point of a spectrum, in nines: p99.999. Further out, even
/// a long HTTP run's histogram holds a handful of values.
const MAX_NINES: f64 = 5.0;

/// (nines, milliseconds) from a serialized histogram of nanoseconds: every
/// quarter of a nine from p0 up to what the sample count supports (p99.9
/// needs about 1000 values), at most [`MAX_NINES`]; `None` when the bytes
/// are no histogram or it is empty.
pub fn percentile_spectrum(bytes: &[u8]) -> Option<Vec<(f64, f64)>> {
    let histogram: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).ok()?;
    if histogram.is_empty() {
        return None;
    }
    let max_nines = (histogram.len() as f64).log10().min(MAX_NINES);
    let points = (0..=20)
        .map(|k| f64::from(k) / 4.0)
        .filter(|&nines| nines <= max_nines)
        .map(|nines| {
            let quantile = 1.0 - 10f64.powf(-nines);
            (nines, histogram.value_at_quantile(quantile) as f64 / 1e6)
        })
        .collect();
    Some(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_percentile_spectrum_follows_the_histogram() {
        let points = percentile_spectrum(&crate::report::fixtures::latency_histogram(100)).unwrap();
        // 1000 values: up to p99.9 (three nines), in quarter nines.
        assert_eq!(points.len(), 13);
        assert_eq!(points[0].0, 0.0);
        assert_eq!(points.last().unwrap().0, 3.0);
        assert!(points.windows(2).all(|w| w[1].1 >= w[0].1), "{points:?}");
        // The median is 50-150 us and the tail 20x the median: 1 ms.
        let median = points[1].1; // p44 ~ p50
        assert!((0.04..0.2).contains(&median), "{points:?}");
        assert!((points.last().unwrap().1 - 1.0).abs() < 0.01, "{points:?}");
        assert_eq!(percentile_spectrum(b"not a histogram"), None);
    }
}
