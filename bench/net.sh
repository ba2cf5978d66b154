#!/usr/bin/env bash
# The `net.*` workloads against iperf3 and sockperf, alternated, and a
# known difference found with `sledge ab`. Modes:
#
#   bench/net.sh loopback [PAIRS] [SECONDS]  # over 127.0.0.1: iperf3 -c -P 1
#                                            # and -P 4 against net.stream
#                                            # streams=1 and 4; sockperf
#                                            # ping-pong (14 B, --full-rtt)
#                                            # against net.rr req_size=14
#                                            # resp_size=14. Each pair's
#                                            # figures and the ratio sledge /
#                                            # tool (default 3 pairs of 5 s)
#   bench/net.sh netns [PAIRS] [SECONDS]     # the same between two network
#                                            # namespaces joined by a veth
#                                            # pair (root): sledge's server
#                                            # side is `sledge __net-serve`
#                                            # in the peer namespace
#   bench/net.sh netem [ROUNDS]              # (root) `sledge ab net.rr`
#                                            # between the namespaces, B with
#                                            # `tc netem delay 1ms` on the
#                                            # client's veth: B/A of
#                                            # transactions/s and of p50 (the
#                                            # p50 should grow by about
#                                            # 1000 µs: B/A near
#                                            # (p50 + 1000 µs) / p50)
#   bench/net.sh delay [ROUNDS]              # (root) netem's test where the
#                                            # kernel has no sch_netem:
#                                            # `sledge ab net.rr` through
#                                            # bench/delay_proxy.c in the
#                                            # client's namespace, A with no
#                                            # delay, B holding each request
#                                            # DELAY_US (1000) µs: B - A of
#                                            # the p50 should be about that
#   bench/net.sh tbf [ROUNDS]                # (root) `sledge ab net.stream`,
#                                            # B with `tc tbf rate 2gbit`
#                                            # (TBF_RATE=...) on the client's
#                                            # veth: B/A of Gbit/s (should
#                                            # put B near the rate)
#
# STREAMS="1 4" (the default) picks the stream counts, STREAM_ONLY=1
# leaves out net.rr and net.crr. IPERF3=PATH picks the iperf3 binary:
# from 3.16 on, iperf3 runs one thread per stream, so at 4 streams its
# `-P 4` is no longer bound to one CPU (Debian 12 ships 3.12; a newer
# one builds from esnet/iperf's source with ./configure && make).
#
# Targets (issue 41): net.stream within ±5% of iperf3's Gbit/s at 1 and 4
# streams (at 4, of iperf3 3.16 or later, whose -P runs a thread per
# stream; with Debian's 3.12, of 4 iperf3 processes; at 1, check
# stream.c/iperf3 too: on one boot of a 2-vCPU guest iperf3 3.21's one
# stream ran at 0.83 of stream.c, where 3.12 matched it, see
# docs/network.md); net.rr within ±10%
# of sockperf's round trips per second and
# latency; the netem delay found with the right magnitude, the tbf rate in
# net.stream. Run it alone:
# a build beside it moves every figure. Each stream pair also runs
# bench/stream.c, a plain C stream (blocking writes, a reading thread):
# sledge/stream.c near 1 says sledge adds no cost of its own, whatever
# iperf3's ratio. net.crr is compared with
# bench/crr.c, a connect-per-request loop in C (netperf, whose TCP_CRR
# defines it, is not in Debian's main archive).
#
# Needs iperf3 and sockperf (Debian's), python3, a C compiler; netns and netem need
# root and iproute2 (ip, tc) with the sch_netem module (tbf: sch_tbf); delay
# needs root and ip alone.
set -euo pipefail

mode=${1:-loopback}
here=$(cd "$(dirname "$0")/.." && pwd)
SLEDGE=${SLEDGE:-$here/target/release/sledge}
IPERF3=${IPERF3:-iperf3}
for tool in "$IPERF3" sockperf python3; do
  command -v "$tool" >/dev/null || { echo "$tool is missing (apt-get install $tool)" >&2; exit 1; }
