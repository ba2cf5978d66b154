//! Reading a serialized HdrHistogram that comes from outside the process
//! (a histogram of an import document, of an agent's result) without
//! trusting it.
//!
//! hdrhistogram's deserializer trusts its input further than a file or
//! another host can be trusted: it allocates whatever payload length the
//! header claims (up to 4 GiB) before reading a byte of it, inflates a
//! compressed payload without a limit, and negates a run of zero counts
//! that can be `i64::MIN` (an overflow: a panic where overflow checks are
//! on). So the bytes are checked here first, and the deserializer is only
//! handed a plain V2 serialization whose every claim lies within the bytes
//! given.
//!
//! The format (HdrHistogram's, shared by its Java and Rust libraries): a
//! 4-byte mark; for V2, a 40-byte header (mark, payload length,
//! normalizing offset, significant digits, lowest and highest trackable
//! value, integer-to-double ratio) and the counts as zig-zag LEB128
//! varints of at most 9 bytes, a negative one standing for that many
//! zero counts; for compressed V2, a length and a zlib stream that
//! inflates to a V2 serialization.

use std::io::Read;

use flate2::read::ZlibDecoder;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;

/// The mark of a plain V2 serialization.
const V2_MARK: u32 = 0x1c84_9313;
/// The mark of a compressed (zlib) V2 serialization, as sledge stores and
/// exports them.
const V2_DEFLATE_MARK: u32 = 0x1c84_9314;
/// Bytes of a V2 header, mark included.
const V2_HEADER: usize = 40;

/// The most a compressed serialization may inflate to. A histogram of
/// three significant digits (every histogram sledge records) over all of
/// `u64` has about 60,000 counts, at most 9 bytes each: half a megabyte.
/// The limit leaves room for far finer histograms and keeps a small file
/// from inflating to gigabytes.
pub const MAX_INFLATED: usize = 16 << 20;

/// Why bytes are not a histogram; said after the field or message that
/// held them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistogramBytesError {
    /// Fewer bytes than a part of the format needs.
    #[error("its {part} needs {needed} bytes and only {had} are there")]
    Truncated {
        /// Which part.
        part: &'static str,
        /// Bytes the part needs, as its header says.
        needed: u64,
        /// Bytes there are.
        had: usize,
    },
    /// The first 4 bytes are not a mark of the V2 formats.
    #[error("its first 4 bytes ({0:#010x}) mark neither a V2 nor a compressed V2 serialization")]
    UnknownMark(u32),
    /// The compressed payload is not a zlib stream.
    #[error("its compressed payload does not inflate: {0}")]
    Inflate(String),
    /// The compressed payload inflates past [`MAX_INFLATED`].
    #[error(
        "its compressed payload inflates to more than {MAX_INFLATED} bytes, more than a histogram needs"
    )]
    InflatesTooFar,
    /// The compressed payload holds something other than a V2
    /// serialization.
    #[error("its compressed payload starts with {0:#010x}, not with a V2 serialization's mark")]
    InnerMark(u32),
    /// A count ends with the payload.
    #[error("its count at payload byte {0} is cut off by the payload's end")]
    CountCut(usize),
    /// A run of zero counts too long for any histogram (one whose
    /// negation overflows).
    #[error("its run of zero counts at payload byte {0} is longer than any histogram")]
    ZeroRun(usize),
    /// What the deserializer itself refused (bounds, a count past the
    /// histogram's end...).
    #[error("{0}")]
    Refused(String),
}

/// Reads a plain or compressed V2 serialization, checking it before the
/// deserializer sees it.
pub fn read_histogram(bytes: &[u8]) -> Result<Histogram<u64>, HistogramBytesError> {
    let inflated;
    let v2 = match mark(bytes, "mark")? {
        V2_MARK => bytes,
        V2_DEFLATE_MARK => {
            inflated = inflate(bytes)?;
            match mark(&inflated, "inflated mark")? {
                V2_MARK => &inflated[..],
                other => return Err(HistogramBytesError::InnerMark(other)),
            }
        }
        other => return Err(HistogramBytesError::UnknownMark(other)),
    };
    check_v2(v2)?;
    Deserializer::new()
        .deserialize(&mut &v2[..])
        .map_err(|e| HistogramBytesError::Refused(e.to_string()))
}

/// The big-endian `u32` at the start of `bytes`.
fn mark(bytes: &[u8], part: &'static str) -> Result<u32, HistogramBytesError> {
    be_u32(bytes, 0, part)
}

fn be_u32(bytes: &[u8], at: usize, part: &'static str) -> Result<u32, HistogramBytesError> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(HistogramBytesError::Truncated {
            part,
            needed: (at + 4) as u64,
            had: bytes.len(),
        })
}

