//! The `memory` load: threads copying buffers larger than the caches, so
//! that the memory bus and the caches are busy.
//!
//! Interbench's "Memload" allocates 110% of RAM and pushes the machine
//! into swap; that takes minutes and can get processes killed by the OOM
//! killer, so sledge's memory load stays in RAM: it measures what memory
//! traffic (not paging) does to interactive tasks.

use crate::engine::CancelToken;

/// Bytes copied between two looks at the stop flag.
const CHUNK: usize = 1 << 20;

/// The smallest buffer worth calling a memory load.
pub const MIN_BUFFER: usize = 8 << 20;

/// Bytes per buffer (each thread has two) for `threads` threads: at least
/// the caches' total (so the copies stream from memory) and 32 MiB, at
/// most what keeps all buffers within an eighth of RAM.
pub fn buffer_bytes(threads: usize, total_cache_bytes: u64, memory_bytes: u64) -> usize {
    let wanted = total_cache_bytes.max(32 << 20);
    let cap = memory_bytes / 8 / (2 * threads.max(1) as u64);
    wanted.min(cap) as usize
}

/// Copies one buffer into another, over and over, until `stop` is set.
pub fn copy_until_stopped(bytes: usize, stop: &CancelToken) -> anyhow::Result<()> {
    let source = vec![0x5au8; bytes];
    let mut target = vec![0u8; bytes];
    loop {
        for (to, from) in target.chunks_mut(CHUNK).zip(source.chunks(CHUNK)) {
            to.copy_from_slice(from);
            if stop.is_cancelled() {
                std::hint::black_box(&target);
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_cover_the_caches_within_an_eighth_of_ram() {
        // 40 MiB of cache, 16 GiB of RAM, 2 threads: one cache's worth.
        assert_eq!(buffer_bytes(2, 40 << 20, 16 << 30), 40 << 20);
        // Tiny caches: 32 MiB at least.
        assert_eq!(buffer_bytes(2, 1 << 20, 16 << 30), 32 << 20);
        // 1 GiB of RAM, 4 threads: 8 buffers share 128 MiB.
        assert_eq!(buffer_bytes(4, 40 << 20, 1 << 30), 16 << 20);
    }
}