done
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi

work=$(mktemp -d)
store=$work/net.db
pids=()
ns_a=sledge-net-a
ns_b=sledge-net-b
made_ns=""
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ -n "$made_ns" ]; then
    ip netns del "$ns_a" 2>/dev/null || true
    ip netns del "$ns_b" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Where each side runs: nothing (loopback) or `ip netns exec NS`.
client=()
server=()
addr=127.0.0.1

make_namespaces() {
  [ "$(id -u)" = 0 ] || { echo "mode $mode needs root (network namespaces)" >&2; exit 1; }
  ip netns add "$ns_a"
  made_ns=1
  ip netns add "$ns_b"
  ip link add veth-sa netns "$ns_a" type veth peer name veth-sb netns "$ns_b"
  ip -n "$ns_a" addr add 10.77.0.1/24 dev veth-sa
  ip -n "$ns_b" addr add 10.77.0.2/24 dev veth-sb
  ip -n "$ns_a" link set lo up
  ip -n "$ns_b" link set lo up
  ip -n "$ns_a" link set veth-sa up
  ip -n "$ns_b" link set veth-sb up
  client=(ip netns exec "$ns_a")
  server=(ip netns exec "$ns_b")
  addr=10.77.0.2
}

start() { # command...: in the background, killed at the end
  "$@" >/dev/null 2>&1 &
  pids+=($!)
  sleep 1
}

# The mean of a metric of the last sledge run's only case.
sledge_metric() { # name
  "$SLEDGE" --store "$store" show last --json | python3 -c '
import json, sys
case = json.load(sys.stdin)["cases"][0]
print(next(m["summary"]["mean"] for m in case["metrics"] if m["name"] == sys.argv[1]))' "$1"
}

sledge_run() { # workload params...
  local peer=local
  [ "$addr" != 127.0.0.1 ] && peer=$addr:5202
  "${client[@]}" "$SLEDGE" --store "$store" run "$@" -p "peer=$peer" \
    --rounds 1 --max-trials 3 --no-idle-check >/dev/null 2>&1
}

