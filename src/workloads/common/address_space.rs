//! What a build of sledge can address: a 32-bit build (i686) has 4 GiB of
//! address space at most, of which its data can use well under 3 GiB, so
//! a working set sized for a 64-bit host is refused with a clear error
//! before anything is allocated (a size cast to a 32-bit `usize` would
//! otherwise wrap, or an allocation abort the round).

use crate::engine::params::format_size;

/// The most a workload's buffers may take in this build: half of the
/// address space (2 GiB on a 32-bit build; no limit that matters on a
/// 64-bit one).
pub const LIMIT: u64 = (usize::MAX / 2) as u64;

/// Refuses `bytes` of buffers past [`LIMIT`], naming the workload, the
/// word size and what to give instead (`param`).
pub fn check(workload: &str, bytes: u64, param: &str) -> anyhow::Result<()> {
    if bytes > LIMIT {
        anyhow::bail!(
            "{workload}: its buffers need {}, more than a {}-bit sledge can address (at most {}); use a smaller {param}, or a 64-bit build",
            format_size(bytes),
            usize::BITS,
            format_size(LIMIT + 1)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_past_half_the_address_space_are_refused() {
        assert!(check("memory.stream", 1 << 20, "array_size").is_ok());
        assert!(check("memory.stream", LIMIT, "array_size").is_ok());
        let err = check("memory.stream", LIMIT + 1, "array_size")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("{}-bit sledge", usize::BITS)),
            "{err}"
        );
        assert!(err.contains("use a smaller array_size"), "{err}");
    }
}
