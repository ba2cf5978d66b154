#!/usr/bin/env bash
# How `import`, `show` and `report` grow with the number of cases: a
# document of CASES cases (default 20000) in two runs of CASES/2 is
# imported, then `show 1` (the scorecard, `--full` and `--metrics all`) and
# `report 1 2` run on it, one at a time, each timed once with its peak
# memory.
#
#   bench/report.sh                               # CASES=20000, target/release/sledge
#   CASES=4000 SLEDGE=target/debug/sledge bench/report.sh
#   BASELINE=/tmp/sledge-old bench/report.sh      # the same with another build, and the ratios
#   LIMIT=600 BASELINE=/tmp/sledge-old bench/report.sh   # give up on a command after 600 s
#
# The cases are copies of one real cpu.primes case (3 rounds of 2
# trials): sweeps of threads=1..8 over max_prime values, every 50th case
# failed, every 20th with a warning. The second run has its own UUID and
# 5% higher throughputs, so `report 1 2` compares every case. These are
# whole-program times on whatever else the machine is doing: compare two
# builds on one machine, in one go, by their ratios. A build from before
# streaming imports refuses a document over 256 MiB (about 26000 cases).
set -euo pipefail

CASES=${CASES:-20000}
LIMIT=${LIMIT:-0}
here=$(cd "$(dirname "$0")/.." && pwd)
SLEDGE=${SLEDGE:-$here/target/release/sledge}
BASELINE=${BASELINE:-}

for tool in python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install python3 time" >&2; exit 1; }
done
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$SLEDGE" --store "$work/seed.db" run cpu.primes -p max_prime=2000 -p time=0.05 \
  --no-idle-check --rounds 3 --warmup 0 --min-trials 2 --max-trials 2 >/dev/null 2>&1
"$SLEDGE" --store "$work/seed.db" export last -o "$work/seed.json" 2>/dev/null
python3 - "$work/seed.json" "$work/runs.json" "$CASES" <<'EOF'
import copy, json, sys, uuid
doc = json.load(open(sys.argv[1]))
seed = doc["runs"][0]
template = seed["cases"][0]
cases_per_run = int(sys.argv[3]) // 2

def scaled(case, factor):
    case = copy.deepcopy(case)
    for metric in case["metrics"]:
        metric["samples"] = [x * factor for x in metric["samples"]]
        for key in ("mean", "median", "stddev", "ci_low", "ci_high", "min", "max"):
            metric["summary"][key] *= factor
        levels = metric.get("levels")
        if levels:
            levels["round_means"] = [x * factor for x in levels["round_means"]]
            for key in ("between_round_sd", "within_round_sd"):
                if levels.get(key) is not None:
                    levels[key] *= factor
    return case

def run(factor):
    cases = []
    for i in range(cases_per_run):
        threads = 1 + i % 8
        case = scaled(template, factor * threads)
        case["params"] = dict(case["params"], threads=str(threads), max_prime=str(1000 + i // 8))
        if i % 50 == 49:
            case["error"] = "failed on purpose"
            case["metrics"] = []
        if i % 20 == 19:
            case["warnings"] = ["a warning on purpose"]
        cases.append(case)
    return dict(seed, uuid=str(uuid.uuid4()), cases=cases)

doc["runs"] = [run(1.0), run(1.05)]
json.dump(doc, open(sys.argv[2], "w"))
EOF
echo "document: $(du -h "$work/runs.json" | cut -f1), $CASES cases in 2 runs" >&2

# Seconds and peak memory (MiB) of one command, as "seconds mib"; with a
# LIMIT, a command still running after LIMIT seconds is stopped and shows
# as "-LIMIT -" (at least that long).
measure() {
  local limit=()
  [ "$LIMIT" -gt 0 ] && limit=(timeout "$LIMIT")
  local status=0
  /usr/bin/time -f '%e %M' -o "$work/time" "${limit[@]}" "$@" >/dev/null 2>"$work/stderr" || status=$?
  if [ "$status" -eq 124 ]; then
    echo "-$LIMIT -"
    return
  fi
  [ "$status" -eq 0 ] || { cat "$work/stderr" >&2; exit 1; }
  awk '{ printf "%s %.0f\n", $1, $2 / 1024 }' "$work/time"
}

# One build's times: import, show, show --full, show --metrics all,
# report 1 2. A build from before the scorecard has no `--full`: its
# `show` printed every case, so that is what its `show --full` times.
measure_build() {
  local sledge=$1 store="$work/store-$2.db" full=(--full)
  "$sledge" show --help | grep -q -- --full || full=()
  rm -f "$store"
  measure "$sledge" --store "$store" import "$work/runs.json"
  measure "$sledge" --store "$store" show 1
  measure "$sledge" --store "$store" show 1 "${full[@]}"
  measure "$sledge" --store "$store" show 1 --metrics all
  measure "$sledge" --store "$store" report 1 2 -o "$work/report.html"
}

steps=("import" "show" "show --full" "show --metrics all" "report 1 2")
mapfile -t new < <(measure_build "$SLEDGE" new)
if [ -n "$BASELINE" ]; then
  mapfile -t old < <(measure_build "$BASELINE" old)
fi
# "12.34 s 56 MiB", or "> 600 s" for a command stopped at the LIMIT.
shown() {
  case $1 in
    -*) printf '%9s s %11s' ">${1#-}" "" ;;
    *) printf '%9.2f s %7d MiB' "$1" "$2" ;;
  esac
}
for i in "${!steps[@]}"; do
  read -r s m <<<"${new[$i]}"
  line=$(printf '%-20s %s' "${steps[$i]}" "$(shown "$s" "$m")")
  if [ -n "$BASELINE" ]; then
    read -r os om <<<"${old[$i]}"
    ratio=$(echo "${os#-} / (${s#-} + 0.005)" | bc -l)
    bound=""
    [ "${os:0:1}" = - ] && bound=">"
    [ "${s:0:1}" = - ] && bound="?"
    line+=$(printf '   baseline %s   time ratio baseline/this %s%.1f' \
      "$(shown "$os" "$om")" "$bound" "$ratio")
  fi
  echo "$line"
done
