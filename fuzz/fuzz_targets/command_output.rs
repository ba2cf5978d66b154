//! What a command prints, read by the `command` workload: the metrics a
//! user gives (`-p metric=...`, the input's first line) and every classic
//! tool's parser, on arbitrary text (the rest of the input), as any
//! program could print it.
//!
//! Nothing may panic; every figure read is finite and named.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sledge::workloads::command::output_metric::OutputMetric;
use sledge::workloads::command::parsers;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (spec, output) = text.split_once('\n').unwrap_or((&text, ""));
    if let Ok(metrics) = OutputMetric::parse_all(spec) {
        for metric in &metrics {
            if let Ok(read) = metric.read(output) {
                assert!(read.value.is_finite(), "{} = {}", read.name, read.value);
            }
        }
    }
    for parser in parsers::all() {
        if let Ok(metrics) = parser.parse(output) {
            assert!(!metrics.is_empty(), "{} accepted an output with no figure", parser.name());
            for m in &metrics {
                assert!(!m.name.is_empty(), "{}: a nameless figure", parser.name());
                assert!(m.value.is_finite(), "{}: {} = {}", parser.name(), m.name, m.value);
            }
        }
    }
});
