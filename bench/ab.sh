#!/usr/bin/env bash
# Does `sledge ab` find what two runs minutes apart miss? Checks on this
# machine:
#
#   bench/ab.sh power [QUOTA] [--duet]  # the one-thread CPU-bound cases of
#                                       # bench/verdicts.sh power, B under a
#                                       # CPU quota of QUOTA% of one CPU
#                                       # (default 90): share found slower,
#                                       # share of CIs covering QUOTA/100
#   bench/ab.sh aa [RUNS]               # RUNS A/A `sledge ab` over the quick
#                                       # cases (the same setting on both
#                                       # sides): share of headline verdicts
#                                       # faster or slower
#   bench/ab.sh thp                     # transparent huge pages always vs
#                                       # never on memory.latency 64M and 1G
#
# Targets (issue "sledge ab"): power at 90% found in at least 90% of the
# cases, each CI covering 0.90; at 95% found in at least 70%; A/A at most
# 5% of verdicts faster or slower over 5 runs. Run bench/verdicts.sh power
# alongside it (alternated) for the back-to-back figures on the same host.
#
# STORE=path keeps the runs (default: a temporary store). The power check
# needs root and a cgroup cpu controller (v1 cpu.cfs_quota_us or v2
# cpu.max); thp needs /sys/kernel/mm/transparent_hugepage/enabled.
set -euo pipefail

mode=${1:-power}
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
store=${STORE:-$work/ab.db}
cd "$work"

# Prints each case of a comparison (JSON on stdin), then
# "TALLY slower faster covered total" with `covered` the CIs holding $1.
tally() { # expected-ratio
  python3 -c '
import json, sys
expected = float(sys.argv[1])
c = json.load(sys.stdin)["candidates"][0]
slower = faster = covered = total = 0
for case in c["cases"]:
    m = case["metrics"][0]
    cmp = m["comparison"]
    total += 1
    if cmp is None or not m["judged"]:
        print("  %-14s %-40s not judged" % (case["workload"], case["params"][:40]))
        continue
    slower += cmp["verdict"] == "slower"
    faster += cmp["verdict"] == "faster"
    covered += cmp["ratio_ci_low"] <= expected <= cmp["ratio_ci_high"]
    shown = " ".join(kv for kv in case["params"].split()
                     if kv.split("=")[0] in ("algorithm", "block_size", "oper", "size", "threads"))
    print("  %-14s %-40s %.3f [%.3f, %.3f] %-13s %s x%d" % (case["workload"], shown[:40],
          cmp["ratio"], cmp["ratio_ci_low"], cmp["ratio_ci_high"], cmp["verdict"],
          cmp["basis"], m.get("paired_rounds", 0)))
print("TALLY", slower, faster, covered, total)
' "$1"
}

# The one-thread CPU-bound cases of bench/verdicts.sh power, as there.
POWER_TIME=${POWER_TIME:-0.5}
POWER_ROUNDS=${POWER_ROUNDS:-10}
power_selection=(cpu.primes memory.block crypto.speed
  -p threads=1 -p copies=1 -p memory.block:oper=write,read
  -p crypto.speed:algorithm=md5,sha256,sha512,aes-256-cbc,aes-128-gcm,aes-256-gcm,chacha20-poly1305
  -p crypto.speed:block_size=16,8192 -p "time=$POWER_TIME"
  --max-rounds "$POWER_ROUNDS" --max-trials 2 --budget 60 --ci-target 0.02)

power() { # quota-percent [--duet]
  local quota=$1; shift
  quota_cgroup "sledge-ab-$$" "$quota"
  local expected started
  expected=$(python3 -c "print($quota / 100)")
  started=$(date +%s)
  "$SLEDGE" ab "${power_selection[@]}" --b-cgroup "$cgroup" "$@" --store "$store" --json \
    2>"$work/stderr" >"$work/ab.json" || { cat "$work/stderr" >&2; exit 1; }
  tally "$expected" < "$work/ab.json" > "$work/tally.txt"
  grep -v '^TALLY' "$work/tally.txt"
  read -r _ slower faster covered total < <(grep '^TALLY' "$work/tally.txt")
  echo "B under a ${quota}% CPU quota${*:+ ($*)}: $slower of $total found slower," \
    "$faster faster, $covered of $total CIs cover $expected; $(( $(date +%s) - started )) s"
}

aa() { # runs
  local runs=$1 called=0 judged=0
  for i in $(seq 1 "$runs"); do
    local started
    started=$(date +%s)
    "$SLEDGE" ab quick --store "$store" --json 2>"$work/stderr" >"$work/ab.json" \
      || { cat "$work/stderr" >&2; exit 1; }
    tally 1.0 < "$work/ab.json" > "$work/tally.txt"
    grep -E ' (slower|faster) ' "$work/tally.txt" || true
    read -r _ slower faster covered total < <(grep '^TALLY' "$work/tally.txt")
    echo "A/A run $i: $slower slower, $faster faster of $total; $covered CIs cover 1; $(( $(date +%s) - started )) s"
    called=$((called + slower + faster)); judged=$((judged + total))
  done
  python3 -c "print('A/A: %d of %d headline verdicts faster or slower (%.1f%%)' % ($called, $judged, 100.0 * $called / max($judged, 1)))"
}

thp() {
  local knob=/sys/kernel/mm/transparent_hugepage/enabled
  [ -w "$knob" ] || { echo "$knob is not writable here" >&2; exit 1; }
  local before
  before=$(cat "$knob")
  "$SLEDGE" ab --knob "$knob=always,never" memory.latency -p size=64M,1G --store "$store" --json \
    2>"$work/stderr" >"$work/ab.json" || { cat "$work/stderr" >&2; exit 1; }
  tally 1.0 < "$work/ab.json" | grep -v '^TALLY'
  echo "knob before: $before; after: $(cat "$knob")"
}

case "$mode" in
  power) power "${2:-90}" "${@:3}" ;;
  aa) aa "${2:-5}" ;;
  thp) thp ;;
  *) echo "usage: bench/ab.sh power [QUOTA] [--duet] | aa [RUNS] | thp" >&2; exit 2 ;;
esac
