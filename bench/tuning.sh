#!/usr/bin/env bash
# bench/tuning.sh [TRANSIT] [REPEATS]: every number of the issue 13 bar (calibration, the cost
# model, tuning, the per-message cost) in one sitting, so that the ratios compare runs made minutes
# apart on the same (shared, noisy) machine. Variants are interleaved run by run (A B A B ...),
# and medians of REPEATS runs are compared. Prints one line per bar and keeps every JSON record in
# $TUNING_LOG (default /tmp/transit-tuning.jsonl). The profile is calibrated afresh in
# $TRANSIT_PROFILE (default /tmp/transit-tuning-profile.json).
#
# Bars (BENCHMARKS.md): --scheme none >= 0.8x --scheme mpi-raw (2 MPI ranks); buffer_items = 0
# after calibration within 10% of the best fixed buffer in {256, 1024, 4096, 16384} for histogram,
# alltoall and phold (2 MPI ranks, and 8 local PEs in nodes of 4); --tune within 10% of the best
# fixed (grid, buffer) within 25 steps; the model's grid order against the measured one for
# alltoall at 8 and 16 local PEs (Spearman's rank correlation).
#
# A subset: TUNING_PARTS (default "calibrate none buffers tune model"), TUNING_KERNELS (default
# "histogram alltoall phold"), TUNING_WHERE (default "mpi local8"); e.g. TUNING_PARTS="calibrate
# buffers" TUNING_KERNELS=phold. Without "calibrate" the profile in $TRANSIT_PROFILE is used as is.
set -euo pipefail
transit=${1:-build-bench/bin/transit}
repeats=${2:-5}
parts=" ${TUNING_PARTS:-calibrate none buffers tune model} "
kernels=${TUNING_KERNELS:-histogram alltoall phold}
wheres=${TUNING_WHERE:-mpi local8}
part() { [[ $parts == *" $1 "* ]]; }
log=${TUNING_LOG:-/tmp/transit-tuning.jsonl}
rates=$(mktemp -d)  # one file of rates per variant, this run's own (another may run beside it)
trap 'rm -rf "$rates"' EXIT
export TRANSIT_PROFILE=${TRANSIT_PROFILE:-/tmp/transit-tuning-profile.json}
: >"$log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
# The single-copy mechanism is left to the profile (calibration chooses it below).
unset OMPI_MCA_btl_vader_single_copy_mechanism TRANSIT_SINGLE_COPY
mpi=(mpirun -n 2)
local8=(--transit-backend=local --transit-pes=8 --transit-pes-per-node=4)

# field FIELD: FIELD of every JSON record on stdin, one per line
field() {
  python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        v = json.loads(line).get(sys.argv[1])
        print("nan" if v is None else v)' "$1"
}
# median: of the numbers on stdin
median() { python3 -c 'import statistics, sys; print(f"{statistics.median(float(x) for x in sys.stdin.read().split()):.6g}")'; }
ratio() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f'{a / b:.3f}' if b else 'nan')" "$1" "$2"; }

# rate_of LABEL FIELD -- COMMAND...: one run, FIELD appended to $rates/LABEL, record to the log
rate_of() {
  local label=$1 f=$2
  shift 3
  local out
  out=$("$@" --json)
  printf '%s\n' "$out" >>"$log"
  if grep -q '"verified":false' <<<"$out"; then echo "$label: VERIFICATION FAILED" >&2; fi
  field "$f" <<<"$out" | tail -1 >>"$rates/$label"
}

