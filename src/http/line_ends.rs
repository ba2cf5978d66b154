//! The line ends of a response head, found eight bytes at a time.
//!
//! A response head is a dozen short lines. `memchr` is fast over long
//! haystacks, but called once per line its set-up costs more than the
//! line: against nginx's nine-line head, the search for the head's end
//! and the calls per line took about 840 instructions per response, a
//! third of the generator's own instructions per request (callgrind). One
//! pass a word at a time finds both together, at about 20 instructions
//! per eight bytes. The test is exact (SWAR, "SIMD within a register"): a
//! byte is `\n` when it is zero after an XOR with `\n`, and the zero test
//! below carries nothing from one byte into the next, so no other byte is
//! flagged.

/// `\n` in every byte.
const NEWLINES: u64 = u64::from_ne_bytes([b'\n'; 8]);
/// The low seven bits of every byte.
const LOW7: u64 = u64::from_ne_bytes([0x7f; 8]);

/// The positions of the `\n` bytes of a slice, in order.
pub(crate) struct LineEnds<'a> {
    bytes: &'a [u8],
    /// Where the word that `mask` describes starts.
    word_at: usize,
    /// The high bit of each byte of that word that is a `\n` not yet
    /// returned.
    mask: u64,
}

impl<'a> LineEnds<'a> {
    /// The `\n` bytes of `bytes` at or after `from`.
    pub(crate) fn new(bytes: &'a [u8], from: usize) -> Self {
        LineEnds {
            bytes,
            word_at: from,
            mask: newline_mask(bytes, from),
        }
    }
}

impl Iterator for LineEnds<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.word_at += 8;
            if self.word_at >= self.bytes.len() {
                return None;
            }
            self.mask = newline_mask(self.bytes, self.word_at);
        }
        let at = self.word_at + (self.mask.trailing_zeros() / 8) as usize;
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

/// The high bit of each of the eight bytes from `at` that is a `\n` (in
/// the order of the bytes, lowest first); bytes past the end count as
/// zeros, which are not `\n`.
#[inline]
fn newline_mask(bytes: &[u8], at: usize) -> u64 {
    let rest = bytes.get(at..).unwrap_or_default();
    let word = match rest.first_chunk::<8>() {
        Some(chunk) => u64::from_le_bytes(*chunk),
        None => {
            let mut padded = [0u8; 8];
            padded[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(padded)
        }
    };
    let x = word ^ NEWLINES;
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
