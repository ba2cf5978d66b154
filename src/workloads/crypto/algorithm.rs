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

/// The `algorithm` parameter reads as the algorithm it names.
impl crate::engine::FromParam for Algorithm {
    fn from_param(name: &str, value: &crate::engine::ParamValue) -> Self {
        crate::engine::typed_params::choice_by(name, value, Algorithm::from_name)
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
        // AES_cbc_encrypt writes a whole 16-byte block for a partial tail,
        // past the end of `block`: this check is what keeps the call below
        // in bounds, so it must hold in release builds too. (The case
        // rejects such sizes when it is built; this costs one compare per
        // operation.)
        assert!(
            block.len().is_multiple_of(16),
            "AES-CBC needs whole 16-byte blocks, got {} bytes",
            block.len()
        );
        // SAFETY: in-place CBC is allowed by AES_cbc_encrypt; the length is
        // a multiple of 16 (asserted above), so it reads and writes exactly
        // `block`, and `iv` is 16 bytes.
        unsafe {
            aws_lc_sys::AES_cbc_encrypt(
                block.as_ptr(),
                block.as_mut_ptr(),
                block.len(),
                &*self.key,
                self.iv.as_mut_ptr(),
                aws_lc_sys::AES_ENCRYPT,
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
    fn digests_match_their_standard_vectors() {
        // RFC 1321 and FIPS 180-2 test vectors for "abc".
        let cases = [
            (Algorithm::Md5, "900150983cd24fb0d6963f7d28e17f72"),
            (
                Algorithm::Sha256,
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
            (
                Algorithm::Sha512,
                "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a
                 2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            ),
        ];
        for (algorithm, digest) in cases {
            let mut op = algorithm.operation();
            op.run(&mut b"abc".to_vec());
            assert_eq!(op.output(), hex(digest).as_slice(), "{algorithm}");
        }
    }

    #[test]
    fn aes_256_cbc_matches_sp800_38a_and_chains_across_calls() {
        // NIST SP 800-38A, F.2.5 CBC-AES256.Encrypt; encrypted two blocks
        // per call to check that the chain runs on from call to call.
        let key: [u8; 32] = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
            .try_into()
            .unwrap();
        let iv: [u8; 16] = hex("000102030405060708090a0b0c0d0e0f").try_into().unwrap();
        let plain = hex(
            "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51
             30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710",
        );
        let cipher = hex(
            "f58c4c04d6e5f1ba779eabfb5f7bfbd6 9cfc4e967edb808d679f777bc6702c7d
             39f23369a9d9bacfa530e26304231461 b2eb05e2c39be9fcda6c19078c6a9d1b",
        );
        let mut op = AesCbc::new(&key, &iv);
        let mut data = plain.clone();
        for half in data.chunks_mut(32) {
            op.run(half);
        }
        assert_eq!(data, cipher);
    }

    #[test]
    #[should_panic(expected = "AES-CBC needs whole 16-byte blocks")]
    fn aes_cbc_refuses_a_partial_block_instead_of_writing_past_it() {
        let mut op = AesCbc::new(&[0x42; 32], &[0x24; 16]);
        let mut data = vec![0u8; 20];
        op.run(&mut data);
    }

    #[test]
    fn aeads_match_their_standard_vectors() {
        // GCM: McGrew & Viega, "The Galois/Counter Mode of Operation",
        // test cases 3 and 15. ChaCha20-Poly1305: RFC 8439, 2.8.2.
        let gcm_plain = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72
                         1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
        let sunscreen = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        type Vector<'a> = (
            Algorithm,
            &'a str,
            &'a str,
            &'a str,
            Vec<u8>,
            &'a str,
            &'a str,
        );
        let cases: [Vector; 3] = [
            (
                Algorithm::Aes128Gcm,
                "feffe9928665731c6d6a8f9467308308",
                "cafebabefacedbaddecaf888",
                "",
                hex(gcm_plain),
                "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e
                 21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
                "4d5c2af327cd64a62cf35abd2ba6fab4",
            ),
            (
                Algorithm::Aes256Gcm,
                "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
                "cafebabefacedbaddecaf888",
                "",
                hex(gcm_plain),
                "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa
                 8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
                "b094dac5d93471bdec1a502270e3cc6c",
            ),
            (
                Algorithm::ChaCha20Poly1305,
                "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
                "070000004041424344454647",
                "50515253c0c1c2c3c4c5c6c7",
                sunscreen.to_vec(),
                "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6
                 3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36
                 92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc
                 3ff4def08e4b7a9de576d26586cec64b6116",
                "1ae10b594f09e26a7e902ecbd0600691",
            ),
        ];
        for (algorithm, key, nonce, aad, plain, cipher, tag) in cases {
            let nonce: [u8; 12] = hex(nonce).try_into().unwrap();
            let mut op = Aead::new(algorithm, &hex(key), nonce, &hex(aad));
            let mut data = plain;
            op.run(&mut data);
            assert_eq!(data, hex(cipher), "{algorithm} ciphertext");
            assert_eq!(op.output(), hex(tag).as_slice(), "{algorithm} tag");
        }
    }

    #[test]
    fn names_round_trip() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::from_name(a.name()), Some(a));
        }
        assert_eq!(
            Algorithm::from_name("AES-256-CBC"),
            Some(Algorithm::Aes256Cbc)
        );
        assert_eq!(Algorithm::from_name("rot13"), None);
    }

