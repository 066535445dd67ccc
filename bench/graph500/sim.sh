#!/usr/bin/env bash
# Graph500's reference code on a simulated machine (SimGrid's SMPI), built with smpicc over its own
# AML and over transit_aml (the simulation build of transit, `make sim`), on a platform written by
# transit's own `transit platform` from a calibration of scripts/simulate; timed in simulated
# seconds (the reference's TEPS) and in real seconds.
#
#   bench/graph500/sim.sh [options]
#
# Options:
#   --builds LIST         aml, transit or both (default aml,transit): the reference over its own
#                         AML, and over transit_aml; both on the same machine, charged the same per
#                         MPI message (sim_config.py says how)
#   --transit-sim DIR     the simulation build of transit (default build-sim, made by `make sim`)
#   --ranks LIST          simulated ranks, powers of two (default 64)
#   --scales LIST         SCALEs (default 10), e.g. 10,12 or 10-12; edge factor 16
#   --programs LIST       bfs, bfs_sssp or both (default bfs; bfs_sssp runs BFS and then SSSP)
#   --platform SPEC       the machine as scripts/simulate takes it (e.g. torus:4x4:4); default auto:
#                         a torus of the calibration's PEs per node, as near a cube as it goes
#   --calibration NAME    scripts/calibrations/NAME.json (default bgq)
#   --mode MODE           modelled (default: message overheads from the calibration, the host's
#                         CPU not timed) or measured (the host's CPU time, on the modelled cores)
#   --test-cost SECONDS   simulated cost of each failed MPI_Test/MPI_Testany (default 1e-5: AML
#                         polls, every rank every SECONDS while it waits, so real time grows as it
#                         shrinks; docs/simulation.md, "Graph500's reference under SMPI")
#   --skip-validation     timing runs: SKIP_VALIDATION=1, the reference's own switch (default:
#                         every run validated, as run.sh validate judges it)
#   --timeout SECONDS     real seconds per simulation (default 3600); longer is a failure
#   --source DIR, --work DIR   as run.sh (default work: build-graph500)
#   --transit-tool PATH   the normal build's transit, which writes platforms (default build/bin/transit
#                         or TRANSIT_TOOL)
#
# Prints one line per run (simulated and real seconds, TEPS) and writes every run's record to
# WORK/logs/sim-DATE/results.jsonl. Exit status: 0 all runs passed; 1 a run failed; 2 bad usage;
# 3 graph500's code cannot be fetched.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here=$root/bench/graph500

builds="aml,transit" transit_sim=$root/build-sim ranks=64 scales=10 programs=bfs platform=auto calibration=bgq mode=modelled test_cost=1e-5
validated=1 limit=3600 source_dir=${GRAPH500_SOURCE:-} work=$root/build-graph500
tool=${TRANSIT_TOOL:-$root/build/bin/transit}
g500_options --builds=builds --transit-sim=transit_sim --ranks=ranks --scales=scales --programs=programs --platform=platform --calibration=calibration \
  --mode=mode --test-cost=test_cost --skip-validation=validated:0 --timeout=limit --source=source_dir \
  --work=work --transit-tool=tool -- "$@"