compare() { # pairs seconds
  local pairs=$1 t=$2 i p
  start "${server[@]}" "$IPERF3" -s -p 5201
  # iperf3 before 3.16 (Debian 12's 3.12) runs every stream in one
  # thread: at 4 streams its one thread is the limit (its sender ~96%
  # busy), so, as iperf3's FAQ advises before 3.16, 4 streams are also
  # measured as 4 iperf3 processes of one stream each, their rates summed.
  for k in 1 2 3 4; do start "${server[@]}" "$IPERF3" -s -p $((5210 + k)); done
  start "${server[@]}" sockperf sr --tcp -i "$addr" -p 5203
  if [ "$addr" != 127.0.0.1 ]; then
    start "${server[@]}" "$SLEDGE" __net-serve --listen "$addr:5202"
  fi
  # The floor: bench/stream.c, the least a program can do to move the
  # bytes (blocking 128 KiB writes, a reading thread per connection).
  cc -O2 -pthread -o "$work/stream" "$here/bench/stream.c"
  start "${server[@]}" "$work/stream" server "$addr" 5205 131072
  for p in ${STREAMS:-1 4}; do
    for i in $(seq 1 "$pairs"); do
      local ip sl
      # iperf3's rate, and its own CPU figures (% of one CPU, its
      # process's user + system time over the test): Debian's iperf3
      # (3.12) runs every stream of a side in one thread, so a side at
      # about 100% is iperf3's own limit, not the network's.
      ip=$("${client[@]}" "$IPERF3" -c "$addr" -p 5201 -P "$p" -t "$t" -J |
        python3 -c 'import json,sys; e=json.load(sys.stdin)["end"]; c=e["cpu_utilization_percent"]; print(e["sum_received"]["bits_per_second"]/1e9, c["host_total"], c["remote_total"])')
      local procs=${ip%% *}
      if [ "$p" -gt 1 ]; then
        local k files=() clients=()
        for k in $(seq 1 "$p"); do
          "${client[@]}" "$IPERF3" -c "$addr" -p $((5210 + k)) -t "$t" -J >"$work/iperf3-$k.json" &
          clients+=($!)
          files+=("$work/iperf3-$k.json")
        done
        wait "${clients[@]}"
        procs=$(python3 -c 'import json,sys; print(sum(json.load(open(f))["end"]["sum_received"]["bits_per_second"] for f in sys.argv[1:])/1e9)' "${files[@]}")
      fi
      local floor
      floor=$("${client[@]}" "$work/stream" client "$addr" 5205 131072 "$p" "$t" | awk '{ print $2 }')
      sledge_run net.stream -p "streams=$p" -p "time=$t"
      sl=$(sledge_metric gbit_per_sec)
      # shellcheck disable=SC2086
      python3 -c 'import sys; i,hc,rc,m,c,s=map(float,sys.argv[2:]); print(f"stream P={sys.argv[1]}: iperf3 -P {sys.argv[1]} {i:.2f} Gbit/s (its sender {hc:.0f}% busy, receiver {rc:.0f}%), {sys.argv[1]} iperf3 processes {m:.2f}, stream.c {c:.2f}, sledge {s:.2f} Gbit/s, sledge/iperf3 {s/i:.3f}, sledge/processes {s/m:.3f}, sledge/stream.c {s/c:.3f}, stream.c/iperf3 {c/i:.3f}")' "$p" $ip "$procs" "$floor" "$sl"
    done
  done
  [ "${STREAM_ONLY:-}" = 1 ] && return
  for i in $(seq 1 "$pairs"); do
    local out rate p50 sr sp
    out=$("${client[@]}" sockperf pp --tcp -i "$addr" -p 5203 -t "$t" -m 14 --full-rtt 2>&1)
    rate=$(echo "$out" | sed -n 's/.*\[Valid Duration\] RunTime=\([0-9.]*\) sec; SentMessages=[0-9]*; ReceivedMessages=\([0-9]*\).*/\2 \1/p' | awk '{print $1/$2}')
    p50=$(echo "$out" | sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p')
    sledge_run net.rr -p req_size=14 -p resp_size=14 -p "time=$t"
    sr=$(sledge_metric transactions_per_sec)
    sp=$(sledge_metric latency_p50)
    python3 -c 'import sys; a,b,c,d=map(float,sys.argv[1:]); print(f"rr: sockperf {a:.0f}/s p50 {b:.1f} us, sledge {c:.0f}/s p50 {d:.1f} us, sledge/sockperf rate {c/a:.3f} p50 {d/b:.3f}")' "$rate" "$p50" "$sr" "$sp"
  done
  # net.crr against bench/crr.c, a plain C connect-per-request loop
  # moving the same bytes (net.crr's 16-byte connection header and a
  # 1-byte request, a 1-byte response, the server closing first).
  cc -O2 -o "$work/crr" "$here/bench/crr.c"
  start "${server[@]}" "$work/crr" server "$addr" 5204 16 1 1
  sleep 0.2
  for i in $(seq 1 "$pairs"); do
    local cr sc
    cr=$("${client[@]}" "$work/crr" client "$addr" 5204 16 1 1 "$t" | awk '{ print $2 / $4 }')
    sledge_run net.crr -p "time=$t"
    sc=$(sledge_metric transactions_per_sec)
    python3 -c 'import sys; a,c=map(float,sys.argv[1:]); print(f"crr: crr.c {a:.0f}/s, sledge {c:.0f}/s, sledge/crr.c {c/a:.3f}")' "$cr" "$sc"
  done
}

case $mode in
  loopback)
    compare "${2:-3}" "${3:-5}"
    ;;
  netns)
    make_namespaces
    compare "${2:-3}" "${3:-5}"
    ;;
  netem|tbf)
    make_namespaces
    start "${server[@]}" "$SLEDGE" __net-serve --listen "$addr:5202"
    qdisc="ip netns exec $ns_a tc qdisc"
    if [ "$mode" = netem ]; then
      workload=net.rr
      b_qdisc="netem delay 1ms"
      metrics="transactions_per_sec latency_p50"
    else
      workload=net.stream
      b_qdisc="tbf rate ${TBF_RATE:-2gbit} burst 512kb latency 50ms"
      metrics="gbit_per_sec"
    fi
    "$SLEDGE" --store "$store" ab "$workload" -p "peer=$addr:5202" -p time=3 \
      --rounds "${2:-6}" --no-idle-check --json \
      --a-wrap "ip netns exec $ns_a" --b-wrap "ip netns exec $ns_a" \
      --a-setup "$qdisc del dev veth-sa root 2>/dev/null || true" \
      --b-setup "$qdisc replace dev veth-sa root $b_qdisc" \
      --restore "$qdisc del dev veth-sa root 2>/dev/null || true" \
      >"$work/ab.json" 2>"$work/ab.err" || { cat "$work/ab.err" >&2; exit 1; }
    echo "B: $b_qdisc on the client's veth"
    python3 - "$work/ab.json" $metrics <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
