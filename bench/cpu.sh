#!/usr/bin/env bash
# Side-by-side: sysbench 1.0.20 (Debian package) and sledge's compatible
# workloads on this machine, alternated pair by pair so that drift and
# noise hit both tools alike. Prints each tool's median and the median of
# the per-pair ratios sledge / sysbench.
#
#   bench/cpu.sh            # 3 pairs of 5 s runs per test
#   PAIRS=5 TIME=10 bench/cpu.sh
#
# Target: every ratio within 1.00 +/- 0.05.
set -euo pipefail

PAIRS=${PAIRS:-3}
TIME=${TIME:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
SLEDGE=${SLEDGE:-$here/target/release/sledge}

command -v sysbench >/dev/null || { echo "sysbench is missing: apt-get install sysbench" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is missing (used to read JSON)" >&2; exit 1; }
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
store=$work/bench.db

# sledge: its warm-up trial, then one counted trial of TIME seconds,
# printing that trial's value. The warm-up matters for short tests: the
# first 2-thread trial in a fresh process runs ~30 ms slow (cold thread
# stacks and an idle second CPU), which would add 25% to the 0.14 s mutex
# test; sysbench's run follows sledge's here, so it starts warm too.
sledge_metric() { # metric workload params...
  local metric=$1; shift
  "$SLEDGE" run "$@" -p "time=$TIME" --store "$store" --json --no-idle-check \
      --warmup 1 --min-trials 1 --max-trials 1 2>/dev/null |
    python3 -c "import json,sys; r=json.load(sys.stdin); print(next(m['summary']['mean'] for m in r['cases'][0]['metrics'] if m['name']=='$metric'))"
}
sledge_mutex_time() { # params...
  "$SLEDGE" run cpu.mutex "$@" --store "$store" --json --no-idle-check \
      --warmup 1 --min-trials 1 --max-trials 1 2>/dev/null |
    python3 -c "import json,sys; r=json.load(sys.stdin); print(r['cases'][0]['metrics'][0]['summary']['mean'])"
}

# sysbench: the figure from its report.
# `sysbench cpu` prints events per second; `sysbench threads` only the total
# events and time, so the rate is computed from those.
sb_events() {
  sysbench "$@" --time="$TIME" run | awk '
    /events per second:/ {eps = $4}
    /total time:/ {gsub("s", "", $3); t = $3}
    /total number of events:/ {n = $5}
    END {if (eps != "") print eps; else print n / t}'
}
sb_mib() { sysbench memory "$@" --time="$TIME" run | sed -n 's/.*MiB transferred (\([0-9.]*\) MiB\/sec).*/\1/p'; }
sb_total_time() { sysbench mutex "$@" run | awk '/total time:/ {gsub("s","",$3); print $3}'; }

report() { # name unit sysbench-values sledge-values
  python3 - "$@" <<'PY'
import statistics, sys
name, unit, a, b = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
a = [float(x) for x in a]; b = [float(x) for x in b]
ratios = [y / x for x, y in zip(a, b)]
print(f"{name:<34} sysbench {statistics.median(a):>12.2f}  sledge {statistics.median(b):>12.2f} {unit:<9} ratio {statistics.median(ratios):.3f}  (pairs: {' '.join(f'{r:.3f}' for r in ratios)})")
PY
}

pair() { # name unit "sysbench command" "sledge command"
  local name=$1 unit=$2 sb=$3 sl=$4 a="" b="" i
  for i in $(seq "$PAIRS"); do
    a="$a $(eval "$sb")"
    b="$b $(eval "$sl")"
  done
  report "$name" "$unit" "$a" "$b"
}

echo "sledge vs sysbench $(sysbench --version | awk '{print $2}'), $PAIRS pairs of ${TIME} s, $(nproc) CPUs"
pair "cpu max_prime=20000 threads=1" "events/s" \
  "sb_events cpu --cpu-max-prime=20000 --threads=1" \
  "sledge_metric events_per_sec cpu.primes -p max_prime=20000 -p threads=1"
pair "cpu max_prime=20000 threads=2" "events/s" \
  "sb_events cpu --cpu-max-prime=20000 --threads=2" \
  "sledge_metric events_per_sec cpu.primes -p max_prime=20000 -p threads=2"
pair "threads threads=2" "events/s" \
  "sb_events threads --threads=2" \
  "sledge_metric events_per_sec cpu.threads -p threads=2"
pair "mutex threads=2 (total time)" "s" \
  "sb_total_time --threads=2" \
  "sledge_mutex_time -p threads=2"
pair "memory write 1K threads=1" "MiB/s" \
  "sb_mib --memory-block-size=1K --memory-oper=write --threads=1" \
  "sledge_metric mib_per_sec memory.block -p block_size=1K -p oper=write -p threads=1"
pair "memory read 1K threads=1" "MiB/s" \
  "sb_mib --memory-block-size=1K --memory-oper=read --threads=1" \
  "sledge_metric mib_per_sec memory.block -p block_size=1K -p oper=read -p threads=1"
