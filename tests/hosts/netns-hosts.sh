#!/usr/bin/env bash
# Test hosts on this machine: network namespaces, each running its own
# OpenSSH server, so that sledge's fleet and distributed tests talk to real
# sshd processes without any other machine. Traffic stays on this machine:
# each namespace is linked to the root namespace by one veth pair with
# addresses from the benchmarking range 198.18.0.0/15 (RFC 2544).
#
#   netns-hosts.sh up N DIR     create N hosts; their state goes in DIR
#                               (an existing directory); prints
#                               `hosts root@A,root@B,...` and `key PATH`
#   netns-hosts.sh down DIR     remove the hosts recorded in DIR
#   netns-hosts.sh down --all   remove every sledge-h<K> namespace
#   netns-hosts.sh kill-sshd DIR I   kill every sshd of the I-th host
#                               (1-based), as a host that dies midway
#   netns-hosts.sh quota DIR I PCT   hold the I-th host to PCT% of one CPU
#                               (1-100; 100 is a whole CPU): its sshd moves
#                               into a cgroup of its own with that CPU
#                               quota, and so does every session it starts
#                               from then on (a slower machine of the same
#                               model, for the fleet's outlier test). The
#                               cgroup also gets the largest CPU weight, so
#                               that the host gets its quota even while
#                               other tests crowd the machine's CPUs
#                               (without autogroup scheduling, a hackbench
#                               of 40 tasks alongside would leave an
#                               unweighted host about a twentieth of a CPU,
#                               and a 2% host would no longer stand out).
#
# Host K (the smallest K in 1..254 whose namespace does not exist, claimed
# under a lock so that concurrent test runs get distinct hosts) is the
# namespace sledge-h<K>, reached at 198.18.K.2; the root namespace's end is
# 198.18.K.1, and every host routes 198.18.0.0/15 through it, so that all
# hosts reach a server listening on any of the root side's addresses, and
# each other (the root side's ends forward).
# Each sshd has its own config and host key and accepts only the set's
# throwaway client key, for root, on the namespace address. `down` kills
# every process left in the namespaces (sshd and whatever it started) and
# is idempotent; `up` undoes its own work when it fails midway.
set -euo pipefail

# The sshd on PATH, where the tests look for it before they call this
# (sshd needs its absolute path to re-execute itself).
SSHD=${SSHD:-$(command -v sshd || echo /usr/sbin/sshd)}
LOCK=/run/sledge-netns-hosts.lock

die() { echo "netns-hosts.sh: $*" >&2; exit 1; }

usage() {
  die "usage: netns-hosts.sh up N DIR | down DIR | down --all | kill-sshd DIR I | quota DIR I PCT"
}

need_tools() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
  command -v ip >/dev/null || die "needs ip (Debian package iproute2)"
  [ -x "$SSHD" ] || die "needs $SSHD (Debian package openssh-server)"
  command -v ssh-keygen >/dev/null || die "needs ssh-keygen (Debian package openssh-client)"
}

# The CPU cgroup of host K: cgroup v2's unified tree, or v1's cpu
# controller.
cgroup_of() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    echo "/sys/fs/cgroup/sledge-h$1"
  else
    echo "/sys/fs/cgroup/cpu/sledge-h$1"
  fi
}

# Removes host K: every process in its namespace, the namespace (which
# takes the veth pair with it), the root side's end if it survived, and
# its CPU cgroup if it had one.
remove_host() {
  local k=$1 ns=sledge-h$1 pids cgroup
  if ip netns list | grep -qx "$ns\( (id: [0-9]*)\)\?"; then
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    if [ -n "$pids" ]; then
      kill -9 $pids 2>/dev/null || true
    fi
    ip netns del "$ns" 2>/dev/null || true
  fi
  ip link del "sl$k-r" 2>/dev/null || true
  cgroup=$(cgroup_of "$k")
  if [ -d "$cgroup" ]; then
    # The killed processes leave the cgroup as they are reaped.
    for _ in $(seq 1 250); do
      rmdir "$cgroup" 2>/dev/null && break
      sleep 0.02
    done
  fi
}

down_dir() {
  local dir=$1 k
  [ -f "$dir/hosts" ] || return 0
  while read -r k; do
    [ -n "$k" ] && remove_host "$k"
  done <"$dir/hosts"
  rm -f "$dir/hosts"
}

down_all() {
  local ns
  for ns in $(ip netns list | awk '{print $1}' | grep -E '^sledge-h[0-9]+$' || true); do
    remove_host "${ns#sledge-h}"
  done
}

# Claims the smallest free K by creating its namespace, under the lock.
claim_host() {
  local k
  exec 9>"$LOCK"
  flock 9
  for k in $(seq 1 254); do
    if ! ip netns list | awk '{print $1}' | grep -qx "sledge-h$k"; then
      ip netns add "sledge-h$k"
      flock -u 9
      echo "$k"
      return 0
    fi
  done
  flock -u 9
  die "no free host number in 1..254 (netns-hosts.sh down --all removes stale hosts)"
}

