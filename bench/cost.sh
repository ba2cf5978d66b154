#!/usr/bin/env bash
# What a request costs sledge's HTTP generator and its built-in server, in
# instructions, checked against a committed baseline.
#
# Timings on a shared machine move by tens of percent; instruction counts
# do not: valgrind's callgrind counts the same instructions for the same
# binary and input whatever else the machine is doing. So this is the
# guard that a change to the generator's or the server's hot path cannot
# make it slower unnoticed.
#
# Both sides run on loopback against each other: the generator
# (`sledge http -t 1 -c 50`, closed loop, 1 B body) under callgrind against
# the built-in server running natively, then the server under callgrind
# against the generator running natively. Each is run at two request
# counts and the difference is divided by the difference of the counts,
# so that start-up and shutdown cancel and what remains is the cost of one
# request.
#
#   bench/cost.sh            # print the counts and compare them with
#                            # bench/cost-baseline.txt; exit 1 beyond the
#                            # tolerance written there
#   bench/cost.sh --spread N # N runs of each count: min, median, max, for
#                            # choosing the tolerance
#   bench/cost.sh --update   # write the counts measured now as the new
#                            # baseline (do it in the commit that earns it)
#
# Needs: valgrind, curl. SLEDGE=path measures another build (default
# target/release/sledge, built if missing). The counts are of a release
# build on x86_64; another architecture or compiler gives other counts,
# and the check says so instead of failing.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=check
SPREAD_RUNS=0
case "${1:-}" in
    "") ;;
    --update) MODE=update ;;
    --spread) MODE=spread; SPREAD_RUNS=${2:?--spread needs a number of runs} ;;
    *) echo "usage: bench/cost.sh [--update | --spread N]" >&2; exit 2 ;;
esac

BASELINE=bench/cost-baseline.txt
SLEDGE=${SLEDGE:-target/release/sledge}
[ -x "$SLEDGE" ] || cargo build --release --locked --quiet
for tool in valgrind curl; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install valgrind curl)" >&2; exit 1; }
done
# The two request counts; their difference is what is divided.
N1=${N1:-5000}
N2=${N2:-15000}
PORT=${PORT:-18097}

WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
    local rc=$?
    if [ -n "$SERVER_PID" ]; then kill -INT "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT

URL=http://127.0.0.1:$PORT/static/1
wait_for_server() {
    for _ in $(seq 300); do
        curl -sf -o /dev/null "$URL" && return 0
        sleep 0.1
    done
    echo "the server on port $PORT did not answer" >&2
    exit 1
}
# Instructions callgrind counted, from its summary line on stderr.
collected() { awk '/Collected :/ { print $NF }' "$1"; }
# The generator's closed loop, natively: exactly $1 requests.
load() { "$SLEDGE" http -t 1 -c 50 -n "$1" --json "$URL" >/dev/null; }

# Instructions of the generator for $1 requests against a native server.
generator_count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$SLEDGE" http -t 1 -c 50 -n "$1" --json "$URL" >/dev/null 2>"$WORK/gen.err"
    collected "$WORK/gen.err"
}

# Instructions of the server while a native generator sends $1 requests.
server_count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$SLEDGE" http --serve "127.0.0.1:$PORT" -t 1 >/dev/null 2>"$WORK/srv.err" &
    local pid=$!
    wait_for_server
    load "$1"
    kill -INT "$pid"
    wait "$pid" || true
    collected "$WORK/srv.err"
}

per_request() { awk -v a="$1" -v b="$2" -v n1="$N1" -v n2="$N2" 'BEGIN { printf "%.0f", (b - a) / (n2 - n1) }'; }

measure_generator() {
    "$SLEDGE" http --serve "127.0.0.1:$PORT" -t 1 >/dev/null 2>&1 &
    SERVER_PID=$!
    wait_for_server
    local a b
    a=$(generator_count "$N1"); b=$(generator_count "$N2")
    kill -INT "$SERVER_PID"; wait "$SERVER_PID" || true; SERVER_PID=""
    per_request "$a" "$b"
}

measure_server() {
    local a b
    a=$(server_count "$N1"); b=$(server_count "$N2")
    per_request "$a" "$b"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if [ "$MODE" = spread ]; then
    : > "$WORK/g"; : > "$WORK/s"
    for i in $(seq "$SPREAD_RUNS"); do
        g=$(measure_generator); s=$(measure_server)
        echo "  run $i: generator $g, server $s instructions per request"
        echo "$g" >> "$WORK/g"; echo "$s" >> "$WORK/s"
    done
    for side in g s; do
        name=$([ $side = g ] && echo generator || echo server)
        sort -g "$WORK/$side" | awk -v name="$name" -v med="$(median < "$WORK/$side")" \
            '{ v[NR] = $1 } END { printf "%s: min %d, median %d, max %d instructions per request; spread %.2f%% of the median\n", name, v[1], med, v[NR], 100 * (v[NR] - v[1]) / med }'
    done
    exit 0
fi

gen=$(measure_generator)
srv=$(measure_server)
echo "generator: $gen instructions per request (sledge http -t 1 -c 50, closed loop, 1 B, built-in server)"
echo "server:    $srv instructions per request (sledge http --serve -t 1, the same load)"

arch="$(uname -m)"
if [ "$MODE" = update ]; then
    tolerance=$(awk '/^tolerance_percent/ { print $2 }' "$BASELINE" 2>/dev/null || true)
    # The measured spread that justifies the tolerance is kept as it was
    # written: measure it again (--spread 10) and edit it when it changes.
    spread=$(awk '/^# Beyond this share/,/bench\/cost.sh --spread/' "$BASELINE" 2>/dev/null | grep '^#' || true)
    [ -n "$spread" ] || spread="# Beyond this share above the baseline the check fails (bench/cost.sh --spread 10)."
    cat > "$BASELINE" <<EOF
# Instructions per request of sledge's HTTP generator and built-in server,
# counted by bench/cost.sh with callgrind on a release build. Update with
# bench/cost.sh --update in the commit that changes them, and say why.
arch $arch
generator $gen
server $srv
$spread
tolerance_percent ${tolerance:-3}
EOF
    echo "wrote $BASELINE"
    exit 0
fi

base_arch=$(awk '/^arch/ { print $2 }' "$BASELINE")
if [ "$base_arch" != "$arch" ]; then
    echo "the baseline was counted on $base_arch, this is $arch: counts are not comparable, not checked"
    exit 0
fi
tolerance=$(awk '/^tolerance_percent/ { print $2 }' "$BASELINE")
status=0
for side in generator server; do
    now=$([ $side = generator ] && echo "$gen" || echo "$srv")
    base=$(awk -v s="$side" '$1 == s { print $2 }' "$BASELINE")
    verdict=$(awk -v now="$now" -v base="$base" -v tol="$tolerance" 'BEGIN {
        change = 100 * (now - base) / base
        printf "%s %+.1f%%", (change > tol) ? "FAIL" : "ok", change }')
    echo "  $side: $now against $base in the baseline: $verdict (tolerance +$tolerance%)"
    case "$verdict" in FAIL*) status=1 ;; esac
done
if [ $status -ne 0 ]; then
    echo "a request costs more instructions than the baseline allows: find why, or update the baseline (bench/cost.sh --update) in the commit that earns it" >&2
fi
exit $status
