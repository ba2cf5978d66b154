//! A workload's parameters as a typed struct: one declaration gives the
//! parameter table (`sledge workloads`, validation, sweeps, help) and the
//! struct the workload builds its cases from, so that no workload looks a
//! value up by name or parses a choice it was already given.
//!
//! The table stays [`ParamSpec`]s, which the command line, the store and
//! the sweep expansion already speak; [`workload_params!`] declares the
//! struct beside it, field by field, and [`Params::from_set`] reads a
//! validated [`ParamSet`] into it. A field's name is its parameter's name
//! (the macro looks it up by the field's own name, so the two cannot
//! drift apart: a mismatch panics on the first case built, which the
//! registry's test does for every workload), and its type says how the
//! value is read ([`FromParam`]): `u64`/`usize` for counts, sizes and
//! thread counts, `f64` for numbers, [`Duration`] for times, `bool`,
//! `String` for free text, and an enum declared with [`param_choice!`]
//! for a choice.

use std::time::Duration;

use super::params::{ParamSet, ParamSpec, ParamValue};

/// A workload's parameters as a struct (declare with [`workload_params!`]).
pub trait Params: Sized {
    /// The parameter table, in the order parameters are shown and swept.
    fn specs() -> Vec<ParamSpec>;
    /// The struct from a set that [`crate::engine::params::resolve_cases`]
    /// validated against [`Params::specs`]. Panics on a set of another
    /// workload: that is a bug, not an input error.
    fn from_set(set: &ParamSet) -> Self;
}

/// Reads one validated parameter value as a Rust type.
pub trait FromParam: Sized {
    /// `name` is only for the panic message of a type that does not fit
    /// the parameter's kind (a bug in a declaration).
    fn from_param(name: &str, value: &ParamValue) -> Self;
}

fn wrong_kind(name: &str, value: &ParamValue, wanted: &str) -> ! {
    panic!("parameter `{name}` is {value:?}, not {wanted}: its field's type does not fit its kind")
}

impl FromParam for u64 {
    fn from_param(name: &str, value: &ParamValue) -> Self {
        match value {
            ParamValue::Int(v) | ParamValue::PerCpu(v) | ParamValue::Size(v) => *v,
            other => wrong_kind(name, other, "an integer"),
        }
    }
}

impl FromParam for usize {
    fn from_param(name: &str, value: &ParamValue) -> Self {
        u64::from_param(name, value) as usize
    }
}

impl FromParam for f64 {
    fn from_param(name: &str, value: &ParamValue) -> Self {
        match value {
            ParamValue::Float(v) | ParamValue::Seconds(v) => *v,
            ParamValue::Int(v) | ParamValue::PerCpu(v) | ParamValue::Size(v) => *v as f64,
            other => wrong_kind(name, other, "a number"),
        }
    }
}

impl FromParam for Duration {
    fn from_param(name: &str, value: &ParamValue) -> Self {
        match value {
            ParamValue::Seconds(v) => Duration::from_secs_f64(*v),
            other => wrong_kind(name, other, "a duration"),
        }
    }
}

impl FromParam for bool {
    fn from_param(name: &str, value: &ParamValue) -> Self {
        match value {
            ParamValue::Bool(v) => *v,
            other => wrong_kind(name, other, "a boolean"),
        }
    }
}

impl FromParam for String {
    fn from_param(name: &str, value: &ParamValue) -> Self {
        match value {
            ParamValue::Text(v) | ParamValue::Choice(v) => v.clone(),
            other => wrong_kind(name, other, "text"),
        }
    }
}

/// A choice read with the parser its type already has (for an enum that
/// is more than its words, which [`param_choice!`] cannot declare).
/// Panics on a word the parser refuses: the set was not validated.
pub fn choice_by<T>(name: &str, value: &ParamValue, parse: impl Fn(&str) -> Option<T>) -> T {
    let word = String::from_param(name, value);
    parse(&word)
        .unwrap_or_else(|| panic!("parameter `{name}` is `{word}`: the set was not validated"))
}

/// Declares a workload's parameters: a struct with one public field per
/// parameter, each with the [`ParamSpec`] it is declared by, and its
/// [`Params`] implementation.
///
/// ```ignore
/// workload_params! {
///     /// The parameters of `cpu.primes`.
///     pub struct PrimesParams {
///         max_prime: u64 = ParamSpec { name: "max_prime", .. },
///         threads: usize = params::threads("1"),
///         time: Duration = params::time("10"),
///     }
/// }
/// ```
#[macro_export]
macro_rules! workload_params {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$field_meta:meta])* $field:ident : $ty:ty = $spec:expr ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        $vis struct $name {
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl $crate::engine::typed_params::Params for $name {
            fn specs() -> Vec<$crate::engine::params::ParamSpec> {
                vec![$($spec),*]
            }
            fn from_set(set: &$crate::engine::params::ParamSet) -> Self {
                Self {
                    $( $field: <$ty as $crate::engine::typed_params::FromParam>::from_param(
                        stringify!($field),
                        set.value(stringify!($field)),
                    ), )*
                }
            }
        }
    };
}