# interleave LAUNCHER KERNEL FIELD COMMON: runs every variant (given as 'label|args' lines on stdin)
# REPEATS times in turn, on LAUNCHER (mpi: 2 ranks; local8: 8 local PEs in nodes of 4), with the
# bench options COMMON; prints "label median-of-FIELD" lines
interleave() {
  local launcher=$1 kernel=$2 f=$3 common=$4
  local -a variants=()
  while IFS= read -r line; do [ -n "$line" ] && variants+=("$line"); done
  for v in "${variants[@]}"; do rm -f "$rates/${v%%|*}"; done
  for _ in $(seq "$repeats"); do
    for v in "${variants[@]}"; do
      local label=${v%%|*} args=${v#*|}
      # shellcheck disable=SC2086
      if [ "$launcher" = mpi ]; then
        rate_of "$label" "$f" -- "${mpi[@]}" "$transit" bench "$kernel" $common $args
      else
        rate_of "$label" "$f" -- "$transit" bench "$kernel" $common $args "${local8[@]}"
      fi
    done
  done
  for v in "${variants[@]}"; do
    printf '%s %s\n' "${v%%|*}" "$(median <"$rates/${v%%|*}")"
  done
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
     "$(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "profile: $TRANSIT_PROFILE"

# ---- calibration: the mpi backend twice (one single-copy mechanism per run), local 8 in nodes of 4
if part calibrate; then
  rm -f "$TRANSIT_PROFILE"
  "${mpi[@]}" "$transit" calibrate streamer --json >>"$log"
  "${mpi[@]}" "$transit" calibrate streamer --json >>"$log"
  "$transit" calibrate streamer --json "${local8[@]}" >>"$log"
fi
"$transit" info "${local8[@]}" | grep -E '^(profile|buffer_items|costs)'
"${mpi[@]}" "$transit" info | grep -E '^(profile|buffer_items|costs|single-copy)'

# ---- 1. per-message cost: --scheme none against --scheme mpi-raw, 2 MPI ranks
if part none; then
echo
echo "== per-message cost (2 MPI ranks; items/s/PE, medians of $repeats, interleaved)"
for kernel in histogram alltoall; do
  result=$(printf '%s\n' "none|--scheme none" "raw|--scheme mpi-raw" |
           interleave mpi "$kernel" items_per_second_per_pe "--items-per-pe 1000000")
  none=$(awk '$1 == "none" {print $2}' <<<"$result")
  raw=$(awk '$1 == "raw" {print $2}' <<<"$result")
  printf '%-10s none %-10s mpi-raw %-10s none/mpi-raw = %s   (bar >= 0.8)\n' "$kernel" "$none" "$raw" "$(ratio "$none" "$raw")"
done
fi

# ---- 2. buffer_items = 0 against the best fixed buffer
if part buffers; then
echo
echo "== buffer_items = 0 after calibration against the best of {256, 1024, 4096, 16384} (items/s/PE)"
for where in $wheres; do
  for kernel in $kernels; do
    common="--items-per-pe 1000000"
    [ "$kernel" = phold ] && common="--items-per-pe 500000"
    [ "$where" = local8 ] && common="--items-per-pe 250000"
    result=$(printf '%s\n' "G256|--buffer-items 256" "G1024|--buffer-items 1024" "G4096|--buffer-items 4096" \
                            "G16384|--buffer-items 16384" "auto|--buffer-items 0" |
             interleave "$where" "$kernel" items_per_second_per_pe "$common")
    best=$(grep -v '^auto' <<<"$result" | sort -k2 -g | tail -1)
    auto=$(awk '$1 == "auto" {print $2}' <<<"$result")
    auto_items=$(grep "\"kernel\":\"$kernel\"" "$log" | grep '"automatic_buffer":true' | tail -1 | field buffer_items)
    printf '%-6s %-10s auto (G=%s) %-10s best fixed %-18s auto/best = %s   (bar >= 0.9)   [%s]\n' "$where" "$kernel" \
      "$auto_items" "$auto" "$best" "$(ratio "$auto" "${best#* }")" "$(tr '\n' ' ' <<<"$result")"
  done
done
fi

# ---- 3. --tune against the best fixed (grid, buffer) over the same candidate grids
if part tune; then
echo
echo "== --tune (30 steps) against the best fixed (grid, buffer); rates of steps 15-29 (tuned: settled by then)"
for where in $wheres; do
  for kernel in $kernels; do
    # 200000 items per PE a step on both backends: at 50000, a local step of 8 PEs lasted about
    # 1 ms, a fraction of the scheduler's 4 ms tick for 8 threads on 2 cores, and step times
    # measured scheduling more than configurations.
    per_step=200000
    [ "$kernel" = phold ] && per_step=$((per_step / 2))
    if [ "$where" = mpi ]; then launch=("${mpi[@]}" "$transit"); extra=(); else launch=("$transit"); extra=("${local8[@]}"); fi
    grids=$("${launch[@]}" model "$kernel" --items-per-pe "$per_step" --json "${extra[@]}" |
            python3 -c 'import json, sys
for line in sys.stdin:
    r = json.loads(line)
    scheme = "grid" if r["routing"] == "grid" else r["routing"]
    print(scheme + "," + r["grid"])')
    variants=()
    for g in $grids; do
      for b in 256 1024 4096 16384; do variants+=("${g}_$b|--scheme ${g%%,*} --grid ${g#*,} --buffer-items $b --steps 30"); done
    done
    # Fixed and tuned runs are rated alike, over steps 15-29 of 30: a local job speeds up over its
    # first ~100 ms (steps of 6-8 ms become 3 ms), and a tuned run explores until about step 13.
    fixed=$(printf '%s\n' "${variants[@]}" | interleave "$where" "$kernel" second_half_items_per_second_per_pe "--items-per-pe $per_step")
    best=$(sort -k2 -g <<<"$fixed" | tail -1)
    # --online-tune: mpirun takes --tune FILE for itself (Open MPI), even after the program.
    tuned=$(printf '%s\n' "tuned|--online-tune --steps 30" |
            interleave "$where" "$kernel" second_half_items_per_second_per_pe "--items-per-pe $per_step")
    record=$(grep "\"kernel\":\"$kernel\"" "$log" | grep '"tuning"' | tail -1)
    settled=$(field settled_step <<<"$record")
    final=$(python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(r["final_routing"], r["final_grid"], r["final_buffer_items"])' <<<"$record")
    late=""
    { [ "$settled" = null ] || [ "$settled" -gt 15 ]; } && late="  NOT settled by step 15: steps 15-29 include exploring"
    printf '%-6s %-10s tuned %-10s (settled at step %s on %s) best fixed %-28s tuned/best = %s   (bar >= 0.9)%s\n' \
      "$where" "$kernel" "${tuned#* }" "$settled" "$final" "$best" "$(ratio "${tuned#* }" "${best#* }")" "$late"
  done
done
fi

# ---- 4. the model's grid order against the measured one: alltoall at 8 and 16 local PEs
part model || exit 0
echo
echo "== model against measurement, alltoall (Spearman rank correlation of times over the candidate grids)"
for pes in 8 16; do
  # A million items per PE: a run of 262144 lasted 10-20 ms at 8 PEs, a few of the scheduler's
  # time slices for 8 threads on 2 cores, and its grids' order was mostly that jitter. Runs of
  # every grid are interleaved (transit model does), medians of 2 x REPEATS + 1.
  out=$("$transit" model alltoall --measure --repeat $((2 * repeats + 1)) --items-per-pe 1048576 --json \
        --transit-backend=local --transit-pes=$pes --transit-pes-per-node=4 --transit-pes-force)
  printf '%s\n' "$out" >>"$log"
  printf 'local %2d PEs: rank correlation %s over %s grids\n' "$pes" \
    "$(grep model_summary <<<"$out" | field rank_correlation)" "$(grep model_summary <<<"$out" | field candidates)"
  python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r.get("kind") == "model":
        print("   %19s %8s  predicted %.4f s  measured %.4f s  messages %s / %s" % (r["routing"], r["grid"],
              r["predicted_seconds"], r["measured_seconds"], r["predicted_messages"], r["measured_messages"]))' <<<"$out"
done
