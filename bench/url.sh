#!/usr/bin/env bash
# `sledge run http.url` beside wrk against the same nginx, on loopback:
# the stored workload's generator must reach wrk's rate at the same
# connections, and `server=` must say which side set the rate.
#
# nginx runs one worker on CPU 0 serving 1 B; wrk -t1 and sledge (whose
# default `threads` is then the one CPU nginx may not use) run on CPU 1.
# Each round runs wrk, then one trial of http.url, alternated ROUNDS
# times; each line shows both rates, their ratio, the server's and the
# generator's busy shares, nginx's CPU per request and what sledge said
# about which side limited. `server=` is given nginx's master pid rather
# than `server=nginx`, which would count any other nginx on the host too.
#
# Needs: wrk, nginx (nginx-light), taskset, curl, jq, 2 CPUs.
# Usage: bench/url.sh [SECONDS per run, default 10]
#   ROUNDS=3, CONNS=50 (connections of both tools), SLEDGE=path,
#   PERF=1: also counts, with perf, the wake-ups nginx's worker does
#   (sched:sched_waking) during each run: on loopback the server's writev
#   runs the client socket's receive path and wakes a client blocked in
#   epoll_wait, on the server's CPU; per 1000 requests it shows what
#   each tool's way of waiting costs the server.
#   FILL=1: a nice-19 busy loop on the client CPU during both tools' runs,
#   so that the client CPU is never idle whichever tool runs (does the
#   client's idle share change what a request costs nginx?).
set -euo pipefail

DUR=${1:-${DUR:-10}}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-50}
PORT=${PORT:-18090}
SERVER_CPU=0
CLIENT_CPU=1
cd "$(dirname "$0")/.."
SLEDGE=${SLEDGE:-target/release/sledge}
[ -x "$SLEDGE" ] || cargo build --release --locked --quiet
[ "${PERF:-0}" = 1 ] && { command -v perf >/dev/null || { echo "PERF=1 needs perf (apt-get install linux-perf)" >&2; exit 1; }; }
for tool in wrk nginx taskset curl jq; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install wrk nginx-light util-linux curl jq)" >&2; exit 1; }
done
if [ "$(nproc)" -lt 2 ]; then echo "needs at least 2 CPUs" >&2; exit 1; fi

WORK=$(mktemp -d)
chmod 755 "$WORK"  # nginx's worker runs as an unprivileged user
NGINX_PID=""
FILL_PID=""
cleanup() {
    local rc=$?
    if [ -n "$FILL_PID" ]; then kill "$FILL_PID" 2>/dev/null || true; fi
    if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT

mkdir -p "$WORK/www" "$WORK/tmp"
printf 'a' > "$WORK/www/1b"
cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 20000; }
worker_rlimit_nofile 30000;
http {
    access_log off;
    tcp_nodelay on;
    keepalive_requests 10000000;
    client_body_temp_path $WORK/tmp;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/www;
    }
}
CONF
taskset -c $SERVER_CPU nginx -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/error.log" &
NGINX_PID=$!
URL=http://127.0.0.1:$PORT/1b
for _ in $(seq 50); do
    curl -sf -o /dev/null "$URL" && break
    sleep 0.1
done
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL" || true)
[ "$code" = 200 ] || { echo "$URL answered $code, not 200" >&2; exit 1; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }'; }

# nginx's worker (the master's one child): its context switches tell how
# many requests it finds per wake-up.
worker_pid() { cat "/proc/$NGINX_PID/task/$NGINX_PID/children" | awk '{ print $1 }'; }
# The worker's voluntary context switches so far: each is an epoll_wait
# that found nothing ready and slept.
worker_sleeps() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$(worker_pid)/status"; }
# Requests per sleep of the worker: $1 requests between readings $2, $3.
per_sleep() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.1f", (b > a) ? n / (b - a) : 0 }'; }

# With PERF=1, starts counting the worker's wake-ups of other tasks for
# $DUR seconds into $WORK/wakes.$1 (in the background).
count_wakes() {
    [ "${PERF:-0}" = 1 ] || return 0
    perf stat -x, -e sched:sched_waking -p "$(worker_pid)" -o "$WORK/wakes.$1" -- sleep "$DUR" &
    PERF_PID=$!
}
# Waits for the counting perf, if one runs.
counted() { if [ -n "${PERF_PID:-}" ]; then wait "$PERF_PID" || true; PERF_PID=""; fi; }
# The count started as $1 (once the counting perf ended: `counted` first,
# in the shell that started it), per 1000 requests ($2 requests/s over $DUR s).
wakes_per_1000() {
    [ "${PERF:-0}" = 1 ] || { echo "-"; return 0; }
    awk -F, -v r="$2" -v d="$DUR" '/sched_waking/ { printf "%.1f", 1000 * $1 / (r * d) }' "$WORK/wakes.$1"
}

