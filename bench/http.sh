#!/usr/bin/env bash
# sledge's HTTP generator and server side by side with wrk and nginx, all on
# loopback. Each pair is alternated ROUNDS times; medians and ratios are
# printed. On two cores one side is always saturated, so cost is compared
# as well as rate: requests per CPU-second of the measured process, from its
# /proc accounting (user + system time).
#
#   1. generator: nginx (1 worker, CPU 0) serving 1 B; wrk -t1 -c50 vs
#      sledge http -c50 -t1, each on CPU 1.
#   2. server: wrk -t1 -c50 (CPU 1) against nginx vs sledge's built-in
#      server (each on CPU 0), 1 B and 10 MiB.
#   3. memory: sledge http, 1,000,000 requests at concurrency 500; peak RSS.
#   4. connections: part 1 at -c 500 and -c 10000 (CONNS), per CPU-second
#      and rate against wrk; sledge's peak RSS at each.
#   5. open: sledge's closed loop at -c 100 gives the ceiling; then the
#      open loop (--rate) at 50%, 75%, 90% and 100% of it, each round with
#      a new ceiling: achieved / requested, p99 latency from the due time
#      and from the send, late requests, the generator's and nginx's busy
#      shares (nginx near 100%: the server, not the generator, fell behind).
#      With WRK2=path (wrk2, Gil Tene's open-loop wrk, built from source),
#      wrk2 runs at the same rates after sledge, as a second opinion on
#      whether a shortfall is the generator's or the server's.
#
# Needs: wrk, nginx (nginx-light), taskset, GNU time, jq.
# Usage: bench/http.sh [SECONDS per run, default 10]
#   PARTS="generator server memory connections open" (the default) chooses
#   the parts;
#   SLEDGE=path runs another build (to compare two builds, alternate them).
set -euo pipefail

DUR=${1:-${DUR:-10}}
ROUNDS=${ROUNDS:-3}
PARTS=${PARTS:-generator server memory connections open}
part() { [[ " $PARTS " == *" $1 "* ]]; }
NGINX_PORT=${NGINX_PORT:-18080}
SLEDGE_PORT=${SLEDGE_PORT:-18081}
SERVER_CPU=0
CLIENT_CPU=1
cd "$(dirname "$0")/.."
SLEDGE=${SLEDGE:-target/release/sledge}
[ -x "$SLEDGE" ] || cargo build --release --quiet
for tool in wrk nginx taskset jq /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install wrk nginx-light util-linux jq time)" >&2; exit 1; }
done
if [ "$(nproc)" -lt 2 ]; then echo "needs at least 2 CPUs" >&2; exit 1; fi

WORK=$(mktemp -d)
chmod 755 "$WORK"  # nginx workers run as an unprivileged user
NGINX_PID=""
SLEDGE_PID=""
cleanup() {
    local rc=$?
    if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
    if [ -n "$SLEDGE_PID" ]; then kill -INT "$SLEDGE_PID" 2>/dev/null || true; wait "$SLEDGE_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT

mkdir -p "$WORK/www" "$WORK/tmp"
printf 'a' > "$WORK/www/1b"
head -c $((10 << 20)) /dev/zero | tr '\0' 'a' > "$WORK/www/10m"
cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 20000; }
worker_rlimit_nofile 30000;
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 10000000;
    client_body_temp_path $WORK/tmp;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $WORK/www;
    }
}
CONF
taskset -c $SERVER_CPU nginx -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/error.log" &
NGINX_PID=$!
taskset -c $SERVER_CPU "$SLEDGE" http --serve 127.0.0.1:$SLEDGE_PORT -t 1 2>/dev/null &
SLEDGE_PID=$!
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$NGINX_PORT/1b" >/dev/null 2>&1 \
        && curl -sf "http://127.0.0.1:$SLEDGE_PORT/static/1" >/dev/null 2>&1 && break
    sleep 0.1
done
for url in "http://127.0.0.1:$NGINX_PORT/1b" "http://127.0.0.1:$NGINX_PORT/10m" \
    "http://127.0.0.1:$SLEDGE_PORT/static/1" "http://127.0.0.1:$SLEDGE_PORT/static/10485760"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$url" || true)
    [ "$code" = 200 ] || { echo "$url answered $code, not 200" >&2; exit 1; }
done
NGINX_WORKER=$(pgrep -P "$NGINX_PID" | head -1)