    #[test]
    fn every_operation_runs_on_small_and_large_blocks() {
        // A fresh operation (the fixed key material of `operation()`) on a
        // block of `size` bytes of 0x01 must give what an independent
        // implementation gives: here the SHA-256 of the block after the
        // operation followed by its output (digest or tag), computed with
        // Python's hashlib and `cryptography` (CBC also checked against
        // `openssl enc -aes-256-cbc -nopad`). A wrong length, a skipped
        // tail or a wrong chaining would all change it.
        let expected: [(Algorithm, [&str; 3]); 7] = [
            (
                Algorithm::Md5,
                [
                    "8c64afca7e0758195bb27f9f5e934016d7c744676000d304974218c8f81241f5",
                    "6acea3b06b935f76bc68fe489f3200a1ff4ac4ef9a441fc61502d3f4ee21975f",
                    "990ba93115ae98c6aa6034ad87368073c1260c9c8ab4edeebb257a0376e64da1",
                ],
            ),
            (
                Algorithm::Sha256,
                [
                    "c15edded4af0b2d9f6e2382146fb7b8ff294ee8a997f86648c277f6ffc453331",
                    "610e04834abf6ecf46ea41d616a942d3d57e9938684664930c29317ae2b912f6",
                    "18c91bd25d05e47efb657439e25d0ce8f75a5b56a92e0eb31bf901ed114e14e0",
                ],
            ),
            (
                Algorithm::Sha512,
                [
                    "fb32dada53cd982508472f6fc8bca264eed8eed2d43fad4ede5d1d656fda07b9",
                    "06f21c648dbe102d7ed6a3ae1adcf58c829355b72069de03270f5953c67f3bc5",
                    "0047a9b3cb70fc42e024abc0382a4ec0f8ea8311a8dabee1ff8cc56af8c843ad",
                ],
            ),
            (
                Algorithm::Aes256Cbc,
                [
                    "9ad83c1dfe92eaace82ea82d237816e24775804fc173dd9dc04cc712fdb9ba7d",
                    "8aeeea8cde80f7d214e6b9a1b41c58c6041c5141f8e7ada63ddb311d10162709",
                    "157dafff9a5abaa3e2894559b6e4bfb2aed709586dd42b9dc4c6b661c3e71606",
                ],
            ),
            (
                Algorithm::Aes128Gcm,
                [
                    "a259ef0ba5d1aa9821932b76d3c2e01c58280c0b1c7b90d970c8d6677bc3de92",
                    "1394dc5502aa293efe5fe995c9f79516fc1b35231507e70c3dba9bb2122893e4",
                    "d36d6327f1369122259ffef2064d5af117564d921cc80a172a42f4cbb86ed81c",
                ],
            ),
            (
                Algorithm::Aes256Gcm,
                [
                    "414b1ef6c142d49f667330312a691fba74c2ccfc5e94319625427ee9ae4f2df9",
                    "eadeeb28cf4789c98930b5a418e841cd4956a79b2b951abe566d21505fe416e0",
                    "8164fdca3f2f318a03c5482f95b53b03c997d20f24e3945360337d81695305dc",
                ],
            ),
            (
                Algorithm::ChaCha20Poly1305,
                [
                    "940b0a5e8e3e50ffb392ff6ec34f5e1f97308b5b9d688b61576d3d97f5671a28",
                    "69394366bdc2a6b799f2106266e99746b981ef16fd1ae56c9b91a9698a74a2bb",
                    "c467378d44d0af0ce6e62048594afa23fd82f70075b732fd691d8fcb825e08ac",
                ],
            ),
        ];
        assert_eq!(expected.map(|(a, _)| a), Algorithm::ALL);
        for (algorithm, fingerprints) in expected {
            for (size, fingerprint) in [16, 64, 16384].into_iter().zip(fingerprints) {
                let mut op = algorithm.operation();
                let mut block = vec![1u8; size];
                op.run(&mut block);
                block.extend_from_slice(op.output());
                assert_eq!(
                    sha2::Sha256::digest(&block).as_slice(),
                    hex(fingerprint).as_slice(),
                    "{algorithm} on {size} B"
                );
            }
        }
    }
}
