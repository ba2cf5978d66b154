#!/usr/bin/env bash
# Side-by-side: `make -jN` timed by hand on a tree against the seconds
# sledge's build workloads report for the same build of the same tree,
# alternated pair by pair so that drift and neighbours hit both alike.
# Prints, per jobs value, each side's median, the median of the per-pair
# ratios sledge / hand (target 1.00 +/- 0.03), sledge's overhead per
# trial (its whole process's wall time, start-up and store included,
# minus the hand-timed config step and the reported build time, per
# trial it ran) and the speed-up t(j1) / t(jN).
#
#   apt-get install linux-source build-essential flex bison bc libelf-dev libssl-dev
#   bench/build.sh                      # build.kernel, tinyconfig, jobs 1 and nproc
#   WHAT=c PAIRS=5 bench/build.sh       # build.c at its defaults
#   JOBS="2 1" PAIRS=1 bench/build.sh   # one pair each, -j2 first
#
# The hand side does what a trial does: a fresh build directory, `make
# O=DIR CONFIG` (untimed), then the timed `make O=DIR -jN TARGET`, its
# output discarded. The tree is sledge's cache entry (the first sledge
# run unpacks or generates it, untimed).
set -euo pipefail

WHAT=${WHAT:-kernel}
PAIRS=${PAIRS:-3}
JOBS=${JOBS:-"1 $(nproc)"}
CONFIG=${CONFIG:-tinyconfig}
FILES=${FILES:-64}
LINES=${LINES:-400}
here=$(cd "$(dirname "$0")/.." && pwd)
SLEDGE=${SLEDGE:-$here/target/release/sledge}
command -v python3 >/dev/null || { echo "python3 is missing" >&2; exit 1; }
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
DIR=${DIR:-$work/cache}
mkdir -p "$DIR"
store=$work/bench.db

case $WHAT in
  kernel) workload=build.kernel; params=(-p "config=$CONFIG" -p "dir=$DIR") ;;
  c) workload=build.c; params=(-p "files=$FILES" -p "lines_per_file=$LINES" -p "dir=$DIR") ;;
  *) echo "WHAT is kernel or c" >&2; exit 2 ;;
esac

now() { date +%s.%N; }

# One sledge trial (no warm-up, one round; a trial disturbed by other
# processes is replaced by another, as in every run): prints "seconds
# process_wall trials".
sledge_once() { # jobs
  local start end
  start=$(now)
  "$SLEDGE" run "$workload" "${params[@]}" -p "jobs=$1" --store "$store" --json \
      --no-idle-check --rounds 1 --warmup 0 --min-trials 1 --max-trials 1 >"$work/out.json" 2>"$work/err"
  end=$(now)
  python3 -c "
import json, sys
case = json.load(open('$work/out.json'))['cases'][0]
if case.get('error'):
    sys.exit('sledge: ' + case['error'])
m = {x['name']: x['summary']['median'] for x in case['metrics']}
print(m['seconds'], $end - $start, len(case['trials']))"
}

# The cached tree sledge built from (named in its case note).
tree_of_last_run() {
  python3 -c "
import json, re
case = json.load(open('$work/out.json'))['cases'][0]
note = [w for w in case['warnings'] if w.startswith('note: built with')][0]
print(re.search(r'; tree (.*)$', note).group(1))"
}

# One hand-timed build: prints "build_seconds config_seconds".
hand_once() { # tree jobs
  local tree=$1 jobs=$2 out=$work/hand-build a b c
  rm -rf "$out"; mkdir -p "$out"
  a=$(now)
  if [ "$WHAT" = kernel ]; then
    make -C "$tree" O="$out" "$CONFIG" >/dev/null 2>&1
    targets=vmlinux
    if grep -q '^CONFIG_MODULES=y' "$out/.config" && grep -q '=m$' "$out/.config"; then targets="vmlinux modules"; fi
  else
    targets=
  fi
  b=$(now)
  # shellcheck disable=SC2086
  make -C "$tree" O="$out" -j"$jobs" $targets >/dev/null 2>"$work/hand.err"
  c=$(now)
  rm -rf "$out"
  python3 -c "print($c - $b, $b - $a)"
}

median() { python3 -c "import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

echo "$workload ${params[*]}: $PAIRS pair(s) per jobs value, sledge $SLEDGE"
printf '%-5s %12s %12s %8s %14s\n' jobs hand_s sledge_s ratio overhead_s
declare -A hand_median
for jobs in $JOBS; do
  hands=() sledges=() ratios=() overheads=()
  for pair in $(seq "$PAIRS"); do
    # The order flips every pair, so that a warm page cache or a drift
    # does not always favour the same side. The first sledge run of all
    # goes first: it names (and fills) the tree.
    if [ -z "${tree:-}" ] || [ $((pair % 2)) -eq 1 ]; then
      read -r s wall n < <(sledge_once "$jobs")
      tree=$(tree_of_last_run)
      read -r h cfg < <(hand_once "$tree" "$jobs")
    else
      read -r h cfg < <(hand_once "$tree" "$jobs")
      read -r s wall n < <(sledge_once "$jobs")
    fi
    hands+=("$h"); sledges+=("$s")
    ratios+=("$(python3 -c "print($s / $h)")")
    # Per trial: what the sledge process took beyond the config steps
    # and the builds of its trials (replaced ones included).
    overheads+=("$(python3 -c "print(($wall - $n * ($s + $cfg)) / $n)")")
  done
  hm=$(median "${hands[@]}"); sm=$(median "${sledges[@]}")
  hand_median[$jobs]=$hm
  printf '%-5s %12.2f %12.2f %8.3f %14.2f\n' "$jobs" "$hm" "$sm" \
    "$(median "${ratios[@]}")" "$(median "${overheads[@]}")"
done
set -- $JOBS
first=$1
for jobs in $JOBS; do
  [ "$jobs" = "$first" ] && continue
  python3 -c "print('speed-up -j$first / -j$jobs (hand medians): %.2fx' % (${hand_median[$first]} / ${hand_median[$jobs]}))"
done