c = doc["candidates"][0]
for case in c["cases"]:
    for m in case["metrics"]:
        if m["name"] not in sys.argv[2:]:
            continue
        cmp = m["comparison"]
        line = (f"{m['name']}: A {m['baseline_mean']:.4g} B {m['candidate_mean']:.4g} {m['unit']}, "
                f"B/A {cmp['ratio']:.4f} "
                f"[{cmp['ratio_ci_low']:.4f}, {cmp['ratio_ci_high']:.4f}] {cmp['verdict']}")
        print(line)
PY
    ;;
  delay)
    make_namespaces
    start "${server[@]}" "$SLEDGE" __net-serve --listen "$addr:5202"
    cc -O2 -pthread -o "$work/delay_proxy" "$here/bench/delay_proxy.c"
    delay_file=$work/delay_us
    echo 0 >"$delay_file"
    start "${client[@]}" "$work/delay_proxy" 10.77.0.1 6202 "$addr" 5202 "$delay_file"
    "$SLEDGE" --store "$store" ab net.rr -p peer=10.77.0.1:6202 -p time=3 \
      --rounds "${2:-6}" --no-idle-check --json \
      --a-wrap "ip netns exec $ns_a" --b-wrap "ip netns exec $ns_a" \
      --a-setup "echo 0 > $delay_file" \
      --b-setup "echo ${DELAY_US:-1000} > $delay_file" \
      --restore "echo 0 > $delay_file" \
      >"$work/ab.json" 2>"$work/ab.err" || { cat "$work/ab.err" >&2; exit 1; }
    echo "B: each request held ${DELAY_US:-1000} µs by the proxy (A: 0)"
    python3 - "$work/ab.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for case in doc["candidates"][0]["cases"]:
    for m in case["metrics"]:
        if m["name"] not in ("transactions_per_sec", "latency_p50", "latency_avg"):
            continue
        cmp = m["comparison"]
        a, b = m["baseline_mean"], m["candidate_mean"]
        print(f"{m['name']}: A {a:.4g} B {b:.4g} {m['unit']}, B - A {b - a:.4g}, "
              f"B/A {cmp['ratio']:.4f} [{cmp['ratio_ci_low']:.4f}, {cmp['ratio_ci_high']:.4f}] "
              f"{cmp['verdict']}")
PY
    ;;
  *)
    echo "usage: bench/net.sh loopback|netns|netem|delay|tbf [PAIRS|ROUNDS] [SECONDS]" >&2
    exit 2
    ;;
esac
