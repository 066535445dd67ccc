#!/usr/bin/env bash
# Graph500's reference code (BFS and SSSP, graph500/graph500 version 3), unmodified, over its own
# AML and over transit_aml, validated by the reference's own validator and timed side by side.
#
#   bench/graph500/run.sh build    [options]   fetch and build both builds, run nothing
#   bench/graph500/run.sh validate [options]   every run must pass the reference's validation
#   bench/graph500/run.sh compare  [options]   timing sittings: a markdown table of TEPS, transit/AML
#
# Options:
#   --builds LIST          aml,transit (default both): aml = the reference's Makefile with its own
#                          ../aml/aml.c; transit = the same sources against pkg-config transit-aml
#   --ranks LIST           validate: 1,2,4,8 (default); compare: 2,4,8 (default). Powers of two
#                          (the reference requires them); above the cores, --oversubscribe and
#                          OMPI_MCA_mpi_yield_when_idle=1, for both builds alike
#   --scales LIST          SCALEs, e.g. 16,17 or 16-20 (default 16: SCALE 16 took 19 s at 1 rank
#                          and 46 s at 8, bfs_sssp over AML, each SCALE about 4x the one below;
#                          the default says so when it runs, bench/graph500/README.md has the times)
#   --edgefactor N         default 16
#   --programs LIST        bfs,bfs_sssp (validate default both; compare: bfs_sssp, which times both)
#   --repeat N             compare: sittings (default 3); each sitting runs every build once per
#                          rank count, the builds alternating; the table gives medians
#   --validated            compare: validate the timing runs too (default: SKIP_VALIDATION=1, the
#                          reference's own switch; validate mode is where correctness is checked)
#   --mca own|same         compare: own (default) = each build with Open MPI's settings as it makes
#                          them: transit_aml raises the shared-memory eager limit to 32 KiB and
#                          turns off vader's emulated atomics before MPI_Init (README, "Inside your
#                          MPI program"), AML runs with Open MPI's defaults; same = both builds run
#                          with transit's settings (OMPI_MCA_btl_vader_eager_limit=32768,
#                          OMPI_MCA_btl_vader_flags=send,put,get,inplace). The table says which.
#   --timeout SECONDS      per run (default 1800); a run that takes longer fails
#   --source DIR           a clone of graph500 (checkout or bare) or a copy of its tree; default:
#                          GRAPH500_SOURCE, else git clone https://github.com/graph500/graph500 (once,
#                          into WORK); the pinned commit is always the one built
#   --transit-prefix DIR   where transit is installed (lib/pkgconfig/transit-aml.pc); default
#                          build-install (make install)
#   --work DIR             where the copy, the builds and the logs go (default build-graph500)
#
# Exit status: 0 all runs passed; 1 a run or a build failed (each failure listed); 2 bad usage;
# 3 graph500's code cannot be fetched (no network and no --source).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -ge 1 ] || { usage >&2; exit 2; }
mode=$1
shift
case $mode in
  build | validate | compare) ;;
  -h | --help) usage; exit 0 ;;
  *) g500_die 2 "mode: got '$mode', expected build, validate or compare" ;;
esac

builds=aml,transit ranks="" scales="" edgefactor=16 programs="" repeat=3 validated=0 mca=own limit=1800
source_dir=${GRAPH500_SOURCE:-} prefix=$root/build-install work=$root/build-graph500
g500_options --builds=builds --ranks=ranks --scales=scales --edgefactor=edgefactor --programs=programs \
  --repeat=repeat --validated=validated:1 --mca=mca --timeout=limit --source=source_dir \
  --transit-prefix=prefix --work=work -- "$@"

