#!/usr/bin/env bash
# bench/sim/model.sh [PARTS]: `transit model`'s predicted ordering of grids against the simulated
# ordering (issue "transit at scale, part 2", "Done when": rank correlation at 512 and 4096 ranks).
# Streaming all-to-all (`transit bench alltoall`) of 32-byte items, as bench/sim/grids.sh runs it:
# modelled mode, bgq calibration, BG/Q-like 5-D tori with 16 PEs per node, grids that merge torus
# dimensions as thesis table 4.1 does plus balanced ones.
#
# PARTS (default "p512 p4096 model"):
#   p512   32 nodes (torus:2x2x2x2x2:16, 512 ranks), 16 KiB buffers (--buffer-items 512), grids
#          32x16 16x32 8x8x8 8x4x16 4x2x4x16 4x2x4x4x4 2x2x2x2x2x16, 32 B, 128 B and 512 B per
#          destination (items per PE = ranks x bytes per destination / 32).
#   p4096  256 nodes (torus:4x4x4x2x2:16, 4096 ranks) under `flock /tmp/transit-sim-big.lock`,
#          4 KiB buffers (--buffer-items 128: 16 KiB buffers on the 2-D grid's 270 links would be
#          4.4 MB a PE, 18 GB for the job), grids 256x16 64x4x16 16x16x16 16x4x4x16 4x4x4x2x2x16,
#          32 B then 128 B per destination. MODEL_GRIDS4096 and MODEL_BYTES4096 override.
#   model  `transit model alltoall` for the same grids and sizes: the machine given as in the
#          simulation (--transit-pes N --transit-pes-force --transit-pes-per-node 16
#          --transit-physical SPEC on the local backend: the model only needs the machine, no MPI)
#          and the costs from the calibration (--calibration scripts/calibrations/bgq.json: alpha =
#          2 x seconds_per_message, per-item cost = 2 x seconds_per_item, beta from the links; one
#          PE per core, as each simulated rank owns a core), only the simulated grids (--grids).
#          Each size twice: with the torus's links (model "links") and without --transit-physical
#          (model "flush": links not modelled, the fill-and-flush term as before 2026-11-27).
#   grids  the model (both versions) for the points of bench/sim/grids.sh's parts dims8, dims32 and
#          dims64 that p512 and p4096 do not simulate (8 nodes: direct and 4 grids, 32 B to 2 KiB per
#          destination; 32 nodes at 2 KiB; 64 nodes at 32 B), and of its part ratio (the same machine
#          at the XE6's (o_s + o_d) / o_a = 5.5: 30 points): joined with that script's records, a
#          check of the links term on 55 points it was not fitted to. Not run by default.
#
# Prints one JSON line per run on stdout: simulated runs are bench records (seconds = the
# all-to-all's simulated time) with part, label, ranks, grid, bytes_per_destination, rss_mb added;
# model lines are `transit model --json` records (kind "model", predicted_seconds) with part
# "model", model, bytes_per_destination and grid added. Part `join` (alone: `bench/sim/model.sh
# join < all.jsonl > plot.jsonl`) reads those lines on stdin, prints Spearman's rank correlation
# and the range of predicted / simulated per (ranks, size) and overall on stderr, and one plot
# record per (ranks, grid, size, model) on stdout: simulated_ms, predicted_ms and model "links"
# (the model now), "flush" (2026-11-26 to 27) or "before" (a forwarding PE charged a whole
# per-item cost, as before 2026-11-26, reconstructed from the flush record's average_hops). SMPI's chatter goes to $MODEL_LOG
# (default /dev/null). Every simulation has a timeout (MODEL_TIMEOUT, default 1500 s).
# Needs `make build sim`.
set -euo pipefail
parts=" ${1:-p512 p4096 model} "
if [ "$parts" = " join " ]; then
  exec python3 -c '
import json, sys
def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i]); r = [0] * len(v)
    for k, i in enumerate(order): r[i] = k + 1
    return r
def spearman(a, b):
    ra, rb = ranks(a), ranks(b); m = (len(a) + 1) / 2
    return sum((x - m) * (y - m) for x, y in zip(ra, rb)) / sum((x - m) ** 2 for x in ra)
sim, model = {}, {}
names = ("before", "flush", "links")
for line in sys.stdin:
    if not line.startswith("{"): continue
    r = json.loads(line)
    key = (r.get("pes"), r.get("grid"), int(float(r.get("bytes_per_destination", 0))), round(float(r.get("ratio", 24.3)), 1))
    if r.get("kind") == "model":
        m = model.setdefault(key, {})
        if r.get("model", "flush") == "flush":
            c = 2 * 2.96e-7 + 24 * 0.5e-9   # bgq: per_item + (32 - 8) beta
            m["flush"] = r["predicted_seconds"]
            m["before"] = r["predicted_seconds"] + r["items_per_pe"] * c * (r["average_hops"] - 1) / 2
        else:
            m["links"] = r["predicted_seconds"]
    elif r.get("verified"):
        sim[key] = r["seconds"]
both = sorted(k for k in model if k in sim and all(n in model[k] for n in names))
for group in sorted({(k[0], k[2], k[3]) for k in both}) + [None]:
    ks = [k for k in both if group is None or (k[0], k[2], k[3]) == group]
    if len(ks) < 2: continue
    s = [sim[k] for k in ks]
    ratios = lambda n: [model[k][n] / sim[k] for k in ks]
    print("%s: %d grids, Spearman %s; predicted / simulated %s" % (group or "overall", len(ks),
        " ".join("%s %.3f" % (n, spearman([model[k][n] for k in ks], s)) for n in names),
        " ".join("%s %.2f-%.2f" % (n, min(ratios(n)), max(ratios(n))) for n in names)), file=sys.stderr)
