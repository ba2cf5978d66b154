//! The algorithms of the `openssl speed` battery, each as one operation on
//! one block, implemented by the fastest library we measured on x86-64
//! with AES-NI, SHA-NI, VAES and AVX-512 (2-core Zen 5 guest, MB/s at
//! 8192 B, `openssl speed -elapsed` 3.0 for reference):
//!
//! | algorithm | RustCrypto | ring | AWS-LC | openssl | chosen |
//! |---|---|---|---|---|---|
//! | MD5 | 344 | - | 449 | 445 | AWS-LC (OpenSSL's assembly) |
//! | SHA-256 | 1054 | 1020 | 1002 | 1065 | RustCrypto `sha2` (SHA-NI; fastest at 16 B) |
//! | SHA-512 | 459 | 422 | 438 | 568 | RustCrypto `sha2` (AVX2) |
//! | AES-256-CBC | 478 | - | 575 | 540 | AWS-LC |
//! | AES-GCM | 714 | 5423 | 10478 | - | AWS-LC (VAES, AVX-512) |
//! | ChaCha20-Poly1305 | 555 | 1319 | 1410 | - | AWS-LC |
//!
//! Every library picks its code path at run time from CPUID, so one
//! binary runs everywhere and uses the widest instructions it finds.
//!
//! What one operation is follows `openssl speed -evp`: a digest is a
//! one-shot hash of the block (`EVP_Digest`); AES-CBC encrypts the block in
//! place, the chain running on from one block to the next
//! (`EVP_EncryptUpdate` on one context). For the AEADs one operation seals
//! one message, like a TLS record: a fresh nonce, 13 bytes of additional
//! data, the block encrypted in place and its 16-byte tag, which is what
//! `openssl speed -aead -evp aes-256-gcm` times. (Without `-aead`, openssl
//! 3.0 streams the AEADs without ever computing a tag; that is not how
//! they are used, so we do not copy it.)

use std::fmt;
use std::hint::black_box;

use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use sha2::Digest;

/// One algorithm of the battery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Md5,
    Sha256,
    Sha512,
    Aes256Cbc,
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
}

impl Algorithm {
    /// Every algorithm, in the order they are listed.
    pub const ALL: [Algorithm; 7] = [
        Algorithm::Md5,
        Algorithm::Sha256,
        Algorithm::Sha512,
        Algorithm::Aes256Cbc,
        Algorithm::Aes128Gcm,
        Algorithm::Aes256Gcm,
        Algorithm::ChaCha20Poly1305,
    ];

