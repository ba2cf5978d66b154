#!/usr/bin/env bash
# How tight are the numbers of a default run on this machine?
#
#   bench/precision.sh [RUNS] [-- extra sledge run args...]
#
# Runs `sledge run` (the quick profile) RUNS times (default 3), each into a
# fresh store (so no run plans from another's history, as on a new
# machine), and prints per run: its wall time, the lines it printed and
# the widest of them (columns; `!` past one screen: 50 lines, 100 columns), the
# median 95% CI half-width of the cases' headline metrics (as a share of
# the mean), how many cases are wider than ±10%, and the planned time the
# run announced on stderr against the time it took; then each case wider
# than ±10%, with its width and rounds.
#
# Targets (issue "Precision first"): median at most ±3%, at most 5% of the
# cases wider than ±10%, within 3 minutes; the scorecard it prints fits one
# screen. Measure alone: nothing else running on the machine.
#
# SLEDGE=path runs another build.
set -euo pipefail

runs=3
if [ $# -gt 0 ] && [ "$1" != "--" ]; then runs=$1; shift; fi
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")/.." && pwd)
SLEDGE=${SLEDGE:-$here/target/release/sledge}
command -v python3 >/dev/null || { echo "python3 is missing (used to read JSON)" >&2; exit 1; }
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-4s %8s %8s %6s %5s %8s %9s %9s  %s\n' run wall planned lines cols median ">±10%" ">±20%" load
for i in $(seq 1 "$runs"); do
  dir=$work/run$i
  mkdir -p "$dir"
  start=$(date +%s.%N)
  (cd "$dir" && "$SLEDGE" --store "$dir/s.db" run "$@" >"$dir/out.txt" 2>"$dir/err.txt") || true
  end=$(date +%s.%N)
  "$SLEDGE" --store "$dir/s.db" show last --json >"$dir/run.json"
  python3 - "$dir" "$start" "$end" <<'EOF'
import json, re, statistics, sys
d, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
run = json.load(open(d + "/run.json"))
widths = []
wide = []
for case in run["cases"]:
    if not case["metrics"]:
        continue
    s = case["metrics"][0]["summary"]
    if s["n"] < 2 or s["mean"] == 0:
        continue
    width = (s["ci_high"] - s["ci_low"]) / 2 / abs(s["mean"])
    widths.append(width)
    if width > 0.10:
        params = " ".join("%s=%s" % kv for kv in sorted(case["params"].items()))
        wide.append("     wide: %s %s ±%.1f%% after %d rounds" % (
            case["workload"], params, 100 * width, len(case.get("rounds", []))))
printed = open(d + "/out.txt", encoding="utf-8").read().splitlines()
lines = len(printed)
cols = max((len(line) for line in printed), default=0)
# One screen: the scorecard's bounds (report/scorecard.rs).
screen = "!" if lines > 50 or cols > 100 else " "
planned = "?"
m = re.search(r"plan: \d+ cases?, about ((\d+) h )?((\d+) min )?((\d+) s)?", open(d + "/err.txt").read())
if m:
    secs = int(m.group(2) or 0) * 3600 + int(m.group(4) or 0) * 60 + int(m.group(6) or 0)
    planned = "%ds" % secs
load = open("/proc/loadavg").read().split()[:3]
n = len(widths)
wide10 = sum(1 for w in widths if w > 0.10)
wide20 = sum(1 for w in widths if w > 0.20)
print("%-4s %7.0fs %8s %5d%s %5d %7.1f%% %4d (%2.0f%%) %4d (%2.0f%%)  %s" % (
    d.rsplit("run", 1)[1], end - start, planned, lines, screen, cols, 100 * statistics.median(widths),
    wide10, 100.0 * wide10 / n, wide20, 100.0 * wide20 / n, " ".join(load)))
for line in wide:
    print(line)
EOF
done
