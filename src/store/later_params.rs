//! Parameters a workload gained after runs were stored without them.
//!
//! A stored case's parameters take part in matching it across runs
//! (`compare`, the noise history), and a run from before a parameter
//! existed ran what is now its default. So such a parameter at its
//! default counts as absent when cases are matched: runs from before and
//! after the parameter came stay comparable, while any other value of it
//! is another case.
//!
//! Which parameters came later is the workload's to say
//! (`Workload::later_params`); the store sits below the workloads, so the
//! caller hands the list down.

use std::collections::BTreeMap;

/// A parameter a workload gained later, and the value runs stored before
/// it came in effect ran with (its default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaterParam {
    /// The parameter's name.
    pub name: &'static str,
    /// Its default: what older runs did without it.
    pub default: &'static str,
}

/// `params` of a case as cases are matched: without the `later`
/// parameters that are at their defaults.
pub fn comparable(
    later: &[LaterParam],
    params: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut params = params.clone();
    for param in later {
        if params.get(param.name).is_some_and(|v| v == param.default) {
            params.remove(param.name);
        }
    }
    params
}

/// The two ways the same case may be stored: without the `later`
/// parameters at their defaults (by an older sledge) and with them.
pub fn stored_forms(
    later: &[LaterParam],
    params: &BTreeMap<String, String>,
) -> [BTreeMap<String, String>; 2] {
    let without = comparable(later, params);
    let mut with = without.clone();
    for param in later {
        with.entry(param.name.to_string())
            .or_insert_with(|| param.default.to_string());
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

    const CLIENTS_FROM: &[LaterParam] = &[LaterParam {
        name: "clients_from",
        default: "local",
    }];

    #[test]
    fn a_later_parameter_at_its_default_is_as_if_absent() {
        let old = map(&[("size", "1")]);
        let new = map(&[("size", "1"), ("clients_from", "local")]);
        let remote = map(&[("size", "1"), ("clients_from", "root@h1")]);
        assert_eq!(comparable(CLIENTS_FROM, &new), old);
        assert_eq!(comparable(CLIENTS_FROM, &old), old);
        assert_eq!(comparable(CLIENTS_FROM, &remote), remote);
        // Only for the workloads that gained it.
        let other = map(&[("clients_from", "local")]);
        assert_eq!(comparable(&[], &other), other);
        assert_eq!(stored_forms(CLIENTS_FROM, &old), [old.clone(), new.clone()]);
        assert_eq!(stored_forms(CLIENTS_FROM, &new), [old.clone(), new]);
        assert_eq!(
            stored_forms(CLIENTS_FROM, &remote),
            [remote.clone(), remote]
        );
        assert_eq!(stored_forms(&[], &old), [old.clone(), old]);
    }
}
