//! Just enough NUMA for `memory.latency`: which nodes exist, which CPUs
//! each has, and binding a mapping's pages to one node (`mbind`), read
//! from sysfs and called directly so that no libnuma is needed.

use std::path::Path;

const NODE_SYS: &str = "/sys/devices/system/node";

/// The online NUMA nodes with their CPUs, by node number; one node (with
/// no CPU list) when the kernel shows no NUMA information.
pub fn nodes() -> Vec<(u32, Vec<usize>)> {
    let online = std::fs::read_to_string(Path::new(NODE_SYS).join("online")).unwrap_or_default();
    let nodes = parse_list(online.trim()).unwrap_or_default();
    nodes
        .into_iter()
        .map(|node| {
            let path = Path::new(NODE_SYS).join(format!("node{node}/cpulist"));
            let cpus = std::fs::read_to_string(path)
                .ok()
                .and_then(|t| parse_list(t.trim()))
                .unwrap_or_default();
            (node as u32, cpus)
        })
        .collect()
}

/// Parses a kernel list such as `0-3,8,10-11`.
pub fn parse_list(text: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.trim().parse::<usize>().ok()?..=b.trim().parse().ok()?),
            None => out.push(part.trim().parse().ok()?),
        }
    }
    Some(out)
}

/// Binds the pages of `[addr, addr + len)` (not yet touched) to `node`.
///
/// # Safety
/// The range must be a mapping the caller owns; its policy changes.
pub unsafe fn bind_to_node(addr: *mut u8, len: usize, node: u32) -> std::io::Result<()> {
    const MPOL_BIND: libc::c_long = 2;
    let mut mask = [0 as libc::c_ulong; 16];
    let bits = libc::c_ulong::BITS as usize;
    let node = node as usize;
    if node >= mask.len() * bits {
        return Err(std::io::Error::other(format!(
            "node {node} is beyond the mask"
        )));
    }
    mask[node / bits] |= 1 << (node % bits);
    // SAFETY: mbind reads `mask` (maxnode bits) and changes only the policy
    // of the given range, which the caller owns.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len,
            MPOL_BIND,
            mask.as_ptr(),
            (mask.len() * bits) as libc::c_ulong,
            0 as libc::c_uint,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_lists_parse() {
        assert_eq!(parse_list("0-3,8,10-11"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_list("0"), Some(vec![0]));
        assert_eq!(parse_list(""), Some(vec![]));
        assert_eq!(parse_list("x"), None);
    }

    #[test]
    fn this_host_has_at_least_one_node() {
        assert!(!nodes().is_empty() || !Path::new(NODE_SYS).exists());
    }
}
