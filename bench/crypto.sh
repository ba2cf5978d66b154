#!/usr/bin/env bash
# sledge crypto.speed side by side with `openssl speed -elapsed -evp ALG`,
# on one core and on all cores (`-multi N` against copies=N), alternating
# the two tools block size by block size, ROUNDS pairs each, and printing
# medians and the median per-pair ratio sledge / openssl. Both report MB/s
# (10^6 B/s; openssl's table is in 1000s of bytes per second).
#
# Targets: ratio >= 0.95 at 8192 B and >= 0.90 at 16 B.
#
# Environment: ALGS (default "aes-256-cbc sha256 md5"), SECONDS_PER_SIZE
# (default 1; openssl's -seconds and sledge's time), ROUNDS (default 5),
# COPIES (default: all CPUs), SLEDGE (default target/release/sledge),
# AEAD=1 also compares the AEADs against `openssl speed -aead`, which seals
# one message per operation as sledge does.
set -euo pipefail

cd "$(dirname "$0")/.."
ALGS=${ALGS:-"aes-256-cbc sha256 md5"}
SECS=${SECONDS_PER_SIZE:-1}
ROUNDS=${ROUNDS:-5}
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

# openssl's last table line: the name, then "123.45k" for the one size.
openssl_rate() { # alg copies size [extra flags...]
    local alg=$1 copies=$2 size=$3
    shift 3
    local multi=()
    ((copies > 1)) && multi=(-multi "$copies")
    openssl speed -elapsed -seconds "$SECS" -bytes "$size" "${multi[@]}" "$@" -evp "$alg" 2>/dev/null |
        tail -n 1 | grep -oE '[0-9.]+k' | tail -n 1 | tr -d k | awk '{ printf "%.2f", $1 / 1000 }'
}

sledge_rate() { # alg copies size
    "$SLEDGE" run crypto.speed --param "algorithm=$1" --param "copies=$2" \
        --param "block_size=$3" --param "time=$SECS" \
        --no-idle-check --warmup 0 --min-trials 1 --max-trials 1 --json 2>/dev/null |
        jq -r '.cases[0].metrics[] | select(.name == "mb_per_sec") | .summary.mean'
}

median() { grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Alternates openssl and sledge size by size, so that a change of clock or
# load hits both alike, and prints each tool's median and the median of the
# per-pair ratios.
compare() { # alg copies [openssl flags...]
    local alg=$1 copies=$2
    shift 2
    printf '\n%s, %s cop%s (MB/s, medians of %d pairs; ratio = median of per-pair sledge/openssl)\n' \
        "$alg" "$copies" "$([[ $copies == 1 ]] && echo y || echo ies)" "$ROUNDS"
    printf '%8s %12s %12s %8s\n' bytes openssl sledge ratio
    for size in $SIZES; do
        local os="" ss="" rs=""
        for ((r = 0; r < ROUNDS; r++)); do
            local o s
            o=$(openssl_rate "$alg" "$copies" "$size" "$@")
            s=$(sledge_rate "$alg" "$copies" "$size")
            os+="$o"$'\n' ss+="$s"$'\n'
            rs+="$(awk -v o="$o" -v s="$s" 'BEGIN { if (o > 0) printf "%.4f", s / o }')"$'\n'
        done
        printf '%8d %12.1f %12.1f %8.3f\n' "$size" "$(median <<<"$os")" "$(median <<<"$ss")" "$(median <<<"$rs")"
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