# --- checking every option before anything is built ---
builds=${builds//,/ }
for b in $builds; do
  [[ $b == aml || $b == transit ]] || g500_die 2 "--builds: got '$b', expected aml, transit or both (aml,transit)"
done
[ -n "$builds" ] || g500_die 2 "--builds: got '', expected aml, transit or both (aml,transit)"
if [ -z "$ranks" ]; then ranks=$([ "$mode" = compare ] && echo 2,4,8 || echo 1,2,4,8); fi
default_scales=0
if [ -z "$scales" ]; then scales=16; default_scales=1; fi
if [ -z "$programs" ]; then programs=$([ "$mode" = compare ] && echo bfs_sssp || echo bfs,bfs_sssp); fi
g500_lists
g500_positive --edgefactor "$edgefactor"
g500_positive --repeat "$repeat"
g500_positive --timeout "$limit"
if [ "$mode" = compare ] && [ "$(echo $programs | wc -w)" != 1 ]; then
  g500_die 2 "--programs: got '${programs// /,}', expected one program in compare mode (bfs_sssp times both BFS and SSSP)"
fi
[[ $mca == own || $mca == same ]] || g500_die 2 "--mca: got '$mca', expected own or same"
for tool in mpirun mpicc make git python3 pkg-config timeout; do
  command -v "$tool" >/dev/null || g500_die 2 "'$tool' not found (scripts/setup installs it)"
done
if [[ " $builds " == *" transit "* ]]; then
  [ -n "$(g500_pc "$prefix")" ] ||
    g500_die 2 "--transit-prefix: got '$prefix', expected the prefix transit is installed in, with lib/pkgconfig/transit-aml.pc (make install; or --builds aml)"
fi

mkdir -p "$work"
work=$(cd "$work" && pwd)
g500_fetch "$source_dir" "$work"
for b in $builds; do
  g500_build "$b" "$work" "$prefix"
  echo "built $b: $work/$b/src/{${g500_programs// /,}}"
done
[ "$mode" = build ] && exit 0

# --- running ---
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(nproc)
logs=$work/logs/$mode-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$logs"
results=$logs/results.jsonl
: >"$results"
failures=0

# one_run BUILD RANKS SCALE PROGRAM TAG: one mpirun of the reference, judged by report.py check;
# its record (with build, program and wall seconds) appended to $results.
one_run() {
  local build=$1 np=$2 scale=$3 program=graph500_reference_$4 tag=$5
  local log=$logs/$tag.$build.np$np.s$scale.$4 flags=() envs=()
  # The same launch for both builds: oversubscribed ranks yield, or the waiting ones would take
  # the cores of those they wait for.
  if (( np > cores )); then
    flags+=(--oversubscribe)
    envs+=(OMPI_MCA_mpi_yield_when_idle=1)
  fi
  if [ "$mca" = same ]; then
    envs+=(OMPI_MCA_btl_vader_eager_limit=32768 OMPI_MCA_btl_vader_flags=send,put,get,inplace)
  fi
  local check=()
  if [ "$mode" = compare ] && [ "$validated" = 0 ]; then
    envs+=(SKIP_VALIDATION=1)
    check+=(--skip-validation)
  fi
  local start status=0 seconds record
  start=$(date +%s.%N)
  env -u SKIP_VALIDATION -u SKIP_BFS -u TMPFILE "${envs[@]}" timeout "$limit" \
    mpirun "${flags[@]}" -n "$np" "$work/$build/src/$program" "$scale" "$edgefactor" \
    >"$log.out" 2>"$log.err" || status=$?
  seconds=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
  if record=$(python3 "$here/report.py" check "$log.out" "$log.err" "$status" "$program" "${check[@]}" 2>"$log.why"); then
    python3 -c "import json, sys; r = json.loads(sys.argv[1]); r.update(build=sys.argv[2], program=sys.argv[3], wall_seconds=float(sys.argv[4])); print(json.dumps(r))" \
      "$record" "$build" "$4" "$seconds" >>"$results"
    printf 'ok    %-7s ranks %d  SCALE %2d  %-8s %7.1f s  %s\n' "$build" "$np" "$scale" "$4" "$seconds" \
      "$(python3 -c "import json, sys; r = json.loads(sys.argv[1]); print(' '.join(f'{k} {r[k]:.4g}' for k in ('bfs_teps', 'sssp_teps', 'construction_time') if k in r))" "$record")"
  else
    failures=$((failures + 1))
    printf 'FAIL  %-7s ranks %d  SCALE %2d  %-8s %7.1f s  %s (logs: %s.{out,err})\n' "$build" "$np" "$scale" "$4" "$seconds" \
      "$(cat "$log.why")" "$log"
  fi
}
here=$root/bench/graph500

if [ "$default_scales" = 1 ]; then
  echo "# SCALE 17-20 not run: the default is --scales 16 (each SCALE takes about 4x the one below; --scales 16-20 runs them all)"
fi
echo "# graph500 reference, $mode: builds $builds; ranks $ranks; SCALE $scales; edge factor $edgefactor; $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $cores cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$mode" = validate ]; then
  for scale in $scales; do
    for np in $ranks; do
      for program in $programs; do
        for build in $builds; do one_run "$build" "$np" "$scale" "$program" validate; done
      done
    done
  done
else
  for sitting in $(seq "$repeat"); do
    for np in $ranks; do
      for scale in $scales; do
        # Alternating which build goes first, so that neither always runs on a warmer machine.
        order=$builds
        (( sitting % 2 == 0 )) && order=$(echo "$builds" | tr ' ' '\n' | tac | tr '\n' ' ')
        for build in $order; do one_run "$build" "$np" "$scale" "$programs" "sitting$sitting"; done
      done
    done
  done
  echo
  for scale in $scales; do
    python3 -c "import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r['scale'] == int(sys.argv[2]): print(line, end='')" "$results" "$scale" >"$logs/scale$scale.jsonl"
    python3 "$here/report.py" table "$logs/scale$scale.jsonl" --title \
      "graph500 reference ($programs), SCALE $scale, edge factor $edgefactor, medians of $repeat sittings, $([ "$validated" = 1 ] && echo validated || echo SKIP_VALIDATION), Open MPI settings: $([ "$mca" = same ] && echo "transit's for both (--mca same)" || echo "each build's own (--mca own)")" ||
      failures=$((failures + 1))
    echo
  done
fi
echo "# results: $results"
if (( failures > 0 )); then
  echo "$g500_me: $failures run(s) failed (listed above)" >&2
  exit 1
fi
