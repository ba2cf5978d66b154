//! What users type as values on the command line: `-p name=v1,v2`
//! assignments and every kind of parameter value, host lists of `fleet`,
//! the URLs of `sledge http`, and the masking of passwords in any of them.
//!
//! Nothing may panic, and what is accepted must read back as itself: a
//! value's canonical text parses to the same value (that text is what the
//! store keeps and what a round's process is handed), a host prints as an
//! entry that parses to the same host, and a URL's request is one the
//! built-in server reads as a single whole request.

#![no_main]

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};

use libfuzzer_sys::fuzz_target;
use sledge::engine::params::{
    ParamKind, ParamRole, ParamSpec, ParamValue, format_size, parse_seconds, parse_size, parse_value,
    resolve_cases, split_assignment,
};
use sledge::http::server::request_parser;
use sledge::http::url::parse_target_with;
use sledge::remote::{SshHost, parse_host_list};

/// One parameter of every kind, with one-letter names so that the fuzzer
/// finds them in assignments quickly.
const SPECS: &[ParamSpec] = &[
    spec(
        "i",
        ParamKind::Int {
            min: 1,
            max: 1 << 40,
        },
        "1",
    ),
    spec(
        "f",
        ParamKind::Float {
            min: -1.0,
            max: 1e9,
        },
        "0.5",
    ),
    spec(
        "s",
        ParamKind::Size {
            min: 8,
            max: 1 << 50,
            power_of_two: false,
        },
        "1K",
    ),
    spec(
        "p",
        ParamKind::Size {
            min: 1,
            max: u64::MAX,
            power_of_two: true,
        },
        "4K",
    ),
    spec(
        "d",
        ParamKind::Seconds {
            min: 0.0,
            max: 1e12,
        },
        "10",
    ),
    spec("c", ParamKind::Choice(&["read", "write", "rw"]), "read"),
    spec("b", ParamKind::Bool, "true"),
    spec("t", ParamKind::Threads { max: 4096 }, "1"),
    spec("x", ParamKind::Text, "/tmp"),
];

const fn spec(name: &'static str, kind: ParamKind, default: &'static str) -> ParamSpec {
    ParamSpec {
        name,
        help: "",
        kind,
        default,
        role: ParamRole::Other,
    }
}

/// CPUs that `all` stands for.
const CPUS: usize = 3;

/// The number in a count, whether it was given as `all` or not (the two
/// are the same case).
fn plain(value: &ParamValue) -> ParamValue {
    match value {
        ParamValue::PerCpu(n) => ParamValue::Int(*n),
        other => other.clone(),
    }
}

fn values(text: &str) {
    if let Some(size) = parse_size(text) {
        assert_eq!(parse_size(&format_size(size)), Some(size), "size {size}");
    }
    if let Some(seconds) = parse_seconds(text) {
        assert!(
            seconds.is_finite() && seconds >= 0.0,
            "`{text}` read as {seconds} s"
        );
    }
    for spec in SPECS {
        if let Ok(value) = parse_value("fuzz", spec, text, CPUS) {
            let raw = match &value {
                ParamValue::Text(t) => t.clone(),
                other => other.to_string(),
            };
            let back = parse_value("fuzz", spec, &raw, CPUS)
                .unwrap_or_else(|e| panic!("{}: canonical `{raw}` refused: {e}", spec.name));
            assert_eq!(plain(&back), plain(&value), "{}: `{raw}`", spec.name);
        }
    }
}

fn assignment(text: &str) {
    let Ok((name, list)) = split_assignment(text) else {
        return;
    };
    assert!(!list.is_empty() && list.iter().all(|v| !v.is_empty()));
    let assignments = BTreeMap::from([(name, list)]);
    let Ok(cases) = resolve_cases("fuzz", SPECS, &assignments, CPUS) else {
        return;
    };
    for case in cases {
        // A round's process gets its case serialized as its values: the
        // same set comes back, and it fits the workload it was made for.
        let sent = serde_json::to_string(&case).expect("a set serializes");
        let got: sledge::engine::params::ParamSet =
            serde_json::from_str(&sent).expect("a set deserializes");
        assert_eq!(got, case, "{sent}");
        got.check_fits("fuzz", SPECS, |_| false)
            .unwrap_or_else(|e| panic!("{sent}: {e}"));
        // A command's placeholder gets a value as this text, which reads
        // back as the same case.
        let raw: BTreeMap<String, Vec<String>> = case
            .to_raw_strings()
            .into_iter()
            .map(|(k, v)| (k, vec![v]))
            .collect();
        let again = resolve_cases("fuzz", SPECS, &raw, CPUS).expect("a case's own values");
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].to_strings(), case.to_strings());
    }
}

fn hosts(text: &str) {
    if let Ok(host) = text.parse::<SshHost>() {
        let shown = host.to_string();
        assert_eq!(shown.parse::<SshHost>().as_ref(), Ok(&host), "`{shown}`");
    }
    let _ = parse_host_list(text);
}

fn url(text: &str) {
    // Every host "resolves" to loopback: no name is looked up.
    let resolve = |_: &str, port| Some(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    let Ok(target) = parse_target_with(text, resolve) else {
        return;
    };
    for keep_alive in [true, false] {
        let bytes = target.request(keep_alive);
        let head = request_parser::parse(bytes)
            .unwrap_or_else(|e| panic!("`{text}` makes a request refused with {e:?}"))
            .unwrap_or_else(|| panic!("`{text}` makes an unfinished request"));
        assert_eq!(
            head.len,
            bytes.len(),
            "`{text}` makes more than one request"
        );
        assert_eq!(head.keep_alive, keep_alive);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    values(text);
    assignment(text);
    hosts(text);
    url(text);
    let _ = sledge::secrets::redact(text);
});