# The busy and total ticks of CPU $1 so far (/proc/stat).
cpu_ticks() { awk -v cpu="cpu$1" '$1 == cpu { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }
# The busy share (%) of CPU $1 between two cpu_ticks readings $2 and $3.
busy_between() { awk -v a="$2" -v b="$3" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.1f", 100 * (y[1] - x[1]) / (y[2] - x[2]) }'; }

# wrk's requests/s on the client CPU; the server's and the client's CPU
# busy shares over its run in $WRK_SERVER_BUSY and $WRK_CLIENT_BUSY (wrk
# has the client CPU to itself, nginx the server's).
run_wrk() {
    local s0 c0 s1 c1
    s0=$(cpu_ticks "$SERVER_CPU"); c0=$(cpu_ticks "$CLIENT_CPU"); w0=$(worker_sleeps)
    count_wakes wrk
    taskset -c $CLIENT_CPU wrk -t1 -c"$CONNS" -d"${DUR}s" "$URL" | awk '/^Requests\/sec/ { print $2 }' > "$WORK/wrk.rps"
    s1=$(cpu_ticks "$SERVER_CPU"); c1=$(cpu_ticks "$CLIENT_CPU"); w1=$(worker_sleeps)
    WRK_PER_SLEEP=$(per_sleep "$(awk -v r="$(cat "$WORK/wrk.rps")" -v d="$DUR" 'BEGIN { print r * d }')" "$w0" "$w1")
    WRK_SERVER_BUSY=$(busy_between "$SERVER_CPU" "$s0" "$s1")
    WRK_CLIENT_BUSY=$(busy_between "$CLIENT_CPU" "$c0" "$c1")
}

# One stored trial of http.url on the client CPU; its run as JSON.
run_url() {
    taskset -c $CLIENT_CPU "$SLEDGE" run http.url --store "$WORK/url.db" --json --no-idle-check \
        --rounds 1 --warmup 0 --min-trials 1 --max-trials 1 \
        -p "url=$URL" -p "concurrency=$CONNS" -p "server=$NGINX_PID" \
        -p requests=0 -p "time=$DUR" 2>"$WORK/url.err" \
        || { cat "$WORK/url.err" >&2; exit 1; }
}

# The mean of metric $1 of the run's one case.
mean_of() { jq -r --arg m "$1" '.cases[0].metrics[] | select(.name == $m) | .summary.mean' <<<"$json"; }

if [ "${FILL:-0}" = 1 ]; then
    taskset -c $CLIENT_CPU nice -n 19 sh -c 'while :; do :; done' &
    FILL_PID=$!
fi
echo "== wrk -t1 -c$CONNS vs sledge run http.url concurrency=$CONNS (CPU $CLIENT_CPU) against nginx, 1 worker on CPU $SERVER_CPU, 1 B, ${DUR} s x $ROUNDS"
: > "$WORK/ratios"
for round in $(seq "$ROUNDS"); do
    run_wrk
    wrps=$(cat "$WORK/wrk.rps")
    counted
    u0=$(worker_sleeps)
    WRK_WAKES=$(wakes_per_1000 wrk "$wrps")
    count_wakes url
    json=$(run_url)
    u1=$(worker_sleeps)
    counted
    srps=$(mean_of requests_per_sec)
    # The trial's requests over the worker's sleeps in the whole run
    # (which includes sledge's start and its idle end: a lower bound).
    url_wakes=$(wakes_per_1000 url "$srps")
    url_per_sleep=$(per_sleep "$(awk -v r="$srps" -v d="$DUR" 'BEGIN { print r * d }')" "$u0" "$u1")
    said=$(jq -r '.cases[0].warnings[] | select(test("the rate|neither"))' <<<"$json" | sed 's/^in [0-9]* of [0-9]* trials (warm-up included) //' | head -1)
    printf '  round %d: wrk %8.0f req/s | http.url %8.0f req/s | ratio %s | nginx busy %5.1f%%, its busiest thread %5.1f%%, %.2f µs CPU/request; generator busy %5.1f%%\n' \
        "$round" "$wrps" "$srps" "$(ratio "$srps" "$wrps")" "$(mean_of server_cpu_busy)" \
        "$(mean_of server_busiest_thread_busy)" "$(awk -v s="$(mean_of server_cpu_seconds_per_request)" 'BEGIN { print s * 1e6 }')" \
        "$(mean_of generator_cpu_busy)"
    echo "           during wrk: CPU $SERVER_CPU (nginx) busy $WRK_SERVER_BUSY%, CPU $CLIENT_CPU (wrk) busy $WRK_CLIENT_BUSY%"
    echo "           requests per sleep of the nginx worker: wrk $WRK_PER_SLEEP, http.url $url_per_sleep"
    echo "           wake-ups by the nginx worker per 1000 requests: wrk $WRK_WAKES, http.url $url_wakes"
    echo "           which side: ${said:-(nothing said)}"
    echo "$(ratio "$srps" "$wrps")" >> "$WORK/ratios"
done
# Above 1 where wrk's blocking wait costs nginx wake-ups (PERF=1 shows
# them; docs/http.md), below 0.98 would be the generator falling short.
echo "  RATIO requests/s http.url/wrk = $(median < "$WORK/ratios") (median of the rounds' ratios; at least 0.98)"
