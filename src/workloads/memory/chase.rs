//! The dependent pointer chase behind `memory.latency`.
//!
//! The working set is cut into 64-byte lines; each line holds the address
//! of the next one, and the order is one random cycle through all lines
//! (Sattolo's algorithm), so every load depends on the one before, no
//! prefetcher can guess the next address, and the chase visits every line
//! of the set before it repeats one. Time per load is then the latency of
//! whichever level of the hierarchy holds the set.

use crate::workloads::common::rng::Xoroshiro128Plus;

/// Bytes per element of the chase: one cache line on every current x86
/// and most ARM cores, so each load touches a line of its own.
pub const LINE: usize = 64;

/// A random cyclic permutation of `0..n` (Sattolo's algorithm): following
/// `i -> order[i]` from any start visits all `n` elements once before it
/// comes back.
pub fn single_cycle(n: usize, seed: u64) -> Vec<u32> {
    assert!(
        n > 0 && n <= u32::MAX as usize,
        "cycle length {n} out of range"
    );
    let mut perm: Vec<u32> = (0..n as u32).collect();
    let mut rng = Xoroshiro128Plus::seeded(seed);
    for i in (1..n).rev() {
        // j uniform in 0..i (strictly below i) makes the result one cycle.
        let j = rng.below(i as u64) as usize;
        perm.swap(i, j);
    }
    // Sattolo's shuffle yields a permutation that is a single cycle when
    // read as i -> perm[i].
    perm
}

/// Writes the chase into `buffer` (whose length is a multiple of
/// [`LINE`]): line `i` holds the address of line `next[i]`. Returns the
/// address to start from.
///
/// # Panics
/// If `buffer` is not aligned for a `usize` (the chase reads each line's
/// first word with an aligned load), if its length does not match
/// `next`, or if `next` names a line outside it.
pub fn link(buffer: &mut [u8], next: &[u32]) -> *const usize {
    let lines = next.len();
    assert_eq!(buffer.len() / LINE, lines);
    assert!(
        buffer.as_ptr().cast::<usize>().is_aligned(),
        "the chase buffer must be aligned to {} bytes",
        std::mem::align_of::<usize>()
    );
    let base = buffer.as_mut_ptr();
    for (i, &n) in next.iter().enumerate() {
        assert!(
            (n as usize) < lines,
            "line {i} links to line {n}, outside the {lines} lines"
        );
        // SAFETY: i and n are below the number of lines, so both addresses
        // are inside the buffer; the buffer is usize-aligned (asserted)
        // and LINE is a multiple of that alignment, so the word write is
        // aligned.
        unsafe {
            let target = base.add(n as usize * LINE) as usize;
            base.add(i * LINE).cast::<usize>().write(target);
        }
    }
    base as *const usize
}

/// Follows the chase for `loads` loads (a multiple of 16) from `start`
/// and returns where it ended, which the caller feeds back in.
///
/// # Safety
/// `start` must be a line of a buffer prepared by [`link`] that is still
/// alive.
#[inline(never)]
pub unsafe fn chase(start: *const usize, loads: u64) -> *const usize {
    let mut p = start;
    for _ in 0..loads / 16 {
        // Sixteen dependent loads per iteration keep the loop overhead
        // off the critical path.
        for _ in 0..16 {
            // SAFETY: every line holds the address of another line of the
            // same buffer.
            p = unsafe { *p } as *const usize;
        }
    }
    std::hint::black_box(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "must be aligned")]
    fn link_refuses_a_misaligned_buffer() {
        let mut words = vec![0usize; 2 * LINE / std::mem::size_of::<usize>() + 1];
        // SAFETY: plain bytes of a live Vec, one past its start: misaligned
        // for usize and 2 lines long.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>().add(1), 2 * LINE)
        };
        link(bytes, &[1, 0]);
    }

    #[test]
    #[should_panic(expected = "outside the 2 lines")]
    fn link_refuses_a_line_outside_the_buffer() {
        let mut words = vec![0usize; 2 * LINE / std::mem::size_of::<usize>()];
        // SAFETY: the bytes of a live, usize-aligned Vec of 2 lines.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), 2 * LINE) };
        link(bytes, &[1, 2]);
    }

    #[test]
    fn the_cycle_visits_every_element_once() {
        for n in [1, 2, 3, 256, 10_007] {
            let next = single_cycle(n, 42);
            let mut seen = vec![false; n];
            let mut i = 0usize;
            for _ in 0..n {
                assert!(!seen[i], "n={n}: element {i} visited twice");
                seen[i] = true;
                i = next[i] as usize;
            }
            assert_eq!(i, 0, "n={n}: did not come back after n steps");
            assert!(seen.iter().all(|&s| s));
        }
    }
}