/// The V2 serialization inside a compressed one (mark, length, zlib
/// stream of that length), inflated up to [`MAX_INFLATED`].
fn inflate(bytes: &[u8]) -> Result<Vec<u8>, HistogramBytesError> {
    let length = be_u32(bytes, 4, "compressed length")?;
    let stream = bytes
        .get(8..)
        .and_then(|rest| rest.get(..length as usize))
        .ok_or(HistogramBytesError::Truncated {
            part: "compressed payload",
            needed: 8 + u64::from(length),
            had: bytes.len(),
        })?;
    let mut inflated = Vec::new();
    ZlibDecoder::new(stream)
        .take(MAX_INFLATED as u64 + 1)
        .read_to_end(&mut inflated)
        .map_err(|e| HistogramBytesError::Inflate(e.to_string()))?;
    if inflated.len() > MAX_INFLATED {
        return Err(HistogramBytesError::InflatesTooFar);
    }
    Ok(inflated)
}

/// Checks the claims of a plain V2 serialization that the deserializer
/// would act on unchecked: the payload length against the bytes there
/// are, and every count's encoding.
fn check_v2(bytes: &[u8]) -> Result<(), HistogramBytesError> {
    if bytes.len() < V2_HEADER {
        return Err(HistogramBytesError::Truncated {
            part: "header",
            needed: V2_HEADER as u64,
            had: bytes.len(),
        });
    }
    let length = be_u32(bytes, 4, "payload length")? as usize;
    let payload = bytes[V2_HEADER..]
        .get(..length)
        .ok_or(HistogramBytesError::Truncated {
            part: "payload",
            needed: (V2_HEADER + length) as u64,
            had: bytes.len(),
        })?;
    let mut at = 0;
    while at < payload.len() {
        let (encoded, used) = varint(&payload[at..]).ok_or(HistogramBytesError::CountCut(at))?;
        // Zig-zag: a negative number is a run of that many zero counts,
        // which the deserializer negates.
        let decoded = ((encoded >> 1) as i64) ^ -((encoded & 1) as i64);
        if decoded == i64::MIN {
            return Err(HistogramBytesError::ZeroRun(at));
        }
        at += used;
    }
    Ok(())
}

/// The LEB128 varint of at most 9 bytes at the start of `bytes` (the 9th
/// byte's 8 bits all count) and its length; `None` when `bytes` end
/// inside it.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        if i == 8 {
            return Some((value | (u64::from(b) << 56), 9));
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer, V2Serializer};

    fn sample() -> Histogram<u64> {
        let mut h = crate::stats::latency_histogram();
        for v in [1u64, 900, 1_500_000, 2_000_000_000] {
            h.record_n(v, v % 7 + 1).unwrap();
        }
        h
    }

    #[test]
    fn both_serializations_read_back_count_for_count() {
        let h = sample();
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&h, &mut plain).unwrap();
        assert_eq!(read_histogram(&plain).unwrap(), h);
        let mut compressed = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut compressed)
            .unwrap();
        assert_eq!(read_histogram(&compressed).unwrap(), h);
    }

    /// A V2 header claiming `payload` bytes of counts, and no counts.
    fn header(payload: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(V2_MARK.to_be_bytes());
        bytes.extend(payload.to_be_bytes());
        bytes.extend(0u32.to_be_bytes());
        bytes.extend(3u32.to_be_bytes());
        bytes.extend(1u64.to_be_bytes());
        bytes.extend(2048u64.to_be_bytes());
        bytes.extend(1f64.to_be_bytes());
        bytes
    }

    #[test]
    fn a_payload_longer_than_the_bytes_is_refused_before_it_is_allocated() {
        // The deserializer would allocate the claimed 4 GiB first.
        assert_eq!(
            read_histogram(&header(u32::MAX)).unwrap_err(),
            HistogramBytesError::Truncated {
                part: "payload",
                needed: 40 + u64::from(u32::MAX),
                had: 40
            }
        );
        assert!(read_histogram(&header(0)).unwrap().is_empty());
    }

    #[test]
    fn a_payload_that_inflates_too_far_is_refused() {
        let mut inner = header(0);
        inner.resize(MAX_INFLATED + 1, 0);
        let mut encoder =
            flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut encoder, &inner).unwrap();
        let stream = encoder.finish().unwrap();
        let mut bytes = Vec::new();
        bytes.extend(V2_DEFLATE_MARK.to_be_bytes());
        bytes.extend((stream.len() as u32).to_be_bytes());
        bytes.extend(stream);
        assert_eq!(
            read_histogram(&bytes).unwrap_err(),
            HistogramBytesError::InflatesTooFar
        );
        let e = read_histogram(b"HIST").unwrap_err().to_string();
        assert_eq!(
            e,
            "its first 4 bytes (0x48495354) mark neither a V2 nor a compressed V2 serialization"
        );
    }

    #[test]
    fn the_varint_reads_as_the_format_has_it() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x01]), Some((129, 2)));
        assert_eq!(varint(&[0xff; 9]), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x80, 0x80]), None);
        assert_eq!(varint(&[]), None);
    }
}
