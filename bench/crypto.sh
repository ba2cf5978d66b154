#!/usr/bin/env bash
# sledge crypto.speed side by side with `openssl speed -elapsed -evp ALG`,
# on one core and on all cores (`-multi N` against copies=N), alternating
# the two tools ROUNDS times and printing medians and the ratio
# sledge / openssl per block size. Both report MB/s (10^6 B/s; openssl's
# table is in 1000s of bytes per second).
#
# Environment: ALGS (default "aes-256-cbc sha256 md5"), SECONDS_PER_SIZE
# (default 1; openssl's -seconds and sledge's time), ROUNDS (default 3),
# COPIES (default: all CPUs), SLEDGE (default target/release/sledge),
# AEAD=1 also compares the AEADs against `openssl speed -aead`, which seals
# one message per operation as sledge does.
set -euo pipefail

cd "$(dirname "$0")/.."
ALGS=${ALGS:-"aes-256-cbc sha256 md5"}
SECS=${SECONDS_PER_SIZE:-1}
ROUNDS=${ROUNDS:-3}
COPIES=${COPIES:-$(nproc)}
SLEDGE=${SLEDGE:-target/release/sledge}
SIZES="16 64 256 1024 8192 16384"

missing=()
command -v openssl >/dev/null || missing+=("openssl (apt-get install openssl)")
command -v jq >/dev/null || missing+=("jq (apt-get install jq)")
if ((${#missing[@]})); then
    printf 'missing: %s\n' "${missing[@]}" >&2
    exit 1
fi
if [[ ! -x $SLEDGE ]]; then
    echo "building sledge (release)..." >&2
    cargo build --release --quiet
fi
STORE_DIR=$(mktemp -d)
trap 'rm -rf "$STORE_DIR"' EXIT
export SLEDGE_STORE=$STORE_DIR/results.db

# openssl's last table line: the name, then one "123.45k" per block size.
openssl_rates() { # alg copies [extra flags...]
    local alg=$1 copies=$2
    shift 2
    local multi=()
    ((copies > 1)) && multi=(-multi "$copies")
    openssl speed -elapsed -seconds "$SECS" "${multi[@]}" "$@" -evp "$alg" 2>/dev/null |
        tail -n 1 | grep -oE '[0-9.]+k' | tr -d k | awk '{ printf "%.2f ", $1 / 1000 }'
}

sledge_rates() { # alg copies
    local csv
    csv=$(tr ' ' , <<<"$SIZES")
    "$SLEDGE" run crypto.speed --param "algorithm=$1" --param "block_size=$csv" \
        --param "copies=$2" --param "time=$SECS" \
        --no-idle-check --warmup 0 --min-trials 1 --max-trials 1 --json 2>/dev/null |
        jq -r '[.cases[] | {b: (.params.block_size | if endswith("K") then (.[:-1] | tonumber) * 1024 else tonumber end), v: (.metrics[] | select(.name == "mb_per_sec") | .summary.mean)}]
               | sort_by(.b) | map(.v * 100 | round / 100 | tostring) | join(" ")'
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

compare() { # alg copies [openssl flags...]
    local alg=$1 copies=$2
    shift 2
    local o_runs=() s_runs=()
    for ((r = 0; r < ROUNDS; r++)); do
        o_runs+=("$(openssl_rates "$alg" "$copies" "$@")")
        s_runs+=("$(sledge_rates "$alg" "$copies")")
    done
    printf '\n%s, %s cop%s (medians of %d alternating runs, MB/s)\n' "$alg" "$copies" \
        "$([[ $copies == 1 ]] && echo y || echo ies)" "$ROUNDS"
    printf '%8s %12s %12s %8s\n' bytes openssl sledge ratio
    local i=1
    for size in $SIZES; do
        local o s
        o=$(for run in "${o_runs[@]}"; do cut -d' ' -f"$i" <<<"$run"; done | median)
        s=$(for run in "${s_runs[@]}"; do cut -d' ' -f"$i" <<<"$run"; done | median)
        awk -v b="$size" -v o="$o" -v s="$s" 'BEGIN { printf "%8d %12.1f %12.1f %8.3f\n", b, o, s, (o > 0 ? s / o : 0) }'
        i=$((i + 1))
    done
}

echo "openssl: $(openssl version); CPUs: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for alg in $ALGS; do
    compare "$alg" 1
    ((COPIES > 1)) && compare "$alg" "$COPIES"
done
if [[ ${AEAD:-0} == 1 ]]; then
    for alg in aes-128-gcm aes-256-gcm; do
        compare "$alg" 1 -aead
    done
fi
