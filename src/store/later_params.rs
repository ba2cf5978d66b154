//! Parameters a workload gained after runs were stored without them.
//!
//! A stored case's parameters take part in matching it across runs
//! (`compare`, the noise history), and a run from before a parameter
//! existed ran what is now its default. So such a parameter at its
//! default counts as absent when cases are matched: runs from before and
//! after the parameter came stay comparable, while any other value of it
//! is another case.

use std::collections::BTreeMap;

/// (workload id prefix, parameter, its default).
const LATER: &[(&str, &str, &str)] = &[
    // Load from client hosts; older runs loaded from this host.
    ("http.", "clients_from", "local"),
];

fn later_of(workload: &str) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
    LATER
        .iter()
        .filter(move |(prefix, _, _)| workload.starts_with(prefix))
        .map(|&(_, name, default)| (name, default))
}

/// `params` of a case of `workload` as cases are matched: without the
/// later parameters that are at their defaults.
pub fn comparable(workload: &str, params: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut params = params.clone();
    for (name, default) in later_of(workload) {
        if params.get(name).is_some_and(|v| v == default) {
            params.remove(name);
        }
    }
    params
}

/// The two ways the same case may be stored: without the later
/// parameters at their defaults (by an older sledge) and with them.
pub fn stored_forms(
    workload: &str,
    params: &BTreeMap<String, String>,
) -> [BTreeMap<String, String>; 2] {
    let without = comparable(workload, params);
    let mut with = without.clone();
    for (name, default) in later_of(workload) {
        with.entry(name.to_string())
            .or_insert_with(|| default.to_string());
    }
    [without, with]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_later_parameter_at_its_default_is_as_if_absent() {
        let old = map(&[("size", "1")]);
        let new = map(&[("size", "1"), ("clients_from", "local")]);
        let remote = map(&[("size", "1"), ("clients_from", "root@h1")]);
        assert_eq!(comparable("http.static", &new), old);
        assert_eq!(comparable("http.static", &old), old);
        assert_eq!(comparable("http.static", &remote), remote);
        // Only for the workloads that gained it.
        let other = map(&[("clients_from", "local")]);
        assert_eq!(comparable("cpu.primes", &other), other);
        assert_eq!(
            stored_forms("http.dynamic", &old),
            [old.clone(), new.clone()]
        );
        assert_eq!(stored_forms("http.dynamic", &new), [old, new]);
        assert_eq!(
            stored_forms("http.static", &remote),
            [remote.clone(), remote]
        );
    }
}
