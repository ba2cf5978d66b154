#!/usr/bin/env bash
# Checks a sledge Debian package without installing it: its control
# fields, that it holds the binary, a manual page for sledge and every
# subcommand (gzipped), the bash, zsh and fish completions and the docs;
# then unpacks it into a throwaway root (`dpkg -x`) and runs what it
# holds: the binary's --version, each page through `man -l` (where man
# is installed), the bash completion through bash. Exits non-zero naming
# the first thing missing or wrong; a step that fails unforeseen is named
# too, by its line and command.
#
#   pkg/check-deb.sh target/debian/sledge_0.1.0-1_amd64.deb
set -Eeuo pipefail

if [ $# -ne 1 ] || [ ! -f "$1" ]; then
  echo "usage: pkg/check-deb.sh PACKAGE.deb (an existing file)" >&2
  exit 2
fi
deb=$1

fail() {
  echo "check-deb: $deb: $*" >&2
  exit 1
}
# Under set -e a failing step would end the script without a word of
# ours: say which step it was. Only in the script itself, not in the
# subshells of $(...), which report through their caller.
trap 'status=$?; if [ "$BASH_SUBSHELL" = 0 ]; then echo "check-deb: $deb: line $LINENO failed (exit status $status): $BASH_COMMAND" >&2; fi' ERR

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

# Control fields.
field() { dpkg-deb --field "$deb" "$1"; }
[ "$(field Package)" = sledge ] || fail "Package is '$(field Package)', not sledge"
[ "$(field Section)" = utils ] || fail "Section is '$(field Section)', not utils"
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
field Depends | grep -q libc6 || fail "Depends '$(field Depends)' lacks libc6 (\$auto)"
field Recommends | grep -q openssh-client || fail "Recommends '$(field Recommends)' lacks openssh-client"

# The listing: every expected path, as dpkg -c prints it (./usr/...).
listing=$root/listing
dpkg -c "$deb" | awk '{print $NF}' >"$listing"
expect() {
  grep -qxF "./$1" "$listing" || fail "no $1 in the package"
}
expect usr/bin/sledge
expect usr/share/man/man1/sledge.1.gz
expect usr/share/bash-completion/completions/sledge
expect usr/share/zsh/vendor-completions/_sledge
expect usr/share/fish/vendor_completions.d/sledge.fish
expect usr/share/doc/sledge/README.md
expect usr/share/doc/sledge/docs/ab.md
expect usr/share/doc/sledge/docs/benchmarks.md
expect usr/share/doc/sledge/docs/cli.md
expect usr/share/doc/sledge/docs/history.md
expect usr/share/doc/sledge/docs/http.md
expect usr/share/doc/sledge/docs/i686.md
expect usr/share/doc/sledge/docs/json.md
expect usr/share/doc/sledge/docs/layout.md
expect usr/share/doc/sledge/docs/measuring.md
expect usr/share/doc/sledge/docs/storage.md
expect usr/share/doc/sledge/docs/stores-and-fleet.md
expect usr/share/doc/sledge/docs/testing.md
expect usr/share/doc/sledge/docs/workloads.md
expect usr/share/doc/sledge/copyright

# Unpacked: the binary runs, and is the version the package says.
dpkg -x "$deb" "$root/fs"
sledge=$root/fs/usr/bin/sledge
version=$("$sledge" --version) || fail "usr/bin/sledge --version failed"
case "$(field Version)" in
  "${version#sledge }"*) ;;
  *) fail "usr/bin/sledge says '$version', the package is version $(field Version)" ;;
esac

# A page per subcommand: the binary in the package names them.
pages=$root/pages
mkdir "$pages"
said=$("$sledge" man --dir "$pages" 2>&1) || fail "usr/bin/sledge man --dir failed: $said"
for page in "$pages"/*.1; do
  expect "usr/share/man/man1/$(basename "$page").gz"
done
if command -v man >/dev/null; then
  for page in "$root"/fs/usr/share/man/man1/*.1.gz; do
    rendered=$(MANWIDTH=80 man -l "$page" 2>&1) || fail "man -l $(basename "$page") failed: $rendered"
    grep -q '^SYNOPSIS' <<<"$rendered" || fail "man -l $(basename "$page") shows no SYNOPSIS"
  done
else
  echo "check-deb: man is not installed; the pages were not rendered" >&2
fi

# The bash completion loads and registers itself for sledge.
bash --norc --noprofile -c \
  "source '$root/fs/usr/share/bash-completion/completions/sledge' && complete -p sledge" >/dev/null ||
  fail "the bash completion does not load"

echo "check-deb: $deb: ok ($(grep -c . "$listing") paths, $version)"