NGINX_1B=http://127.0.0.1:$NGINX_PORT/1b
NGINX_10M=http://127.0.0.1:$NGINX_PORT/10m
SLEDGE_1B=http://127.0.0.1:$SLEDGE_PORT/static/1
SLEDGE_10M=http://127.0.0.1:$SLEDGE_PORT/static/10485760

# CPU seconds (user + system) a process has used so far.
cpu_of() { awk -v tck="$(getconf CLK_TCK)" '{ print ($14 + $15) / tck }' "/proc/$1/stat"; }
# nginx's worker: its CPU share (%) since CPU time $1 at wall time $2.
busy_since() { awk -v a="$(cpu_of "$NGINX_WORKER")" -v b="$1" -v t0="$2" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.0f", 100 * (a - b) / (t1 - t0) }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }'; }

# Runs wrk on the client CPU against $1 (connections: $2, default 50);
# prints "requests req/s cpu_seconds".
run_wrk() {
    local out
    out=$( { /usr/bin/time -f 'CPU %U %S' taskset -c $CLIENT_CPU wrk -t1 -c"${2:-50}" -d"${DUR}s" "$1"; } 2>&1 )
    local n rps cpu
    n=$(awk '/requests in/ { print $1 }' <<<"$out")
    rps=$(awk '/^Requests\/sec/ { print $2 }' <<<"$out")
    cpu=$(awk '/^CPU/ { print $2 + $3 }' <<<"$out")
    echo "$n $rps $cpu"
}

# Runs sledge http on the client CPU against $1 (connections: $2, default
# 50); same output as run_wrk, then the peak RSS in KiB.
run_sledge() {
    local json cpu
    json=$( { /usr/bin/time -o "$WORK/time" -f 'CPU %U %S RSS %M' taskset -c $CLIENT_CPU "$SLEDGE" http -t 1 -c "${2:-50}" -d "$DUR" --json "$1"; } )
    cpu=$(awk '/^CPU/ { print $2 + $3 }' "$WORK/time")
    echo "$(jq .responses <<<"$json") $(jq '.requests_per_sec | floor' <<<"$json") $cpu $(awk '/^CPU/ { print $5 }' "$WORK/time")"
}

# Runs wrk against $2 and measures the server process $1's CPU; prints
# "req/s requests_per_server_cpu_second".
run_server() {
    local before after
    before=$(cpu_of "$1")
    read -r n rps _ < <(run_wrk "$2")
    after=$(cpu_of "$1")
    echo "$rps $(awk -v n="$n" -v a="$after" -v b="$before" 'BEGIN { printf "%.1f", n / (a - b) }')"
}

if part generator; then
echo "== 1. generator: wrk -t1 -c50 vs sledge http -t1 -c50 (CPU $CLIENT_CPU) against nginx 1 B (CPU $SERVER_CPU), ${DUR} s x $ROUNDS"
echo "   (nginx busy: its CPU time over the run's wall time; near 100% means the server, not the generator, set the rate)"
: > "$WORK/gen"
for round in $(seq "$ROUNDS"); do
    c0=$(cpu_of "$NGINX_WORKER"); t0=$(date +%s.%N)
    read -r wn wrps wcpu < <(run_wrk "$NGINX_1B")
    wbusy=$(busy_since "$c0" "$t0")
    c0=$(cpu_of "$NGINX_WORKER"); t0=$(date +%s.%N)
    read -r sn srps scpu _ < <(run_sledge "$NGINX_1B")
    sbusy=$(busy_since "$c0" "$t0")
    wper=$(awk -v n="$wn" -v c="$wcpu" 'BEGIN { printf "%.0f", n / c }')
    sper=$(awk -v n="$sn" -v c="$scpu" 'BEGIN { printf "%.0f", n / c }')
    printf '  round %d: wrk %8.0f req/s %8s req/CPU-s nginx busy %3s%% | sledge %8.0f req/s %8s req/CPU-s nginx busy %3s%% | ratio %.3f\n' \
        "$round" "$wrps" "$wper" "$wbusy" "$srps" "$sper" "$sbusy" "$(ratio "$srps" "$wrps")"
    echo "$wrps $wper $srps $sper $(ratio "$srps" "$wrps") $(ratio "$sper" "$wper")" >> "$WORK/gen"
done
g_wrps=$(awk '{ print $1 }' "$WORK/gen" | median); g_wper=$(awk '{ print $2 }' "$WORK/gen" | median)
g_srps=$(awk '{ print $3 }' "$WORK/gen" | median); g_sper=$(awk '{ print $4 }' "$WORK/gen" | median)
echo "  median: wrk $g_wrps req/s, $g_wper req/CPU-s; sledge $g_srps req/s, $g_sper req/CPU-s"
echo "  median of the rounds' ratios: req/s $(awk '{ print $5 }' "$WORK/gen" | median), req/CPU-s $(awk '{ print $6 }' "$WORK/gen" | median)"
echo "  RATIO requests per generator CPU-second sledge/wrk = $(ratio "$g_sper" "$g_wper") (target >= 1.5)"
echo "  RATIO requests/s sledge/wrk = $(ratio "$g_srps" "$g_wrps") (target >= 0.98)"
fi

if part server; then

for size in 1B 10MiB; do
    if [ $size = 1B ]; then n_url=$NGINX_1B; s_url=$SLEDGE_1B; target=1.0; else n_url=$NGINX_10M; s_url=$SLEDGE_10M; target=0.9; fi
    echo "== 2. server, $size: wrk -t1 -c50 (CPU $CLIENT_CPU) against nginx vs sledge's server (CPU $SERVER_CPU), ${DUR} s x $ROUNDS"
    : > "$WORK/srv"
    for round in $(seq "$ROUNDS"); do
        read -r nrps nper < <(run_server "$NGINX_WORKER" "$n_url")
        read -r srps sper < <(run_server "$SLEDGE_PID" "$s_url")
        printf '  round %d: nginx %8.0f req/s %8s req/CPU-s | sledge %8.0f req/s %8s req/CPU-s\n' "$round" "$nrps" "$nper" "$srps" "$sper"
        echo "$nrps $nper $srps $sper" >> "$WORK/srv"
    done
    m_nper=$(awk '{ print $2 }' "$WORK/srv" | median); m_sper=$(awk '{ print $4 }' "$WORK/srv" | median)
    m_nrps=$(awk '{ print $1 }' "$WORK/srv" | median); m_srps=$(awk '{ print $3 }' "$WORK/srv" | median)
    echo "  median: nginx $m_nrps req/s, $m_nper req/CPU-s; sledge $m_srps req/s, $m_sper req/CPU-s"
    echo "  RATIO requests per server CPU-second sledge/nginx ($size) = $(ratio "$m_sper" "$m_nper") (target >= $target)"
done
fi

if part memory; then

echo "== 3. memory: sledge http -c 500 -n 1000000 -d 300 against nginx 1 B"
json=$( { /usr/bin/time -o "$WORK/time" -f 'RSS %M' taskset -c $CLIENT_CPU "$SLEDGE" http -c 500 -n 1000000 -d 300 --json "$NGINX_1B"; } )
rss_kib=$(awk '/^RSS/ { print $2 }' "$WORK/time")
echo "  responses $(jq .responses <<<"$json"), errors $(jq '.errors | add' <<<"$json"), $(jq '.requests_per_sec | floor' <<<"$json") req/s"
echo "  RESULT generator peak RSS = $(awk -v k="$rss_kib" 'BEGIN { printf "%.1f", k / 1024 }') MiB (target < 64)"
fi

if part connections; then
for conns in ${CONNS:-500 10000}; do
    echo "== 4. connections: wrk -t1 -c$conns vs sledge http -t1 -c$conns (CPU $CLIENT_CPU) against nginx 1 B, ${DUR} s x $ROUNDS"
    : > "$WORK/conns"
    for round in $(seq "$ROUNDS"); do
        read -r wn wrps wcpu < <(run_wrk "$NGINX_1B" "$conns")
        read -r sn srps scpu srss < <(run_sledge "$NGINX_1B" "$conns")
        wper=$(awk -v n="$wn" -v c="$wcpu" 'BEGIN { printf "%.0f", n / c }')
        sper=$(awk -v n="$sn" -v c="$scpu" 'BEGIN { printf "%.0f", n / c }')
        printf '  round %d: wrk %8.0f req/s %8s req/CPU-s | sledge %8.0f req/s %8s req/CPU-s, %6.1f MiB | ratio %.3f\n' \
            "$round" "$wrps" "$wper" "$srps" "$sper" "$(awk -v k="$srss" 'BEGIN { print k / 1024 }')" "$(ratio "$sper" "$wper")"
        echo "$(ratio "$srps" "$wrps") $(ratio "$sper" "$wper") $srss" >> "$WORK/conns"
    done
    echo "  RATIO requests per generator CPU-second sledge/wrk at -c$conns = $(awk '{ print $2 }' "$WORK/conns" | median) (median of the rounds' ratios)"
    echo "  RATIO requests/s sledge/wrk at -c$conns = $(awk '{ print $1 }' "$WORK/conns" | median)"
    echo "  RESULT sledge peak RSS at -c$conns = $(awk '{ print $3 }' "$WORK/conns" | sort -g | tail -1 | awk '{ printf "%.1f", $1 / 1024 }') MiB (largest of the rounds)"
done
fi

if part open; then
echo "== 5. open loop: sledge http -t1 -c100 --rate R (CPU $CLIENT_CPU) against nginx 1 B, R a share of the closed loop's ceiling, ${DUR} s x $ROUNDS"
# The closed loop's rate on the same thread, connections and server.
ceiling() {
    taskset -c $CLIENT_CPU "$SLEDGE" http -t 1 -c 100 -d "$DUR" --json "$NGINX_1B" | jq '.requests_per_sec | floor'
}
: > "$WORK/open"
: > "$WORK/open-wrk2"
for round in $(seq "$ROUNDS"); do
    top=$(ceiling)
    echo "  round $round: closed-loop ceiling $top req/s"
    for share in 50 75 90 100; do
        rate=$(( top * share / 100 ))
        c0=$(cpu_of "$NGINX_WORKER"); t0=$(date +%s.%N)
        json=$(taskset -c $CLIENT_CPU "$SLEDGE" http -t 1 -c 100 -d "$DUR" --rate "$rate" --json "$NGINX_1B")
        nbusy=$(busy_since "$c0" "$t0")
        achieved=$(jq .achieved_rate <<<"$json")
        printf '    %3d%%: requested %6d, achieved %8.0f (%.3f); p99 from due %8.2f ms, from send %6.2f ms; %s late; generator busy %s, nginx busy %s%%\n' \
            "$share" "$rate" "$achieved" "$(ratio "$achieved" "$rate")" "$(jq .latency.p99_ms <<<"$json")" \
            "$(jq .latency_from_send.p99_ms <<<"$json")" "$(jq .late <<<"$json")" "$(jq -r '(.generator_busy // 0) * 100 | floor | tostring + "%"' <<<"$json")" "$nbusy"
        echo "$share $(ratio "$achieved" "$rate") $(jq .latency.p99_ms <<<"$json")" >> "$WORK/open"
        if [ -n "${WRK2:-}" ]; then
            # wrk2 spends its first seconds calibrating: give it 10 s at least.
            c0=$(cpu_of "$NGINX_WORKER"); t0=$(date +%s.%N)
            out=$(taskset -c $CLIENT_CPU "$WRK2" -t1 -c100 -d"$(( DUR > 10 ? DUR : 10 ))s" -R"$rate" -L "$NGINX_1B")
            nbusy=$(busy_since "$c0" "$t0")
            w2rps=$(awk '/^Requests\/sec/ { print $2 }' <<<"$out")
            w2p99=$(awk '$1 == "99.000%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 } print v }' <<<"$out")
            printf '          wrk2: achieved %8.0f (%.3f); p99 from due %8.2f ms; nginx busy %s%%\n' \
                "$w2rps" "$(ratio "$w2rps" "$rate")" "$w2p99" "$nbusy"
            echo "$share $(ratio "$w2rps" "$rate") $w2p99" >> "$WORK/open-wrk2"
        fi
    done
done
for share in 50 75 90 100; do
    echo "  RATIO achieved/requested at $share% of the ceiling = $(awk -v s="$share" '$1 == s { print $2 }' "$WORK/open" | median) (median; target >= 0.99 up to 90%), p99 from due $(awk -v s="$share" '$1 == s { print $3 }' "$WORK/open" | median) ms"
    if [ -n "${WRK2:-}" ]; then
        echo "        wrk2 at $share%: achieved/requested $(awk -v s="$share" '$1 == s { print $2 }' "$WORK/open-wrk2" | median), p99 from due $(awk -v s="$share" '$1 == s { print $3 }' "$WORK/open-wrk2" | median) ms"
    fi
done
fi
