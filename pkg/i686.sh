#!/usr/bin/env bash
# Builds a 32-bit sledge (i686-unknown-linux-gnu) on an x86-64 Debian
# machine from Debian's packages, and prints its path as the last line of
# standard output. The 64-bit build is untouched: the same checkout, the
# same Cargo.lock, another compiler for this build only.
#
#   pkg/i686.sh            # release build: <target dir>/sledge-i686
#   pkg/i686.sh --debug    # debug build:   <target dir>/sledge-i686-debug
#
# rustup's targets are not needed (nor, here, reachable). The compiler is
# Debian's rustc-web (1.96; sledge needs 1.89 or newer), run through
# cargo's RUSTC. Its standard library for i686 comes from one of:
#
#  1. libstd-rust-web-dev:i386, through multiarch
#     (dpkg --add-architecture i386); or
#  2. rust-web-src, the same compiler's library source, from which cargo
#     builds the standard library for i686 itself (-Z build-std, allowed
#     on a stable compiler by RUSTC_BOOTSTRAP=1, for this build only).
#     This is the route when the i386 package is not at the same version
#     as rustc-web, which apt then refuses to install.
#
# The C parts (the bundled SQLite, aws-lc, the unixbench helper program)
# are compiled with `cc -m32`, which needs gcc-multilib.
#
# On a machine without these packages the script exits with status 1 and
# names the apt-get commands that bring them.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
case ${1:-} in
  "") ;;
  --debug) profile=debug ;;
  *)
    echo "usage: pkg/i686.sh [--debug] (got '$1')" >&2
    exit 2
    ;;
esac

target=i686-unknown-linux-gnu
# Debian's compiler, never rustup's proxy (which has no i686 target here):
# RUSTC_I686 may name another rustc that has an i686 standard library.
rustc=${RUSTC_I686:-/usr/bin/rustc}
need=1.89

missing() {
  cat >&2 <<EOF
pkg/i686.sh: cannot build the 32-bit sledge: $1
Install Debian's Rust compiler, its library source and the 32-bit C
libraries (as root):

  apt-get update
  apt-get install -y --no-install-recommends rustc-web rust-web-src gcc-multilib

or, with Debian's ready-built i686 standard library instead of the source:

  dpkg --add-architecture i386
  apt-get update
  apt-get install -y --no-install-recommends rustc-web libstd-rust-web-dev:i386 gcc-multilib
EOF
  exit 1
}

[ -x "$rustc" ] || missing "no Rust compiler at $rustc (package rustc-web)"
version=$("$rustc" --version 2>/dev/null | awk '{print $2}') ||
  missing "$rustc --version failed"
if [ "$(printf '%s\n%s\n' "$need" "$version" | sort -V | head -n 1)" != "$need" ]; then
  missing "$rustc is version $version; sledge needs $need or newer (rustc-web from bookworm-security)"
fi

# The 32-bit C toolchain: a program must link with -m32.
probe_dir=$(mktemp -d)
trap 'rm -rf -- "$probe_dir"' EXIT
printf 'int main(void) { return 0; }\n' >"$probe_dir/probe.c"
cc -m32 -o "$probe_dir/probe" "$probe_dir/probe.c" 2>/dev/null ||
  missing "cc -m32 cannot link a program (package gcc-multilib)"

# Which route gives the standard library for i686.
libdir=$("$rustc" --print target-libdir --target "$target" 2>/dev/null || true)
build_std=()
if compgen -G "$libdir/libstd-*.rlib" >/dev/null; then
  route="Debian's i686 standard library ($libdir)"
else
  src=$("$rustc" --print sysroot)/lib/rustlib/src/rust/library
  if [ -f "$src/std/Cargo.toml" ]; then
    route="the standard library built from $src (-Z build-std)"
    build_std=(-Z build-std=std,panic_abort)
    export RUSTC_BOOTSTRAP=1
  else
    missing "$rustc has no standard library for $target (libstd-rust-web-dev:i386) and no library source to build one from (rust-web-src)"
  fi
fi
echo "building sledge for $target with $rustc $version and $route" >&2

profile_flag=()
[ "$profile" = release ] && profile_flag=(--release)
RUSTC=$rustc cargo build --locked "${profile_flag[@]}" "${build_std[@]}" \
  --target "$target" --bin sledge >&2

metadata=$(cargo metadata --format-version 1 --no-deps --locked)
target_dir=$(sed -nE 's/.*"target_directory"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)".*/\1/p' <<<"$metadata")
case $target_dir in
  /*) ;;
  *)
    echo "cannot tell the target directory from cargo metadata (read '$target_dir')" >&2
    exit 1
    ;;
esac
built=$target_dir/$target/$profile/sledge
out=$target_dir/sledge-i686
[ "$profile" = debug ] && out=$target_dir/sledge-i686-debug
cp -- "$built" "$out.tmp"
mv -- "$out.tmp" "$out"
# The copy must be a 32-bit x86 program that runs here.
"$out" --version >&2 || {
  echo "the 32-bit sledge at $out does not start on this machine" >&2
  exit 1
}
echo "$out"
