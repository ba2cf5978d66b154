#!/usr/bin/env bash
# 32-bit against 64-bit on this machine, as two reference articles did
# (docs/i686.md): builds the 64-bit sledge (release) and the 32-bit one
# (pkg/i686.sh, release), then runs the battery bench/i686.toml
#
#   1. `sledge ab --a-sledge sledge-i686 --b-sledge sledge`: A the 32-bit
#      build, B the 64-bit one, in interleaved rounds; ratio = 64 / 32;
#   2. an A/A of the 32-bit build against itself (`--a-sledge` and
#      `--b-sledge` both sledge-i686), which should call (almost) nothing.
#
#   bench/i686.sh            # both
#   bench/i686.sh ab         # the 32/64 comparison only
#   bench/i686.sh aa         # the A/A only
#
# Run it alone on the machine. Time: the 32-bit release build takes 10-20
# minutes on 2 CPUs the first time (16 on a busy 2-vCPU guest); each
# `sledge ab` of the battery about twice what `sledge plan bench/i686.toml`
# estimates for one side (it is printed first: 32 minutes on a 2-vCPU
# guest), so about an hour each, a little over two hours for both. STORE=path keeps the
# runs (default: a temporary store); OUT=dir keeps the tables and JSON
# (default: a temporary directory, printed).
set -euo pipefail

mode=${1:-both}
case $mode in
  both | ab | aa) ;;
  *)
    echo "usage: bench/i686.sh [both|ab|aa]" >&2
    exit 2
    ;;
esac
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

cargo build --release --locked >&2
x64=$(cargo metadata --format-version 1 --no-deps --locked |
  sed -nE 's/.*"target_directory"[[:space:]]*:[[:space:]]*"([^"]*)".*/\1/p')/release/sledge
i686=$(pkg/i686.sh | tail -n 1)
file "$x64" "$i686" >&2 || true

work=$(mktemp -d)
store=${STORE:-$work/results.db}
out=${OUT:-$work}
mkdir -p "$out"
export SLEDGE_STORE=$store
echo "store: $store; tables and JSON in $out" >&2

"$x64" plan bench/i686.toml >&2

run_ab() {
  local name=$1 a=$2 b=$3
  local started=$SECONDS
  # The exit status says whether every case ran; the table is wanted
  # either way.
  "$x64" ab --a-sledge "$a" --b-sledge "$b" bench/i686.toml --json >"$out/$name.json" || true
  local ids
  read -r -a ids <<<"$(last_pair)"
  "$x64" compare "${ids[@]}" >"$out/$name.txt" 2>&1 || true
  echo "$name: $((SECONDS - started)) s" >&2
  cat "$out/$name.txt"
}

# The ids of the last two runs (A then B) as `compare` takes them.
last_pair() {
  "$x64" list --json |
    python3 -c 'import json,sys; ids=sorted(r["id"] for r in json.load(sys.stdin))[-2:]; print(ids[0], ids[1])'
}

if [ "$mode" != aa ]; then
  echo "== 32-bit (A) against 64-bit (B)" >&2
  run_ab i686-vs-x86_64 "$i686" "$x64"
fi
if [ "$mode" != ab ]; then
  echo "== A/A: the 32-bit build against itself" >&2
  run_ab i686-aa "$i686" "$i686"
  python3 - "$out/i686-aa.json" <<'PY'
import json, sys
cmp = json.load(open(sys.argv[1]))
verdicts = [m["comparison"]["verdict"]
            for run in cmp["candidates"] for case in run["cases"]
            for m in case["metrics"][:1] if m.get("comparison")]
called = [v for v in verdicts if v in ("faster", "slower")]
print(f"A/A: {len(called)} of {len(verdicts)} headline verdicts called")
PY
fi
