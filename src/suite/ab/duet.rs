//! Duet mode (`sledge ab --duet`): A and B run at the same time, each on
//! one half of the CPUs, the halves swapped every round, so that whatever
//! disturbs the host disturbs both at once (Bulej et al., "Duet
//! Benchmarking", ICPE 2020). A case takes part only when its threads fit
//! in a half: otherwise the two sides would fight over CPUs, which is a
//! difference between them, not a shared disturbance.

use crate::engine::PlannedCase;

/// The run's CPUs cut into two halves of equal size (an odd one out is
/// left idle); an error below two CPUs.
pub fn halves(cpus: &[usize]) -> anyhow::Result<[Vec<usize>; 2]> {
    if cpus.len() < 2 {
        anyhow::bail!(
            "--duet needs at least 2 CPUs, one half for A and one for B; this run has {}",
            cpus.len()
        );
    }
    let half = cpus.len() / 2;
    Ok([cpus[..half].to_vec(), cpus[half..2 * half].to_vec()])
}

/// Per case, whether it may run in duet mode on halves of `half` CPUs,
/// and for each that may not, why (it then runs one side after the other).
pub fn eligible(cases: &[PlannedCase], half: usize) -> (Vec<bool>, Vec<String>) {
    let mut refused = Vec::new();
    let flags = cases
        .iter()
        .map(|case| {
            let why = match case.workload.cpus_used(&case.params) {
                None => Some(
                    "it keeps more CPUs busy than its parameters say (a server, load or several processes)"
                        .to_string(),
                ),
                Some(used) if used > half => Some(format!(
                    "it keeps {used} CPUs busy and each side has {half}"
                )),
                Some(_) => None,
            };
            match why {
                Some(why) => {
                    refused.push(format!(
                        "{}: not in duet, A and B in turn: {why}",
                        case.label()
                    ));
                    false
                }
                None => true,
            }
        })
        .collect();
    (flags, refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(id: &str, params: &[&str]) -> PlannedCase {
        let plan = crate::suite::plan(
            &[id.to_string()],
            &params.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
            2,
        )
        .unwrap();
        let case = &plan.cases[0];
        PlannedCase {
            workload: case.workload,
            params: case.params.clone(),
        }
    }

    #[test]
    fn the_cpus_are_halved_and_one_cpu_is_refused() {
        assert_eq!(halves(&[0, 1]).unwrap(), [vec![0], vec![1]]);
        assert_eq!(halves(&[0, 1, 2, 3, 4]).unwrap(), [vec![0, 1], vec![2, 3]]);
        let err = halves(&[0]).unwrap_err().to_string();
        assert!(err.contains("--duet needs at least 2 CPUs"), "{err}");
    }

    #[test]
    fn a_case_that_needs_more_than_half_the_cpus_runs_in_turn_and_says_why() {
        let cases = [
            planned("cpu.primes", &["threads=1"]),
            planned("cpu.primes", &["threads=all"]),
            planned("http.static", &[]),
        ];
        let (flags, refused) = eligible(&cases, 1);
        assert_eq!(flags, [true, false, false]);
        assert_eq!(refused.len(), 2);
        assert!(
            refused[0].contains("keeps 2 CPUs busy and each side has 1"),
            "{refused:?}"
        );
        assert!(refused[1].starts_with("http.static"), "{refused:?}");
        assert!(
            refused[1].contains("more CPUs busy than its parameters say"),
            "{refused:?}"
        );
    }
}
