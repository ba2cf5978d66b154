#!/usr/bin/env bash
# sledge memory.stream side by side with STREAM's own reference program,
# and memory.block side by side with `sysbench memory`, alternating the
# tools ROUNDS times and printing medians and the ratio sledge / reference
# (for STREAM the median of the per-pair ratios). Target: STREAM >= 0.98.
#
# STREAM is not fetched or built here: build it yourself with
#   gcc -O3 -march=native -fopenmp -DSTREAM_ARRAY_SIZE=N stream.c -o stream
# and point STREAM_BIN at it (or put `stream` on PATH). sledge then runs
# with the array size that binary reports and OMP_NUM_THREADS threads.
#
# Environment: STREAM_BIN, OMP_NUM_THREADS (default: all CPUs), ROUNDS
# (default 5), BLOCK_TIME (sysbench/sledge seconds per run, default 5),
# SLEDGE (default target/release/sledge).
set -euo pipefail

cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
THREADS=${OMP_NUM_THREADS:-$(nproc)}
export OMP_NUM_THREADS=$THREADS
BLOCK_TIME=${BLOCK_TIME:-5}
SLEDGE=${SLEDGE:-target/release/sledge}
STREAM_BIN=${STREAM_BIN:-$(command -v stream || true)}

command -v jq >/dev/null || { echo "missing: jq (apt-get install jq)" >&2; exit 1; }
if [[ ! -x $SLEDGE ]]; then
    echo "building sledge (release)..." >&2
    cargo build --release --quiet
fi
STORE_DIR=$(mktemp -d)
trap 'rm -rf "$STORE_DIR"' EXIT
export SLEDGE_STORE=$STORE_DIR/results.db

median() { grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

sledge_metric() { # metric workload params...
    local metric=$1
    shift
    "$SLEDGE" run "$@" --no-idle-check --warmup 0 --min-trials 1 --max-trials 1 --json 2>/dev/null |
        jq -r --arg m "$metric" '.cases[0].metrics[] | select(.name == $m) | .summary.mean'
}

row() { # label reference sledge
    awk -v l="$1" -v o="$2" -v s="$3" 'BEGIN { printf "%-28s %12.1f %12.1f %8.3f\n", l, o, s, (o > 0 ? s / o : 0) }'
}

echo "CPUs: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- STREAM ---------------------------------------------------------------
if [[ -z $STREAM_BIN || ! -x $STREAM_BIN ]]; then
    echo
    echo "missing: STREAM reference binary. Build stream.c (from STREAM's author) with"
    echo "  gcc -O3 -march=native -fopenmp -DSTREAM_ARRAY_SIZE=80000000 stream.c -o stream"
    echo "and run again with STREAM_BIN=/path/to/stream; skipping the STREAM comparison."
else
    declare -A ref sl ratio
    elements=""
    for ((r = 0; r < ROUNDS; r++)); do
        out=$("$STREAM_BIN")
        elements=$(grep -oE 'Array size = [0-9]+' <<<"$out" | grep -oE '[0-9]+')
        for k in Copy Scale Add Triad; do
            ref[$k]+="$(awk -v k="$k:" '$1 == k { print $2 }' <<<"$out") "
        done
        json=$("$SLEDGE" run memory.stream --param "array_size=$elements" --param "threads=$THREADS" \
            --no-idle-check --warmup 0 --min-trials 1 --max-trials 1 --json 2>/dev/null)
        for k in Copy Scale Add Triad; do
            name="${k,,}_mb_per_sec"
            s=$(jq -r --arg m "$name" '.cases[0].metrics[] | select(.name == $m) | .summary.mean' <<<"$json")
            o=$(awk -v k="$k:" '$1 == k { print $2 }' <<<"$out")
            sl[$k]+="$s "
            ratio[$k]+="$(awk -v o="$o" -v s="$s" 'BEGIN { if (o > 0) printf "%.4f", s / o }') "
        done
    done
    echo
    echo "STREAM, $elements elements, $THREADS threads (best rate MB/s, medians of $ROUNDS pairs;"
    echo "ratio = median of the per-pair ratios sledge / STREAM)"
    printf '%-28s %12s %12s %8s\n' kernel STREAM sledge ratio
    for k in Copy Scale Add Triad; do
        printf '%-28s %12.1f %12.1f %8.3f\n' "$k" "$(tr ' ' '\n' <<<"${ref[$k]}" | median)" \
            "$(tr ' ' '\n' <<<"${sl[$k]}" | median)" "$(tr ' ' '\n' <<<"${ratio[$k]}" | median)"
    done
fi

# --- sysbench memory ------------------------------------------------------
if ! command -v sysbench >/dev/null; then
    echo
    echo "missing: sysbench (apt-get install sysbench); skipping the memory.block comparison."
    exit 0
fi
echo
echo "memory.block vs sysbench memory, 1K blocks, ${BLOCK_TIME} s (MiB/s, medians of $ROUNDS alternating runs)"
printf '%-28s %12s %12s %8s\n' case sysbench sledge ratio
for oper in write read; do
    for threads in 1 "$THREADS"; do
        sb="" sg=""
        for ((r = 0; r < ROUNDS; r++)); do
            sb+="$(sysbench memory --memory-oper="$oper" --threads="$threads" --time="$BLOCK_TIME" run |
                grep -oE '\([0-9.]+ MiB/sec\)' | grep -oE '[0-9.]+') "
            sg+="$(sledge_metric mib_per_sec memory.block --param "oper=$oper" --param "threads=$threads" \
                --param "time=$BLOCK_TIME") "
        done
        row "$oper, $threads thread(s)" "$(tr ' ' '\n' <<<"$sb" | median)" "$(tr ' ' '\n' <<<"$sg" | median)"
    done
done
