#!/usr/bin/env bash
# The `command` workload against hyperfine, and `sledge ab` over a battery
# of commands. Checks on this machine:
#
#   bench/command.sh hyperfine [PAIRS]   # sleep 0.05, sha256sum of a 256 MiB
#                                        # file and make -j2 of a generated C
#                                        # project, hyperfine and sledge
#                                        # alternated PAIRS times (default 5):
#                                        # each pair's mean wall time and the
#                                        # ratio sledge / hyperfine
#   bench/command.sh quota [QUOTA]       # `sledge ab --b-cgroup` at QUOTA% of
#                                        # one CPU (default 90) over a battery
#                                        # of a CPU-bound command and a make
#                                        # -j1: the verdicts, and whether each
#                                        # CI covers 100/QUOTA (wall, lower is
#                                        # better)
#   bench/command.sh aa                  # the same battery, the same setting on
#                                        # both sides: verdicts called
#
# Targets (issue "your own software"): means within ±3% of hyperfine's;
# the quota found slower with its CI covering the quota; the A/A pair
# calls nothing. Run it alone: a build beside it moves every figure.
#
# Needs hyperfine (Debian's), make and cc; quota needs root and a cgroup
# cpu controller (bench/quota.sh).
set -euo pipefail

mode=${1:-hyperfine}
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/quota.sh"
SLEDGE=${SLEDGE:-$here/target/release/sledge}
command -v python3 >/dev/null || { echo "python3 is missing (used to read JSON)" >&2; exit 1; }
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi

work=$(mktemp -d)
cgroup=""
cleanup() {
  if [ -n "$cgroup" ] && [ -d "$cgroup" ]; then
    rmdir "$cgroup" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
store=$work/command.db

# A C project of 48 files of 60 functions each, with a Makefile: a build
# of a few seconds at -j2.
make_project() { # dir
  local dir=$1 i j
  mkdir -p "$dir"
  for i in $(seq 1 48); do
    {
      for j in $(seq 1 60); do
        echo "int f${i}_${j}(int x) { int s = 0; for (int k = 0; k < x; k++) s += (k * $j) ^ (s >> 3); return s; }"
      done
    } > "$dir/f$i.c"
  done
  {
    echo 'OBJ := $(patsubst %.c,%.o,$(wildcard *.c))'
    echo 'all: $(OBJ)'
    printf '%%.o: %%.c\n\tcc -O2 -c $< -o $@\n'
    printf 'clean:\n\trm -f *.o\n'
  } > "$dir/Makefile"
}

# The mean wall time of a hyperfine JSON export.
hyperfine_mean() { # file
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"])' "$1"
}

# The mean `wall` of the last sledge run's only case.
sledge_mean() {
  "$SLEDGE" --store "$store" show last --json | python3 -c '
import json, sys
case = json.load(sys.stdin)["cases"][0]
print(next(m["summary"]["mean"] for m in case["metrics"] if m["name"] == "wall"))'
}

compare_with_hyperfine() { # label command prepare runs pairs shell|direct
  local label=$1 cmd=$2 prepare=$3 runs=$4 pairs=$5 how=$6 i
  # Without a shell (hyperfine -N, sledge shell=false), or both under
  # `sh -c` with the shell's start-up taken out (their defaults).
  local no_shell_h=(-N) shell_s=false
  if [ "$how" = shell ]; then
    no_shell_h=(--shell sh)
    shell_s=true
  fi
  local prep_h=() prep_s=()
  if [ -n "$prepare" ]; then
    prep_h=(--prepare "$prepare")
    prep_s=(-p "prepare=$prepare")
  fi
  echo "== $label ($how): $cmd"
  for i in $(seq 1 "$pairs"); do
    hyperfine "${no_shell_h[@]}" --style none --warmup 1 --runs "$runs" "${prep_h[@]}" \
      --export-json "$work/h.json" "$cmd" >/dev/null
    h=$(hyperfine_mean "$work/h.json")
    # One round of `runs` trials after one warm-up: hyperfine's shape.
    "$SLEDGE" --store "$store" run command -p "cmd=$cmd" -p "shell=$shell_s" "${prep_s[@]}" \
      --rounds 1 --warmup 1 --min-trials "$runs" --max-trials "$runs" --no-idle-check \
      >/dev/null 2>&1
    s=$(sledge_mean)
    python3 -c 'import sys; h,s=float(sys.argv[1]),float(sys.argv[2]); print(f"pair {sys.argv[3]}: hyperfine {h*1000:.2f} ms, sledge {s*1000:.2f} ms, sledge/hyperfine {s/h:.4f}")' "$h" "$s" "$i"
  done
}

case $mode in
  hyperfine)
    pairs=${2:-5}
    command -v hyperfine >/dev/null || { echo "hyperfine is missing (apt-get install hyperfine)" >&2; exit 1; }
    head -c $((256 << 20)) /dev/urandom > "$work/big"
    make_project "$work/proj"
    compare_with_hyperfine "sleep" "sleep 0.05" "" 20 "$pairs" direct
    compare_with_hyperfine "sleep" "sleep 0.05" "" 20 "$pairs" shell
    compare_with_hyperfine "sha256sum" "sha256sum $work/big" "" 5 "$pairs" direct
    compare_with_hyperfine "make" "make -s -C $work/proj -j2" "make -s -C $work/proj clean" 3 "$pairs" direct
    ;;
  quota | aa)
    quota=${2:-90}
    head -c $((32 << 20)) /dev/urandom > "$work/data"
    make_project "$work/proj"
    cat > "$work/battery.toml" <<EOF
summary = "a CPU-bound command and a serial build"
[[case]]
command = "gzip -1 -c $work/data"
shell = false
[[case]]
command = "make -s -C $work/proj -j1"
prepare = "make -s -C $work/proj clean"
EOF
    args=("$work/battery.toml" --json --no-idle-check --rounds 8)
    if [ "$mode" = quota ]; then
      quota_cgroup "sledge-command-$$" "$quota"
      args+=(--b-cgroup "$cgroup")
      expected=$(python3 -c "print(100/$quota)")
    else
      expected=1
    fi
    "$SLEDGE" --store "$store" ab "${args[@]}" 2>/dev/null > "$work/ab.json"
    # KEEP_JSON=FILE keeps what ab printed, to read it again.
    [ -n "${KEEP_JSON:-}" ] && cp "$work/ab.json" "$KEEP_JSON"
    python3 - "$expected" "$work/ab.json" <<'PY'
import json, sys
expected = float(sys.argv[1])
c = json.load(open(sys.argv[2]))["candidates"][0]
for case in c["cases"]:
    m = next(m for m in case["metrics"] if m["name"] == "wall")
    cmp = m["comparison"]
    lo, hi = cmp["ratio_ci_low"], cmp["ratio_ci_high"]
    params = case["params"][:60]
    print(f"{params:60} wall: B/A {cmp['ratio']:.4f} [{lo:.4f}, {hi:.4f}] "
          f"{cmp['verdict']}, covers {expected:.4f}: {lo <= expected <= hi}")
PY
    ;;
  *)
    echo "usage: bench/command.sh hyperfine [PAIRS] | quota [QUOTA] | aa" >&2
    exit 2
    ;;
esac
