//! Which architecture a program was built for: this one's, or another
//! executable's, read from its ELF header. `sledge ab --a-sledge` and
//! `fleet run --binary-for` use it to say which build is which (a 32-bit
//! x86 sledge beside a 64-bit one), and to check that a file given as a
//! build for an architecture is one.
//!
//! The names are `uname -m`'s where one exists (`x86_64`, `aarch64`), and
//! `i686` for 32-bit x86 (Rust's target name; the ELF header does not
//! tell i386 from i686).

use std::io::Read;
use std::path::Path;

/// A build's architecture and word size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildArch {
    /// `x86_64`, `i686`, `aarch64`, `arm`, `riscv64`, ... or
    /// `machine N` for an ELF machine number not named here.
    pub arch: String,
    /// 32 or 64.
    pub bits: u32,
}

impl std::fmt::Display for BuildArch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, {}-bit", self.arch, self.bits)
    }
}

/// This program's build.
pub fn this_build() -> BuildArch {
    let arch = match std::env::consts::ARCH {
        "x86" => "i686",
        other => other,
    };
    BuildArch {
        arch: arch.to_string(),
        bits: usize::BITS,
    }
}

/// The build of the executable at `path`, from its ELF header; `None`
/// when it cannot be read or is no ELF file (a shell script wrapping
/// sledge, say).
pub fn of_file(path: &Path) -> Option<BuildArch> {
    let mut header = [0u8; 20];
    std::fs::File::open(path)
        .ok()?
        .read_exact(&mut header)
        .ok()?;
    from_header(&header)
}

/// Reads an ELF header's class (32 or 64 bits), byte order and machine.
fn from_header(header: &[u8; 20]) -> Option<BuildArch> {
    if header[..4] != *b"\x7fELF" {
        return None;
    }
    let bits = match header[4] {
        1 => 32,
        2 => 64,
        _ => return None,
    };
    let machine = match header[5] {
        1 => u16::from_le_bytes([header[18], header[19]]),
        2 => u16::from_be_bytes([header[18], header[19]]),
        _ => return None,
    };
    let arch = match (machine, bits) {
        (3, _) => "i686".to_string(),
        (62, 64) => "x86_64".to_string(),
        (62, _) => "x32".to_string(),
        (40, _) => "arm".to_string(),
        (183, _) => "aarch64".to_string(),
        (243, 64) => "riscv64".to_string(),
        (243, _) => "riscv32".to_string(),
        (21, _) => "ppc64".to_string(),
        (22, _) => "s390x".to_string(),
        (n, _) => format!("machine {n}"),
    };
    Some(BuildArch { arch, bits })
}

/// Whether a host whose `uname -m` is `machine` is the architecture
/// `arch` (a name of [`BuildArch::arch`]): the same name, or any of
/// `i386`..`i686` for `i686`.
pub fn host_is(machine: &str, arch: &str) -> bool {
    machine == arch
        || (arch == "i686" && matches!(machine, "i386" | "i486" | "i586" | "i686"))
        || (arch == "x86" && matches!(machine, "i386" | "i486" | "i586" | "i686"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(class: u8, data: u8, machine: u16) -> [u8; 20] {
        let mut h = [0u8; 20];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = class;
        h[5] = data;
        let m = if data == 1 {
            machine.to_le_bytes()
        } else {
            machine.to_be_bytes()
        };
        h[18..20].copy_from_slice(&m);
        h
    }

    #[test]
    fn elf_headers_name_their_architecture_and_word_size() {
        let i686 = from_header(&header(1, 1, 3)).unwrap();
        assert_eq!(i686.to_string(), "i686, 32-bit");
        let x86_64 = from_header(&header(2, 1, 62)).unwrap();
        assert_eq!(x86_64.to_string(), "x86_64, 64-bit");
        assert_eq!(from_header(&header(2, 2, 22)).unwrap().arch, "s390x");
        assert_eq!(
            from_header(&header(2, 1, 9999)).unwrap().arch,
            "machine 9999"
        );
        let mut script = [0u8; 20];
        script[..9].copy_from_slice(b"#!/bin/sh");
        assert_eq!(from_header(&script), None);
    }

    #[test]
    fn this_program_reads_as_the_build_it_is() {
        let exe = std::env::current_exe().unwrap();
        assert_eq!(of_file(&exe), Some(this_build()));
        assert_eq!(of_file(Path::new("/nonexistent/sledge")), None);
    }

    #[test]
    fn every_x86_machine_name_is_an_i686_host() {
        for machine in ["i386", "i586", "i686"] {
            assert!(host_is(machine, "i686"), "{machine}");
        }
        assert!(host_is("x86_64", "x86_64"));
        assert!(!host_is("x86_64", "i686"));
        assert!(!host_is("aarch64", "x86_64"));
    }
}