start_host() {
  local dir=$1 k=$2 ns=sledge-h$2 state=$1/h$2
  mkdir -p "$state"
  ip link add "sl$k-r" type veth peer name "sl$k-h"
  ip link set "sl$k-h" netns "$ns"
  ip addr add "198.18.$k.1/24" dev "sl$k-r"
  ip link set "sl$k-r" up
  # Forwarding on for what comes in on this end alone (IPv4 asks the
  # incoming device; the machine's own setting stays as it is): hosts
  # reach each other through the root namespace, as a fleet's pairs do.
  sysctl -qw "net.ipv4.conf.sl$k-r.forwarding=1"
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "198.18.$k.2/24" dev "sl$k-h"
  ip -n "$ns" link set "sl$k-h" up
  ip -n "$ns" route add 198.18.0.0/15 via "198.18.$k.1"
  ssh-keygen -q -t ed25519 -N '' -C "sledge-h$k" -f "$state/host_key"
  cat >"$state/sshd_config" <<CONF
ListenAddress 198.18.$k.2
Port 22
HostKey $state/host_key
PidFile $state/sshd.pid
AuthorizedKeysFile $dir/client_key.pub
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxSessions 64
MaxStartups 64
Subsystem sftp internal-sftp
CONF
  mkdir -p /run/sshd
  chmod 0755 /run/sshd
  ip netns exec "$ns" "$SSHD" -f "$state/sshd_config" -E "$state/sshd.log"
  # sshd writes its pid file once it listens.
  for _ in $(seq 1 250); do
    [ -s "$state/sshd.pid" ] && return 0
    sleep 0.02
  done
  die "sshd of sledge-h$k did not start (see $state/sshd.log)"
}

up() {
  local n=$1 dir=$2 k hosts=""
  [[ "$n" =~ ^[1-9][0-9]?$ ]] || die "up: N must be a number from 1 to 99, not '$n'"
  [ -d "$dir" ] || die "up: $dir is not a directory"
  dir=$(cd "$dir" && pwd)
  trap 'down_dir "$dir"' ERR
  ssh-keygen -q -t ed25519 -N '' -C sledge-test-client -f "$dir/client_key"
  for _ in $(seq 1 "$n"); do
    k=$(claim_host)
    echo "$k" >>"$dir/hosts"
    start_host "$dir" "$k"
    hosts="${hosts:+$hosts,}root@198.18.$k.2"
  done
  trap - ERR
  echo "hosts $hosts"
  echo "key $dir/client_key"
}

kill_sshd() {
  local dir=$1 i=$2 k pid
  k=$(sed -n "${i}p" "$dir/hosts")
  [ -n "$k" ] || die "kill-sshd: $dir holds no host number $i"
  for pid in $(ip netns pids "sledge-h$k"); do
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sshd ]; then
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
}

quota() {
  local dir=$1 i=$2 pct=$3 k cgroup pid
  [[ "$pct" =~ ^([1-9][0-9]?|100)$ ]] || die "quota: PCT must be a number from 1 to 100, not '$pct'"
  k=$(sed -n "${i}p" "$dir/hosts")
  [ -n "$k" ] || die "quota: $dir holds no host number $i"
  cgroup=$(cgroup_of "$k")
  mkdir -p "$cgroup"
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control ||
      echo +cpu >/sys/fs/cgroup/cgroup.subtree_control
    echo "$((pct * 1000)) 100000" >"$cgroup/cpu.max"
    echo 10000 >"$cgroup/cpu.weight"
  else
    echo 100000 >"$cgroup/cpu.cfs_period_us"
    echo "$((pct * 1000))" >"$cgroup/cpu.cfs_quota_us"
    echo 262144 >"$cgroup/cpu.shares"
  fi
  # A process may end between the listing and the move; but a host none
  # of whose processes moved would run unlimited, and a test relying on
  # the quota would measure nothing: that is an error.
  local moved=0
  for pid in $(ip netns pids "sledge-h$k"); do
    echo "$pid" >"$cgroup/cgroup.procs" 2>/dev/null && moved=$((moved + 1))
  done
  [ "$moved" -gt 0 ] || die "quota: no process of host $i (sledge-h$k) could be moved into $cgroup"
}

case "${1:-}" in
  up) [ $# = 3 ] || usage; need_tools; up "$2" "$3" ;;
  down)
    [ $# = 2 ] || usage
    if [ "$2" = --all ]; then down_all; else down_dir "$2"; fi ;;
  kill-sshd) [ $# = 3 ] || usage; kill_sshd "$2" "$3" ;;
  quota) [ $# = 4 ] || usage; quota "$2" "$3" "$4" ;;
  *) usage ;;
esac