    /// The names users type, the same as openssl's `-evp` names.
    pub const NAMES: &'static [&'static str] = &[
        "md5",
        "sha256",
        "sha512",
        "aes-256-cbc",
        "aes-128-gcm",
        "aes-256-gcm",
        "chacha20-poly1305",
    ];

    /// The openssl name.
    pub fn name(self) -> &'static str {
        Self::NAMES[Self::ALL.iter().position(|&a| a == self).unwrap_or(0)]
    }

    /// The algorithm with this openssl name (case-insensitive).
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Self::NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .map(|i| Self::ALL[i])
    }

    /// Block sizes must be a multiple of this: CBC without padding works
    /// on whole 16-byte blocks.
    pub fn block_multiple(self) -> usize {
        match self {
            Algorithm::Aes256Cbc => 16,
            _ => 1,
        }
    }

    /// A fresh operation with fixed, arbitrary key material (the key does
    /// not change the speed).
    pub fn operation(self) -> Box<dyn Operation> {
        match self {
            Algorithm::Md5 => Box::new(Md5::default()),
            Algorithm::Sha256 => Box::new(Sha2::<sha2::Sha256>::default()),
            Algorithm::Sha512 => Box::new(Sha2::<sha2::Sha512>::default()),
            Algorithm::Aes256Cbc => Box::new(AesCbc::new(&[0x42; 32], &[0x24; 16])),
            Algorithm::Aes128Gcm | Algorithm::Aes256Gcm | Algorithm::ChaCha20Poly1305 => {
                let key = vec![0x42; self.aead().key_len()];
                Box::new(Aead::new(self, &key, [0x24; 12], &[0x13; 13]))
            }
        }
    }

    fn aead(self) -> &'static aead::Algorithm {
        match self {
            Algorithm::Aes128Gcm => &aead::AES_128_GCM,
            Algorithm::Aes256Gcm => &aead::AES_256_GCM,
            Algorithm::ChaCha20Poly1305 => &aead::CHACHA20_POLY1305,
            _ => unreachable!("{self} is not an AEAD"),
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One timed operation on one block, as `openssl speed` counts them.
pub trait Operation: Send {
    /// Processes `block` (in place for ciphers).
    fn run(&mut self, block: &mut [u8]);
    /// What the last operation produced besides the block: the digest, or
    /// the AEAD tag; empty for CBC. Used by the known-answer tests.
    fn output(&self) -> &[u8];
}

/// MD5 from AWS-LC, whose x86-64 assembly is OpenSSL's.
#[derive(Default)]
pub struct Md5 {
    digest: [u8; 16],
}

impl Operation for Md5 {
    #[inline]
    fn run(&mut self, block: &mut [u8]) {
        // SAFETY: `block` is valid for `len` bytes and `digest` has room
        // for MD5's 16 bytes.
        unsafe { aws_lc_sys::MD5(block.as_ptr(), block.len(), self.digest.as_mut_ptr()) };
        black_box(&self.digest);
    }
    fn output(&self) -> &[u8] {
        &self.digest
    }
}

/// SHA-256 or SHA-512 from RustCrypto (SHA-NI or AVX2, chosen at run time).
#[derive(Default)]
pub struct Sha2<D: Digest> {
    digest: Vec<u8>,
    _hash: std::marker::PhantomData<D>,
}

impl<D: Digest + Send> Operation for Sha2<D> {
    #[inline]
    fn run(&mut self, block: &mut [u8]) {
        let digest = D::digest(&*block);
        self.digest.clear();
        self.digest.extend_from_slice(black_box(&digest));
    }
    fn output(&self) -> &[u8] {
        &self.digest
    }
}

/// AES-256 in CBC mode from AWS-LC, encrypting in place; the IV carries
/// over from one call to the next, as one long `EVP_EncryptUpdate` stream.
pub struct AesCbc {
    key: Box<aws_lc_sys::AES_KEY>,
    iv: [u8; 16],
}

// SAFETY: AES_KEY is plain round-key data with no interior pointers.
unsafe impl Send for AesCbc {}

impl AesCbc {
    /// Expands a 32-byte key; `iv` starts the chain.
    pub fn new(key: &[u8; 32], iv: &[u8; 16]) -> Self {
        // SAFETY: AES_KEY is plain data, zero is a valid bit pattern, and
        // AES_set_encrypt_key reads 256 bits of `key`.
        let mut expanded: Box<aws_lc_sys::AES_KEY> = Box::new(unsafe { std::mem::zeroed() });
        let rc = unsafe { aws_lc_sys::AES_set_encrypt_key(key.as_ptr(), 256, &mut *expanded) };
        assert_eq!(rc, 0, "AES_set_encrypt_key rejected a 256-bit key");
        AesCbc {
            key: expanded,
            iv: *iv,
        }
    }
}

impl Operation for AesCbc {
    #[inline]
    fn run(&mut self, block: &mut [u8]) {
        debug_assert_eq!(block.len() % 16, 0);
        // SAFETY: in-place CBC is allowed by AES_cbc_encrypt; the length is
        // a multiple of 16 (checked when the case is built) and `iv` is 16
        // bytes.
        unsafe {
            aws_lc_sys::AES_cbc_encrypt(
                block.as_ptr(),
                block.as_mut_ptr(),
                block.len(),
                &*self.key,
                self.iv.as_mut_ptr(),
                aws_lc_sys::AES_ENCRYPT as i32,
            )
        };
    }
    fn output(&self) -> &[u8] {
        &[]
    }
}

/// An AEAD from AWS-LC sealing one message per call: the nonce is a
/// counter in its first eight bytes, so no nonce repeats within a run.
pub struct Aead {
    key: LessSafeKey,
    nonce: [u8; 12],
    counter: u64,
    aad: Vec<u8>,
    tag: [u8; 16],
}

impl Aead {
    /// A key for `algorithm`; `nonce` is used as is by the first call and
    /// then counted up.
    pub fn new(algorithm: Algorithm, key: &[u8], nonce: [u8; 12], aad: &[u8]) -> Self {
        let key = UnboundKey::new(algorithm.aead(), key).expect("key length matches the AEAD");
        Aead {
            key: LessSafeKey::new(key),
            nonce,
            counter: 0,
            aad: aad.to_vec(),
            tag: [0; 16],
        }
    }
}

impl Operation for Aead {
    #[inline]
    fn run(&mut self, block: &mut [u8]) {
        let mut nonce = self.nonce;
        let first = u64::from_le_bytes(nonce[..8].try_into().expect("8 bytes"));
        nonce[..8].copy_from_slice(&first.wrapping_add(self.counter).to_le_bytes());
        self.counter += 1;
        let tag = self
            .key
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(self.aad.as_slice()),
                block,
            )
            .expect("sealing fails only for messages over 64 GiB");
        self.tag.copy_from_slice(tag.as_ref());
    }
    fn output(&self) -> &[u8] {
        &self.tag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        let clean: String = text.split_whitespace().collect();
        (0..clean.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&clean[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn names_round_trip() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::from_name(a.name()), Some(a));
        }
        assert_eq!(Algorithm::from_name("AES-256-CBC"), Some(Algorithm::Aes256Cbc));
        assert_eq!(Algorithm::from_name("rot13"), None);
    }

    #[test]
    fn every_operation_runs_on_small_and_large_blocks() {
        for a in Algorithm::ALL {
            let mut op = a.operation();
            for size in [16, 64, 16384] {
                let mut block = vec![1u8; size];
                op.run(&mut block);
            }
        }
    }
}
