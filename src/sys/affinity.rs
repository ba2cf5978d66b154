//! CPU affinity: `--cpus N` restricts the whole process (and so every
//! worker thread it starts) to N CPUs, so one machine answers "one core vs
//! all cores".

use anyhow::{Context, bail};

/// The CPUs this process may run on, in ascending order.
pub fn allowed_cpus() -> anyhow::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(std::io::Error::last_os_error()).context("sched_getaffinity failed");
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect())
    }
}

/// Sets the calling thread's affinity to exactly `cpus`. Threads created
/// afterwards inherit it, so calling this on the main thread before any
/// worker starts restricts the whole run.
pub fn set_affinity(cpus: &[usize]) -> anyhow::Result<()> {
    let set = cpu_set(cpus);
    // SAFETY: sched_setaffinity reads the set it is given.
    unsafe {
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("sched_setaffinity to CPUs {cpus:?} failed"));
        }
    }
    Ok(())
}

/// The kernel's CPU mask of `cpus`; CPUs past the mask's size
/// (`CPU_SETSIZE`) are left out. Built ahead where it is needed between
/// fork and exec, where nothing may allocate.
pub fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array (all zeroes is the empty
    // set), and CPU_SET only writes inside it for a CPU below its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus.iter().filter(|&&cpu| cpu < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(cpu, &mut set);
        }
        set
    }
}

/// Chooses the first `count` of the allowed CPUs (or all of them for
/// `None`) and restricts the process to them.
pub fn restrict_to(count: Option<usize>) -> anyhow::Result<Vec<usize>> {
    let allowed = allowed_cpus()?;
    let Some(count) = count else {
        return Ok(allowed);
    };
    if count == 0 || count > allowed.len() {
        bail!(
            "--cpus {count} is not possible: this process may use {} CPU(s) ({}); allowed is 1 to {}",
            allowed.len(),
            format_cpu_list(&allowed),
            allowed.len()
        );
    }
    let chosen = allowed[..count].to_vec();
    set_affinity(&chosen)?;
    Ok(chosen)
}

/// `0-3,6` style list.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// Parses a `0-3,6` style list (the form `taskset -c` and the kernel's
/// `cpulist` files use) into ascending CPU numbers without repeats.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let bad = |part: &str| {
        format!("`{part}` in `{text}` is not a CPU or a range of CPUs; give a list such as 0-3,6")
    };
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (start, end) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let (Ok(start), Ok(end)) = (start.parse::<usize>(), end.parse::<usize>()) else {
            return Err(bad(part));
        };
        if start > end || end >= libc::CPU_SETSIZE as usize {
            return Err(bad(part));
        }
        cpus.extend(start..=end);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_as_taskset_writes_them() {
        assert_eq!(parse_cpu_list("0-3,6").unwrap(), [0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("1, 0,1").unwrap(), [0, 1]);
        for bad in ["", "a", "3-1", "1-", "0,,1", "99999"] {
            let err = parse_cpu_list(bad).unwrap_err();
            assert!(err.contains("give a list such as 0-3,6"), "{bad}: {err}");
        }
    }

    #[test]
    fn cpu_lists_are_compact() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(format_cpu_list(&[1]), "1");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn at_least_one_cpu_is_allowed() {
        assert!(!allowed_cpus().unwrap().is_empty());
    }

    #[test]
    fn too_many_cpus_is_a_clear_error() {
        let err = restrict_to(Some(100_000)).unwrap_err().to_string();
        assert!(err.contains("allowed is 1 to"), "{err}");
        assert!(restrict_to(Some(0)).is_err());
    }
}
