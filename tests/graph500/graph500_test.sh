#!/usr/bin/env bash
# graph500_test.sh CASE [ARGS]: the checks of bench/graph500 (tests/graph500/CMakeLists.txt says which).
#   validate WORK BUILD [PREFIX]  run.sh validate on BUILD (aml or transit) at SCALE 10 and 11, 1, 2
#                                 and 4 ranks, both programs; exit 77 (ctest: skipped, the reason
#                                 shown) when graph500's code cannot be fetched
#   judge                         report.py check on made-up outputs: a good run passes, each way a
#                                 run can fail is caught with its reason
#   usage                         run.sh and sim.sh refuse bad options with one line naming the value
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=$here/../../bench/graph500
fail() { echo "graph500_test: $*"; exit 1; }

case $1 in
  validate)
    work=$2 build=$3 prefix=${4:-}
    args=(validate --builds "$build" --scales 10,11 --ranks 1,2,4 --timeout 240 --work "$work")
    [ -n "$prefix" ] && args+=(--transit-prefix "$prefix")
    "$bench/run.sh" "${args[@]}"
    status=$?
    if [ "$status" -eq 3 ]; then
      echo "graph500_test: skipped: graph500's reference code cannot be fetched here (above); configure with -DTRANSIT_GRAPH500_SOURCE=<a clone of github.com/graph500/graph500> to run it"
      exit 77
    fi
    exit "$status" ;;
  judge)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # A made-up run of graph500_reference_bfs_sssp in the reference's format, 64 roots validated.
    good() {
      printf 'SCALE:                          10\nedgefactor:                     16\nNBFS:                           %s\n' "${1:-64}"
      printf 'graph_generation:               0.005\nnum_mpi_processes:              2\nconstruction_time:              0.001\n'
      for kind in bfs sssp; do
        printf '%-4s mean_time:                 0.0002\n%-4s harmonic_mean_TEPS:     !  1.5e+07\n' $kind $kind
        printf '%-4s mean_validate:             %s\n' $kind "${2:-0.0005}"
      done
    }
    roots() { for k in $(seq 0 63); do echo "Validating BFS $k"; done; for k in $(seq 0 "${1:-63}"); do echo "Validating SSSP $k"; done; }
    check() {  # check NAME STATUS EXPECTED-REASON (empty: must pass) [--skip-validation]
      local name=$1 status=$2 reason=$3
      shift 3
      python3 "$bench/report.py" check "$tmp/$name.out" "$tmp/$name.err" "$status" graph500_reference_bfs_sssp "$@" \
        >"$tmp/$name.json" 2>"$tmp/$name.why"
      local got=$?
      if [ -z "$reason" ]; then
        [ "$got" -eq 0 ] || fail "$name: judged failed ($(cat "$tmp/$name.why")), expected passed"
        grep -q '"sssp_teps":15000000.0' "$tmp/$name.json" || fail "$name: no sssp_teps in $(cat "$tmp/$name.json")"
      else
        [ "$got" -eq 1 ] || fail "$name: judged passed, expected failed with: $reason"
        grep -qF -- "$reason" "$tmp/$name.why" || fail "$name: reason '$(cat "$tmp/$name.why")', expected '$reason'"
      fi
      echo "graph500_test: $name: ${reason:-passed}"
    }
    good >"$tmp/ok.out"; roots >"$tmp/ok.err"
    check ok 0 ""
    for name in status timeout; do cp "$tmp/ok.out" "$tmp/$name.out"; cp "$tmp/ok.err" "$tmp/$name.err"; done
    check status 1 "exit status 1"
    good >"$tmp/invalid.out"; { roots; echo "Validation failed for this SSSP root; skipping rest."; } >"$tmp/invalid.err"
    check invalid 0 "the reference's validation failed: 'Validation failed'"
    echo "No results printed for invalid run." >"$tmp/noresults.out"; roots 10 >"$tmp/noresults.err"
    check noresults 0 "the reference's validation failed: 'No results printed for invalid run'"
    good 32 >"$tmp/roots.out"; roots >"$tmp/roots.err"
    check roots 0 "NBFS: got 32, expected 64"
    good >"$tmp/unvalidated.out"; roots 40 >"$tmp/unvalidated.err"
    check unvalidated 0 "sssp: validated 41 roots, expected 64"
    good 64 -1 >"$tmp/skipped.out"; : >"$tmp/skipped.err"
    check skipped 0 "bfs: validated 0 roots, expected 64"
    cp "$tmp/skipped.out" "$tmp/timing.out"; : >"$tmp/timing.err"
    check timing 0 "" --skip-validation
    : >"$tmp/empty.out"; : >"$tmp/empty.err"
    check empty 0 "no results printed (no 'NBFS:' line)"
    check timeout 124 "exit status 124 (timed out)" ;;
  usage)
    expect() {  # expect SCRIPT REGEX ARGS...: status 2 and one line matching REGEX
      local script=$1 regex=$2
      shift 2
      local output status
      output=$("$bench/$script" "$@" 2>&1)
      status=$?
      [ "$status" -eq 2 ] || fail "$script $*: exit status $status, expected 2 (output: $output)"
      [ "$(wc -l <<<"$output")" -eq 1 ] || fail "$script $*: more than one line: $output"
      grep -Eq -- "$regex" <<<"$output" || fail "$script $*: '$output' does not match '$regex'"
      echo "graph500_test: $script $*: $output"
    }
    expect run.sh "run.sh: mode: got 'check', expected build, validate or compare" check
    expect run.sh "--ranks: got '3', expected a power of two" validate --ranks 1,3
    expect run.sh "--ranks: got 'two', expected a positive integer" validate --ranks two
    expect run.sh "--builds: got 'mpi', expected aml, transit or both" validate --builds mpi
    expect run.sh "--scales: got '', expected a positive integer|--scales: got an empty range" validate --scales 12-10
    expect run.sh "--programs: got 'sssp', expected bfs, bfs_sssp or both" validate --programs sssp
    expect run.sh "--programs: got 'bfs,bfs_sssp', expected one program in compare mode" compare --programs bfs,bfs_sssp --builds aml
    expect run.sh "--mca: got 'vader', expected own or same" compare --mca vader --builds aml
    expect run.sh "--transit-prefix: got '/nonexistent', expected the prefix transit is installed in" validate --transit-prefix /nonexistent
    expect run.sh "option: got '--scale', expected one of" validate --scale 10
    expect run.sh "--repeat: expected a value after it" compare --repeat
    expect sim.sh "--ranks: got '48', expected a power of two" --ranks 48
    expect sim.sh "--calibration: got 'bgp', expected one of" --calibration bgp
    expect sim.sh "--calibration: got 'xc30', expected a calibration whose PEs per node \(12\)" --calibration xc30
    expect sim.sh "--test-cost: got '0', expected seconds per MPI_Test call" --test-cost 0
    expect sim.sh "--mode: got 'fast', expected modelled or measured" --mode fast
    expect sim.sh "--builds: got 'mpi', expected aml, transit or both" --builds aml,mpi
    expect sim.sh "--transit-sim: got '/nonexistent', expected the simulation build of transit" --transit-sim /nonexistent ;;
  *) fail "case: got '$1', expected validate, judge or usage" ;;
esac
