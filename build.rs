//! Builds sledge's small fork/exec program
//! (`src/workloads/unixbench/forkexec.c`), which runs the execl and spawn
//! loops from a small C program as UnixBench does, with the target's C
//! compiler (the one the bundled SQLite needs anyway). sledge embeds the
//! executable; see `src/workloads/unixbench/forkexec.rs` for why.

use std::env;
use std::path::PathBuf;

const SOURCE: &str = "src/workloads/unixbench/forkexec.c";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    let out =
        PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("sledge-forkexec");
    let compiler = cc::Build::new().opt_level(2).warnings(true).get_compiler();
    let status = compiler
        .to_command()
        .arg(SOURCE)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("running the C compiler on {SOURCE}: {e}"));
    assert!(status.success(), "the C compiler failed on {SOURCE}");
}
