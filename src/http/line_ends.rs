//! The line ends of a response head, found sixteen bytes at a time.
//!
//! A response head is a dozen short lines. `memchr` is fast over long
//! haystacks, but called once per line its set-up costs more than the
//! line: against nginx's nine-line head, the search for the head's end
//! and the calls per line took about 840 instructions per response, a
//! third of the generator's own instructions per request (callgrind). One
//! pass a chunk at a time finds both together. On x86-64 a chunk is
//! sixteen bytes compared at once (SSE2, which every x86-64 processor
//! has): a handful of instructions per chunk. Elsewhere it is eight bytes
//! in a word (SWAR, "SIMD within a register", about 20 instructions per
//! chunk): a byte is `\n` when it is zero after an XOR with `\n`, and the
//! zero test carries nothing from one byte into the next, so no other
//! byte is flagged.

/// The positions of the `\n` bytes of a slice, in order.
pub(crate) struct LineEnds<'a> {
    bytes: &'a [u8],
    /// Where the chunk that `mask` describes starts.
    chunk_at: usize,
    /// The `\n` bytes of that chunk not yet returned: [`BITS_PER_BYTE`]
    /// bits per byte, the lowest of them set for a `\n`.
    mask: u64,
}

impl<'a> LineEnds<'a> {
    /// The `\n` bytes of `bytes` at or after `from`.
    pub(crate) fn new(bytes: &'a [u8], from: usize) -> Self {
        LineEnds {
            bytes,
            chunk_at: from,
            mask: newline_mask(bytes, from),
        }
    }
}

impl Iterator for LineEnds<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.chunk_at += CHUNK;
            if self.chunk_at >= self.bytes.len() {
                return None;
            }
            self.mask = newline_mask(self.bytes, self.chunk_at);
        }
        let at = self.chunk_at + (self.mask.trailing_zeros() / BITS_PER_BYTE) as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// Just past the first CRLF CRLF of `bytes` that starts at or after
/// `from`: where a head that holds one ends.
pub(crate) fn head_end(bytes: &[u8], from: usize) -> Option<usize> {
    LineEnds::new(bytes, from + 3)
        .find(|&at| ends_head(bytes, at))
        .map(|at| at + 1)
}

/// Whether the `\n` at `at` ends a head: it completes a CRLF CRLF.
#[inline]
pub(crate) fn ends_head(bytes: &[u8], at: usize) -> bool {
    at >= 3 && bytes[at - 3..at] == *b"\r\n\r"
}

/// The `N` bytes from `at`, bytes past the end read as zeros (which are
/// not `\n`).
#[inline]
fn chunk<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let rest = bytes.get(at..).unwrap_or_default();
    match rest.first_chunk::<N>() {
        Some(chunk) => *chunk,
        None => {
            let mut padded = [0u8; N];
            padded[..rest.len()].copy_from_slice(rest);
            padded
        }
    }
}

/// Bytes looked at together.
#[cfg(target_arch = "x86_64")]
const CHUNK: usize = 16;
/// Bits of a mask per byte of the chunk.
#[cfg(target_arch = "x86_64")]
const BITS_PER_BYTE: u32 = 1;

/// Bit `i` set when byte `at + i` is a `\n`.
#[cfg(target_arch = "x86_64")]
#[inline]
fn newline_mask(bytes: &[u8], at: usize) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let chunk: [u8; CHUNK] = chunk(bytes, at);
    // SAFETY: SSE2 is part of x86-64 itself, so these instructions exist
    // on every processor this code is built for; the load reads the 16
    // bytes of `chunk`, which lives through the call, and needs no
    // alignment (loadu).
    let bits = unsafe {
        let found = _mm_cmpeq_epi8(
            _mm_loadu_si128(chunk.as_ptr().cast()),
            _mm_set1_epi8(b'\n' as i8),
        );
        _mm_movemask_epi8(found)
    };
    // movemask fills only the low 16 bits.
    u64::from(bits as u32 & 0xffff)
}

#[cfg(not(target_arch = "x86_64"))]
const CHUNK: usize = 8;
#[cfg(not(target_arch = "x86_64"))]
const BITS_PER_BYTE: u32 = 8;
#[cfg(not(target_arch = "x86_64"))]
use swar_newline_mask as newline_mask;

/// The high bit of each of the eight bytes from `at` that is a `\n` (in
/// the order of the bytes, lowest first); bytes past the end read as
/// zeros. Built on x86-64 only for its test.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline]
fn swar_newline_mask(bytes: &[u8], at: usize) -> u64 {
    /// `\n` in every byte.
    const NEWLINES: u64 = u64::from_ne_bytes([b'\n'; 8]);
    /// The low seven bits of every byte.
    const LOW7: u64 = u64::from_ne_bytes([0x7f; 8]);
    let x = u64::from_le_bytes(chunk(bytes, at)) ^ NEWLINES;
    // A byte's low seven bits plus 0x7f sets its high bit unless they are
    // all zero, and never carries into the next byte; OR-ing in the byte
    // itself covers its high bit. What is left clear is a zero byte.
    !(((x & LOW7) + LOW7) | x) & !LOW7
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(bytes: &[u8], from: usize) -> Vec<usize> {
        (from..bytes.len()).filter(|&i| bytes[i] == b'\n').collect()
    }

    #[test]
    fn every_newline_is_found_and_nothing_else() {
        // Every byte value next to a newline, at every offset in a word:
        // 0x0a's neighbours 0x09, 0x0b, 0x8a and 0x0a itself are where a
        // borrowing zero test would go wrong.
        let mut bytes = Vec::new();
        for b in 0..=255u8 {
            bytes.extend_from_slice(&[b, b'\n', b, b, 0x8a, b'\n', b'\n', 0x0b, 0x09]);
        }
        for from in 0..20 {
            assert_eq!(
                LineEnds::new(&bytes, from).collect::<Vec<_>>(),
                naive(&bytes, from),
                "from {from}"
            );
        }
        for len in 0..40 {
            let slice = &bytes[..len];
            assert_eq!(LineEnds::new(slice, 0).collect::<Vec<_>>(), naive(slice, 0));
        }
        assert_eq!(LineEnds::new(b"abc", 7).next(), None);
        // The eight-byte form, which x86-64 builds do not iterate with.
        for at in 0..bytes.len() {
            let mask = swar_newline_mask(&bytes, at);
            let found: Vec<usize> = (0..8)
                .filter(|i| mask & (0x80 << (8 * i)) != 0)
                .map(|i| at + i)
                .collect();
            let expected: Vec<usize> = naive(&bytes, at)
                .into_iter()
                .filter(|&i| i < at + 8)
                .collect();
            assert_eq!(found, expected, "at {at}");
        }
    }

    #[test]
    fn a_head_ends_after_the_first_empty_line() {
        let head = b"HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody\r\n\r\n";
        assert_eq!(head_end(head, 0), Some(25));
        assert_eq!(head_end(b"HTTP/1.1 200 OK\r\n\r\n", 0), Some(19));
        // Only an end that starts at or after `from` counts.
        assert_eq!(head_end(head, 22), Some(33));
        assert_eq!(head_end(b"a\n\nb\r\n\n\r\n", 0), None);
        assert_eq!(head_end(b"\r\n\r", 0), None);
        assert_eq!(head_end(b"\r\n\r\n", 0), Some(4));
    }
}
