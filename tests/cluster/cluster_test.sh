#!/usr/bin/env bash
# ctest driver of the emulated-cluster tests (tests/cluster/CMakeLists.txt):
#   cluster_test.sh up    NAME CLUSTER_SCRIPT [up options...]   fixture set-up
#   cluster_test.sh down  NAME CLUSTER_SCRIPT                   fixture clean-up: nothing left
#   cluster_test.sh run   NAME CLUSTER_SCRIPT -- COMMAND...     COMMAND on the cluster's first host
#   cluster_test.sh info  NAME CLUSTER_SCRIPT TRANSIT HOSTS     `transit info` names the real nodes
#   cluster_test.sh host-lost NAME CLUSTER_SCRIPT STREAMING HOSTS  kill a host's ranks mid-run: the job
#                                       ends within 30 s, nonzero, naming a lost rank, nothing left
# Exits 77 (ctest's SKIP_RETURN_CODE) with a message where network namespaces cannot be made.
set -uo pipefail
action=$1 name=$2 cluster=$3
shift 3

can_make_namespaces() {
  [ "$(id -u)" -eq 0 ] || { echo "SKIPPED: the cluster tests need root (network namespaces); run them as root: ctest -L cluster"; return 1; }
  command -v ip >/dev/null || { echo "SKIPPED: iproute2 is missing (run scripts/setup as root)"; return 1; }
  local probe=transit-$name-probe
  if ! ip netns add "$probe" 2>/tmp/transit-$name-probe.err; then
    echo "SKIPPED: cannot create network namespaces here: $(cat /tmp/transit-$name-probe.err)"
    rm -f /tmp/transit-$name-probe.err
    return 1
  fi
  ip netns delete "$probe"
  rm -f /tmp/transit-$name-probe.err
}

leftovers() { # processes and namespaces of this cluster still present
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^transit-$name-" | while read -r ns; do
    echo "namespace $ns: processes $(ip netns pids "$ns" | tr '\n' ' ')"
  done
  [ ! -e "/run/transit-cluster/$name" ] || echo "state directory /run/transit-cluster/$name"
  grep -F " /run/transit-cluster/$name" /proc/self/mounts | sed 's/^/mount /'
}

case $action in
  up)
    can_make_namespaces || exit 77
    exec "$cluster" --name "$name" up "$@"
    ;;
  down)
    can_make_namespaces || exit 77
    "$cluster" --name "$name" down || exit 1
    left=$(leftovers)
    [ -z "$left" ] || { echo "FAILED: left behind after down:"; echo "$left"; exit 1; }
    ;;
  run)
    can_make_namespaces || exit 77
    [ "${1:-}" = -- ] && shift
    exec "$cluster" --name "$name" run -- "$@"
    ;;
  info)
    can_make_namespaces || exit 77
    transit=$1 hosts=$2
    for mapping in node slot; do
      out=$("$cluster" --name "$name" run -- mpirun -np $((2 * hosts)) --map-by "$mapping" "$transit" info 2>&1) ||
        { echo "$out"; echo "FAILED: transit info on the cluster (--map-by $mapping)"; exit 1; }
      echo "--map-by $mapping:"
      echo "$out"
      expected_per_node=$(printf '2 %.0s' $(seq 1 "$hosts") | sed 's/ $//')
      echo "$out" | grep -qx "nodes: $hosts" || { echo "FAILED: expected 'nodes: $hosts'"; exit 1; }
      echo "$out" | grep -qx "pes per node: $expected_per_node" || { echo "FAILED: expected 'pes per node: $expected_per_node'"; exit 1; }
    done
    ;;
  host-lost)
    can_make_namespaces || exit 77
    program=$1 hosts=$2
    victim=$((hosts - 1))
    out=$(mktemp)
    trap 'rm -f "$out"' EXIT
    "$cluster" --name "$name" run -- mpirun -np $((2 * hosts)) --map-by node "$program" 120 >"$out" 2>&1 &
    job=$!
    for _ in $(seq 1 300); do
      grep -q '^streaming' "$out" && break
      kill -0 "$job" 2>/dev/null || break
      sleep 0.1
    done
    grep -q '^streaming' "$out" || { cat "$out"; echo "FAILED: the job did not start streaming within 30 s"; kill -9 "$job"; exit 1; }
    # The ranks on the victim host: its processes running the program (not Open MPI's daemon).
    lost_ranks=()
    victims=()
    for pid in $("$cluster" --name "$name" pids --host "$victim"); do
      [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$program")" ] || continue
      victims+=("$pid")
      lost_ranks+=("$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')")
    done
    [ ${#victims[@]} -eq 2 ] || { cat "$out"; echo "FAILED: expected 2 ranks on host $victim, found ${#victims[@]}"; kill -9 "$job"; exit 1; }
    echo "killing ranks ${lost_ranks[*]} (pids ${victims[*]}) on host $name-h$victim"
    start=$(date +%s.%N)
    kill -KILL "${victims[@]}"
    ended=""
    for _ in $(seq 1 300); do
      kill -0 "$job" 2>/dev/null || { ended=yes; break; }
      sleep 0.1
    done
    elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    if [ -z "$ended" ]; then
      cat "$out"; echo "FAILED: the job still runs 30 s after its ranks on host $victim were killed"
      kill -9 "$job"; "$cluster" --name "$name" down >/dev/null; exit 1
    fi
    wait "$job"
    status=$?
    cat "$out"
    echo "the job ended ${elapsed} s after the kill, status $status"
    [ "$status" -ne 0 ] || { echo "FAILED: the job ended with status 0 after losing ranks ${lost_ranks[*]}"; exit 1; }
    named=$(grep -E "rank (${lost_ranks[0]}|${lost_ranks[1]}) .*node $name-h$victim" "$out" | head -1)
    [ -n "$named" ] || { echo "FAILED: no message names a lost rank (${lost_ranks[*]}) on $name-h$victim"; exit 1; }
    # Nothing left: every process of the job on every host ends (the daemons within seconds).
    for _ in $(seq 1 100); do
      left=$(for ((k = 0; k < hosts; k++)); do "$cluster" --name "$name" pids --host "$k"; done)
      [ -n "$left" ] || break
      sleep 0.1
    done
    [ -z "$left" ] || { echo "FAILED: processes left on the hosts 10 s after the job ended:"; ps -o pid,args -p $left; exit 1; }
    ;;
  *)
    echo "cluster_test.sh: unknown action '$action'" >&2
    exit 2
    ;;
esac
