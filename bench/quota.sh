# Sourced by the bench/ scripts that throttle a run on purpose (ab.sh,
# verdicts.sh, history.sh): one way to make a CPU-quota cgroup.
#
#   quota_cgroup NAME PERCENT   # sets $cgroup to a new group at PERCENT
#                               # of one CPU, or exits saying why not
#
# cgroup v1 (cpu.cfs_quota_us) or v2 (cpu.max); needs root. The caller
# removes the group ($cgroup) when it is done.

quota_cgroup() { # name percent
  local name=$1 percent=$2
  if [ -f /sys/fs/cgroup/cpu/cgroup.procs ]; then
    cgroup=/sys/fs/cgroup/cpu/$name
    mkdir "$cgroup"
    echo 100000 > "$cgroup/cpu.cfs_period_us"
    echo $((percent * 1000)) > "$cgroup/cpu.cfs_quota_us"
  elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    cgroup=/sys/fs/cgroup/$name
    mkdir "$cgroup"
    echo "$((percent * 1000)) 100000" > "$cgroup/cpu.max"
  else
    echo "no cgroup cpu controller found: this check needs one (v1 cpu.cfs_quota_us or v2 cpu.max)" >&2
    exit 1
  fi
}
