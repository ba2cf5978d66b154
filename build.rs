//! Builds the small C program that `unixbench.execl` executes over and
//! over (`src/workloads/unixbench/execl_image.c`) with the target's C
//! compiler, the one the bundled SQLite needs anyway. sledge embeds the
//! executable and writes it out for the case; see that file for why the
//! test does not exec sledge itself.

use std::env;
use std::path::PathBuf;

const SOURCE: &str = "src/workloads/unixbench/execl_image.c";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("sledge-execl-image");
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