/// Declares the choices of a choice parameter as an enum: each variant
/// with the word a user types. Gives `NAMES` (for
/// [`crate::engine::ParamKind::Choice`]), `as_str`, `Display` and
/// [`FromParam`].
///
/// ```ignore
/// param_choice! {
///     /// How `ipc` connects hackbench's tasks.
///     pub enum Ipc { Socket = "socket", Pipe = "pipe" }
/// }
/// ```
#[macro_export]
macro_rules! param_choice {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident = $word:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$variant_meta])* $variant, )+
        }

        impl $name {
            /// The words a user may type, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($word),+];

            /// The word a user types for this choice.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $word, )+
                }
            }

            /// The choice a word names, if any.
            pub fn from_word(word: &str) -> Option<Self> {
                match word {
                    $( $word => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl $crate::engine::typed_params::FromParam for $name {
            fn from_param(name: &str, value: &$crate::engine::params::ParamValue) -> Self {
                let word = <String as $crate::engine::typed_params::FromParam>::from_param(name, value);
                $name::from_word(&word).unwrap_or_else(|| {
                    panic!("parameter `{name}` is `{word}`, not one of {:?}: the set was not validated", $name::NAMES)
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::engine::params::{ParamKind, ParamRole, resolve_cases, split_assignment};

    param_choice! {
        /// A choice for the test.
        enum Shape { Round = "round", Square = "square" }
    }

    workload_params! {
        /// Every kind of field.
        struct Every {
            count: u64 = ParamSpec { name: "count", role: ParamRole::Other, help: "", kind: ParamKind::Int { min: 0, max: 9 }, default: "3" },
            threads: usize = ParamSpec { name: "threads", role: ParamRole::CpuCount, help: "", kind: ParamKind::Threads { max: 64 }, default: "all" },
            ratio: f64 = ParamSpec { name: "ratio", role: ParamRole::Other, help: "", kind: ParamKind::Float { min: 0.0, max: 2.0 }, default: "1.5" },
            time: Duration = ParamSpec { name: "time", role: ParamRole::TrialTime, help: "", kind: ParamKind::Seconds { min: 0.0, max: 10.0 }, default: "250ms" },
            direct: bool = ParamSpec { name: "direct", role: ParamRole::Other, help: "", kind: ParamKind::Bool, default: "on" },
            dir: String = ParamSpec { name: "dir", role: ParamRole::ScratchDir, help: "", kind: ParamKind::Text, default: "/tmp" },
            shape: Shape = ParamSpec { name: "shape", role: ParamRole::Other, help: "", kind: ParamKind::Choice(Shape::NAMES), default: "round" },
        }
    }

    fn resolved(assignments: &[&str], cpus: usize) -> Vec<Every> {
        let assigned: BTreeMap<String, Vec<String>> = assignments
            .iter()
            .map(|a| split_assignment(a).unwrap())
            .collect();
        resolve_cases("test.every", &Every::specs(), &assigned, cpus)
            .unwrap()
            .iter()
            .map(Every::from_set)
            .collect()
    }

    #[test]
    fn a_validated_set_reads_into_the_struct() {
        let cases = resolved(&["shape=square,round", "count=7"], 4);
        assert_eq!(
            cases[0],
            Every {
                count: 7,
                threads: 4,
                ratio: 1.5,
                time: Duration::from_millis(250),
                direct: true,
                dir: "/tmp".into(),
                shape: Shape::Square,
            }
        );
        assert_eq!(cases[1].shape, Shape::Round);
        assert_eq!(cases[1].shape.to_string(), "round");
    }

    #[test]
    fn a_choice_outside_the_enum_is_refused_before_any_struct() {
        let assigned = [split_assignment("shape=oval").unwrap()].into();
        let err = resolve_cases("test.every", &Every::specs(), &assigned, 2).unwrap_err();
        assert!(err.to_string().contains("round, square"), "{err}");
    }

    #[test]
    #[should_panic(expected = "parameter `count` is Bool(true)")]
    fn a_field_whose_type_misfits_its_kind_panics() {
        let mut values = BTreeMap::new();
        for spec in Every::specs() {
            values.insert(spec.name.to_string(), ParamValue::Bool(true));
        }
        Every::from_set(&ParamSet::from_values(values));
    }
}
