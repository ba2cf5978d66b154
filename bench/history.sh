#!/usr/bin/env bash
# Does `sledge history` find a step this machine is made to take, and name
# its cause? Runs one small case RUNS times into a fresh store, the runs
# from STEP on under a CPU quota of QUOTA% of one CPU (a cgroup), then
# prints `sledge history` and checks that it found one change point, at
# run STEP, slower, with the CPU quota (which the probe reads from the
# run's own cgroup) the one inventory difference named.
#
#   bench/history.sh [RUNS] [STEP] [QUOTA]    # defaults: 30 15 90
#
# Each run is `cpu.primes threads=1` for 3 rounds of 0.5 s trials (about
# 10 s); 30 runs take about 5 minutes. Target (issue "What the store
# knows"): the change point at run STEP (or one off), ratio near
# QUOTA/100, the CPU quota named as what changed (`none` before, QUOTA/100
# CPUs after), when the change point is at run STEP itself (one off, the
# runs either side of it both ran under the quota or both without, and
# nothing is named). STORE=path keeps the runs (default:
# a temporary store). Needs root and a cgroup cpu controller (v1
# cpu.cfs_quota_us or v2 cpu.max), as bench/ab.sh power does.
set -euo pipefail

runs=${1:-30}
step=${2:-15}
quota=${3:-90}
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/quota.sh"
SLEDGE=${SLEDGE:-$here/target/release/sledge}
command -v python3 >/dev/null || { echo "python3 is missing (used to read JSON)" >&2; exit 1; }
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi
if [ "$step" -lt 2 ] || [ "$step" -gt "$runs" ]; then
  echo "STEP must be from 2 to RUNS ($runs): the run the quota starts at" >&2
  exit 2
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
store=${STORE:-$work/history.db}
cd "$work"

quota_cgroup "sledge-history-$$" "$quota"

case_args=(cpu.primes -p threads=1 -p time=0.5 --rounds 3 --max-trials 2 --store "$store")
started=$(date +%s)
for i in $(seq 1 "$runs"); do
  if [ "$i" -ge "$step" ]; then
    # The shell joins the cgroup, then becomes sledge: its rounds' processes follow.
    sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cgroup" \
      "$SLEDGE" run "${case_args[@]}" >/dev/null 2>"$work/stderr" \
      || { cat "$work/stderr" >&2; exit 1; }
  else
    "$SLEDGE" run "${case_args[@]}" >/dev/null 2>"$work/stderr" \
      || { cat "$work/stderr" >&2; exit 1; }
  fi
  echo "run $i of $runs$([ "$i" -ge "$step" ] && echo " (under ${quota}%)")" >&2
done

"$SLEDGE" history cpu.primes -p threads=1 --store "$store"
"$SLEDGE" history cpu.primes -p threads=1 --store "$store" --json > "$work/history.json"
python3 - "$work/history.json" "$step" "$quota" "$(( $(date +%s) - started ))" <<'EOF'
import json, sys
history = json.load(open(sys.argv[1]))
step, quota, seconds = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
case = history["cases"][0]
changes = case["change_points"]
# The run ids of the fresh store are 1..RUNS, so run STEP is index STEP-1.
found = [c for c in changes if abs(c["index"] - (step - 1)) <= 1]
if found and found[0]["index"] == step - 1:
    expected = [{"what": "CPU quota", "before": "none",
                 "after": "%g CPUs" % (quota / 100)}]
    named = [dict(d, after=d["after"].split(" (cgroup ")[0]) for d in found[0]["differences"]]
else:
    expected, named = [], found[0]["differences"] if found else []
ok = len(changes) == 1 and found and found[0]["verdict"] == "slower" and named == expected
for c in changes:
    print("change at run %d: ratio %.3f, p %.1e, %s; differences: %s"
          % (c["run"], c["ratio"], c["p_value"], c["verdict"],
             c["differences"] or "none"))
print("%s: %d change point(s) over %d runs, quota %d%% from run %d; %s s"
      % ("PASS" if ok else "FAIL", len(changes), len(case["runs"]), quota, step, seconds))
sys.exit(0 if ok else 1)
EOF