for k in both:
    for name in names:
        print(json.dumps({"ranks": k[0], "grid": k[1], "bytes_per_destination": k[2], "ratio": k[3],
                          "simulated_ms": sim[k] * 1e3, "predicted_ms": model[k][name] * 1e3, "model": name}))
'
fi
source "$(dirname "$0")/lib.sh"  # after join, which execs: lib.sh's temporary directory would stay
sim_log=${MODEL_LOG:-/dev/null}
limit=${MODEL_TIMEOUT:-1500}

grids512="32x16 16x32 8x8x8 8x4x16 4x2x4x16 4x2x4x4x4 2x2x2x2x2x16"
bytes512="32 128 512"
grids4096=${MODEL_GRIDS4096:-"256x16 64x4x16 16x16x16 16x4x4x16 4x4x4x2x2x16"}
bytes4096=${MODEL_BYTES4096:-"32 128"}

# sim PART SPEC RANKS BUFFER GRID BYTES: one simulated all-to-all (4096 ranks: under the big lock)
sim() {
  local part=$1 spec=$2 ranks=$3 buffer=$4 grid=$5 bpd=$6 items=$(($3 * $6 / 32))
  sim_run --lock-big --timeout "$limit" -- --platform "$spec" --ranks "$ranks" --calibration bgq --mode modelled -- \
    bench alltoall --item-bytes 32 --buffer-items "$buffer" --grid "$grid" --items-per-pe "$items"
  sim_record part="$part" label="$ranks.$grid.$bpd" grid="$grid" bytes_per_destination="$bpd" || true
}

# predict RANKS SPEC BUFFER GRIDS BYTES [CALIBRATION RATIO]: transit model for the simulated grids
# at one size, twice: with the machine's links (--transit-physical: model "links") and without them
# (nodes of 16 PEs one switch apart, links not modelled: model "flush", the fill-and-flush term
# instead); CALIBRATION defaults to bgq's, RATIO ((o_s + o_d) / o_a, a label) to 24.3
predict() {
  local ranks=$1 spec=$2 buffer=$3 grids=$4 bpd=$5 model physical
  local calibration=${6:-$root/scripts/calibrations/bgq.json} ratio=${7:-24.3}
  for model in links flush; do
    physical=()
    [ "$model" = links ] && physical=(--transit-physical="$spec")
    "$tool" model alltoall --transit-backend=local --transit-pes="$ranks" --transit-pes-force \
      --transit-pes-per-node=16 "${physical[@]}" --item-bytes 32 --buffer-items "$buffer" \
      --items-per-pe $((ranks * bpd / 32)) --calibration "$calibration" \
      --grids "${grids// /,}" --json 2>>"$sim_log" |
      python3 -c '
import json, sys
bpd, model, ratio = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
for line in sys.stdin:
    if line.startswith("{"):
        r = json.loads(line)
        r.update({"part": "model", "bytes_per_destination": bpd, "ranks": r["pes"], "model": model, "ratio": ratio})
        print(json.dumps(r, separators=(",", ":")), flush=True)
' "$bpd" "$model" "$ratio"
  done
}

if part p512; then
  for bpd in $bytes512; do
    for g in $grids512; do sim p512 torus:2x2x2x2x2:16 512 512 "$g" "$bpd"; done
  done
fi
if part p4096; then
  for bpd in $bytes4096; do
    for g in $grids4096; do sim p4096 torus:4x4x4x2x2:16 4096 128 "$g" "$bpd"; done
  done
fi
if part grids; then  # as bench/sim/grids.sh runs them: 16 KiB buffers
  grids8="direct 8x16 4x2x16 2x2x2x16 2x2x2x4x4"
  for bpd in 32 128 512 2048; do predict 128 torus:2x2x2:16 512 "$grids8" "$bpd"; done
  predict 512 torus:2x2x2x2x2:16 512 "32x16 8x4x16" 2048
  predict 1024 torus:2x2x4x2x2:16 512 "64x16 16x4x16 2x2x4x2x2x16" 32
  # part ratio's calibration: bgq with seconds_per_message = 8.14e-7, (o_s + o_d) / o_a = 5.5
  xe6=$workdir/bgq-ratio-5.5.json
  python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c["parameters"]["seconds_per_message"]["value"] = 8.14e-7; json.dump(c, open(sys.argv[2], "w"))' \
    "$root/scripts/calibrations/bgq.json" "$xe6"
  for bpd in 32 128 512 2048; do predict 128 torus:2x2x2:16 512 "$grids8" "$bpd" "$xe6" 5.5; done
  for bpd in 32 512; do
    predict 512 torus:2x2x2x2x2:16 512 "32x16 8x4x16 4x2x4x16 2x2x2x2x2x16" "$bpd" "$xe6" 5.5
  done
  predict 1024 torus:2x2x4x2x2:16 512 "64x16 16x4x16" 32 "$xe6" 5.5
fi
if part model; then
  for bpd in $bytes512; do predict 512 torus:2x2x2x2x2:16 512 "$grids512" "$bpd"; done
  for bpd in $bytes4096; do predict 4096 torus:4x4x4x2x2:16 128 "$grids4096" "$bpd"; done
fi
