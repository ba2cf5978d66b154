#!/usr/bin/env bash
# Builds sledge's Debian package: the release binary, its manual pages
# and its bash, zsh and fish completions, packed by cargo-deb as
# `[package.metadata.deb]` in Cargo.toml lists them. Prints the package's
# path as the last line of standard output.
#
#   cargo install cargo-deb --locked    # once; a developer tool
#   pkg/deb.sh                          # target/debian/sledge_VERSION-1_ARCH.deb
#   pkg/check-deb.sh target/debian/sledge_*.deb
#   apt install ./target/debian/sledge_*.deb
#
# The pages and scripts are written by the release binary itself
# (`sledge man --dir`, `sledge completions SHELL`), so they describe
# exactly the sledge in the package; they go into the target directory's
# release/assets/, where the asset list looks for them.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo deb --version >/dev/null 2>&1; then
  echo "cargo-deb is not installed: cargo install cargo-deb --locked" >&2
  exit 1
fi

cargo build --release --locked >&2
# The real target directory (CARGO_TARGET_DIR or the configuration may
# move it); cargo-deb finds the same one for `target/release/` paths.
# cargo metadata prints it as a JSON string, whose escapes (\" \\ \n
# \uXXXX) sed cannot decode and a machine with only Rust has no tool for:
# the value is read up to its closing quote (the first one no backslash
# escapes), and a value holding any escape is refused rather than
# misread. Non-ASCII characters are not escaped, so they pass.
metadata=$(cargo metadata --format-version 1 --no-deps --locked)
target_dir=$(sed -nE 's/.*"target_directory"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)".*/\1/p' <<<"$metadata")
case $target_dir in
  *\\*)
    echo "the target directory's path, as cargo metadata writes it, is \"$target_dir\": it holds \", \\ or a control character, which this script cannot read back safely; build with CARGO_TARGET_DIR set to a path without them" >&2
    exit 1
    ;;
  /*) ;;
  *)
    echo "cannot tell the target directory from cargo metadata (read '$target_dir', not an absolute path)" >&2
    exit 1
    ;;
esac
sledge=$target_dir/release/sledge
assets=$target_dir/release/assets

# The assets are removed and made anew each time (a page of a subcommand
# that no longer exists must not be packed), but only in the directory
# cargo has just built in: its release binary must be there, which a
# misread path would not hold.
if [ ! -f "$sledge" ] || [ ! -x "$sledge" ]; then
  echo "no release binary at $sledge: '$target_dir' is not the target directory cargo built in, so nothing was removed there" >&2
  exit 1
fi
rm -rf -- "$assets"
mkdir -p "$assets/man" "$assets/completions"
"$sledge" man --dir "$assets/man" >&2
# Debian installs manual pages gzipped; -n leaves out the time stamp, so
# the same pages give the same package.
gzip -9n "$assets"/man/*.1
"$sledge" completions bash >"$assets/completions/sledge.bash"
"$sledge" completions zsh >"$assets/completions/_sledge"
"$sledge" completions fish >"$assets/completions/sledge.fish"

# Only this version's package in the output directory, so that the path
# printed is the one just built.
out=$target_dir/debian
rm -f "$out"/sledge_*.deb
cargo deb --no-build --output "$out" >&2
deb=$(ls "$out"/sledge_*.deb)
echo "$deb"