g500_lists
builds=${builds//,/ }
for b in $builds; do
  [[ $b == aml || $b == transit ]] || g500_die 2 "--builds: got '$b', expected aml, transit or both (aml,transit)"
done
g500_positive --timeout "$limit"
[ -x "$tool" ] || g500_die 2 "--transit-tool: got '$tool', expected the normal build's transit (cmake --build build --target transit_cli), which writes the platform"
for t in smpirun smpicc python3 make timeout; do
  command -v "$t" >/dev/null || g500_die 2 "'$t' not found (scripts/setup installs SimGrid's libsimgrid-dev)"
done
# Every rank count's machine and settings, checked before anything is built.
declare -A spec transit_args cfg transit_cfg transit_env
for r in $ranks; do
  config=$(python3 "$here/sim_config.py" "$calibration" "$r" "$platform" "$mode" "$test_cost") || exit 2
  spec[$r]=$(sed -n 1p <<<"$config")
  transit_args[$r]=$(sed -n 2p <<<"$config")
  cfg[$r]=$(sed -n 3p <<<"$config")
  transit_cfg[$r]=$(sed -n 4p <<<"$config" | cut -f1)
  transit_env[$r]=$(sed -n 4p <<<"$config" | cut -f2)
done
if [[ " $builds " == *" transit "* ]]; then
  [ -f "$transit_sim/bindings/aml/libtransit_aml.so" ] ||
    g500_die 2 "--transit-sim: got '$transit_sim', expected the simulation build of transit with its bindings/aml/libtransit_aml.so (make sim)"
  transit_sim=$(cd "$transit_sim" && pwd)
fi

mkdir -p "$work"
work=$(cd "$work" && pwd)
g500_fetch "$source_dir" "$work"
for b in $builds; do
  if [ "$b" = aml ]; then g500_build smpi "$work"; else g500_build smpi-transit "$work" "$transit_sim"; fi
done
logs=$work/logs/sim-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$logs"
results=$logs/results.jsonl
: >"$results"
failures=0
echo "# graph500 reference under SMPI, builds $builds: calibration $calibration, $mode, MPI_Test $test_cost s, $([ $validated = 1 ] && echo validated || echo SKIP_VALIDATION); $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $ranks; do
  # shellcheck disable=SC2086  # the options are words
  if ! "$tool" platform --physical "${spec[$r]}" --pes "$r" --platform "$logs/platform$r.xml" --hostfile "$logs/hosts$r" \
      ${transit_args[$r]} 2>"$logs/platform$r.err"; then
    g500_die 2 "--platform: $(tail -n 1 "$logs/platform$r.err" | sed 's/^transit: error: //')"
  fi
  for scale in $scales; do
    for program in $programs; do
      for build in $builds; do
        log=$logs/$build.np$r.s$scale.$program
        check=()
        if [ "$build" = aml ]; then
          envs=(GRAPH500_SIM_TEST_COST=$test_cost) settings=${cfg[$r]} dir=smpi args=()
        else
          # shellcheck disable=SC2206  # NAME=VALUE words
          envs=(${transit_env[$r]}) settings=${transit_cfg[$r]} dir=smpi-transit
          args=(--transit-physical="${spec[$r]}")  # the machine transit routes over; aml_init takes it out of argv
        fi
        if [ "$validated" = 0 ]; then envs+=(SKIP_VALIDATION=1); check+=(--skip-validation); fi
        start=$(date +%s.%N)
        status=0
        # shellcheck disable=SC2086
        env -u SKIP_VALIDATION -u SKIP_BFS -u TMPFILE "${envs[@]}" timeout "$limit" \
          smpirun -np "$r" -platform "$logs/platform$r.xml" -hostfile "$logs/hosts$r" $settings \
          "$work/$dir/src/graph500_reference_$program" "${args[@]}" "$scale" 16 >"$log.out" 2>"$log.err" || status=$?
        real=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
        simulated=$(sed -n 's/.*Simulated time: \([0-9.eE+-]*\) seconds.*/\1/p' "$log.err" | tail -n 1)
        if record=$(python3 "$here/report.py" check "$log.out" "$log.err" "$status" "graph500_reference_$program" "${check[@]}" 2>"$log.why"); then
          record=$(python3 -c "import json, sys
r = json.loads(sys.argv[1])
r.update(build=sys.argv[9], program=sys.argv[2], platform=sys.argv[3], calibration=sys.argv[4], mode=sys.argv[5],
           test_cost=float(sys.argv[6]), simulated_seconds=float(sys.argv[7]), wall_seconds=float(sys.argv[8]))
print(json.dumps(r))" "$record" "$program" "${spec[$r]}" "$calibration" "$mode" "$test_cost" "${simulated:-nan}" "$real" "$build")
          echo "$record" >>"$results"
          printf 'ok    %-7s ranks %4d  %-16s SCALE %2d  %-8s simulated %8.4f s  real %7.1f s  %s\n' "$build" "$r" "${spec[$r]}" "$scale" \
            "$program" "$simulated" "$real" "$(python3 -c "import json, sys; r = json.loads(sys.argv[1]); print(' '.join(f'{k} {r[k]:.4g}' for k in ('bfs_teps', 'sssp_teps', 'construction_time') if k in r))" "$record")"
        else
          failures=$((failures + 1))
          printf 'FAIL  %-7s ranks %4d  %-16s SCALE %2d  %-8s real %7.1f s  %s (logs: %s.{out,err})\n' "$build" "$r" "${spec[$r]}" "$scale" \
            "$program" "$real" "$(cat "$log.why")" "$log"
        fi
      done
    done
  done
done
echo "# results: $results"
if (( failures > 0 )); then
  echo "$g500_me: $failures run(s) failed (listed above)" >&2
  exit 1
fi
