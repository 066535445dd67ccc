#!/usr/bin/env bash
# progress_cli.sh CASE TRANSIT: the progress line of bench, calibrate, model and map
# (tools/transit/progress.hpp) from the command line.
#   piped   stdout and stderr are pipes: no line, no '\r' anywhere, nothing on stderr, and
#           model's (deterministic) output byte for byte the same as with --quiet
#   pty     on a terminal (script(1)): the line is drawn with '\r' and erased before the records;
#           --quiet draws none
#   lines   TRANSIT_PROGRESS=lines (scripts/simulate): whole lines on stderr, stdout unchanged
set -u
case_name=$1
cli=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "progress_cli $case_name: $*"; exit 1; }
export TRANSIT_PROFILE=$tmp/no-profile.json
unset TRANSIT_PROGRESS

has_cr() { LC_ALL=C grep -q $'\r' "$1"; }

case $case_name in
piped)
  runs=(
    "bench histogram --items-per-pe 20000 --repeat 3 --transit-pes=2"
    "calibrate streamer --max-bytes 256 --seconds-per-point 0.001 --profile $tmp/p.json --transit-pes=2"
    "calibrate protocols --max-region-bytes 64 --max-regions 4 --iterations 1 --dry-run --transit-pes=2"
    "model histogram --measure --items-per-pe 5000 --transit-pes=4"
    "map --pattern stencil2d --size 16x16 --physical torus:4x4:1"
  )
  for run in "${runs[@]}"; do
    # shellcheck disable=SC2086
    "$cli" $run > "$tmp/out" 2> "$tmp/err" || fail "'$run' failed: $(cat "$tmp/err")"
    [ -s "$tmp/out" ] || fail "'$run' printed nothing"
    if has_cr "$tmp/out" || has_cr "$tmp/err"; then fail "'$run' wrote a carriage return into a pipe"; fi
    [ -s "$tmp/err" ] && fail "'$run' wrote on stderr: $(cat "$tmp/err")"
  done
  "$cli" model histogram --transit-pes=4 > "$tmp/plain" 2>&1 || fail "model failed"
  "$cli" model histogram --quiet --transit-pes=4 > "$tmp/quiet" 2>&1 || fail "model --quiet failed"
  cmp "$tmp/plain" "$tmp/quiet" || fail "model's piped output differs from --quiet's"
  ;;
pty)
  command -v script > /dev/null || { echo "no script(1): skipped"; exit 77; }
  run="$cli bench histogram --items-per-pe 20000 --repeat 2 --transit-pes=2"
  script -q -e -c "$run" /dev/null > "$tmp/tty" < /dev/null || fail "bench on a terminal failed: $(cat "$tmp/tty")"
  LC_ALL=C grep -q $'\rbench histogram: run 1/2, ' "$tmp/tty" || fail "no progress line on a terminal: $(cat -A "$tmp/tty")"
  # Erased (spaces, then '\r') right before each record line.
  LC_ALL=C grep -q $' \rhistogram  local 2 PEs' "$tmp/tty" || fail "the line was not erased before the record: $(cat -A "$tmp/tty")"
  [ "$(grep -c 'verified' "$tmp/tty")" -eq 2 ] || fail "expected two records: $(cat -A "$tmp/tty")"
  script -q -e -c "$run --quiet" /dev/null > "$tmp/quiet" < /dev/null || fail "bench --quiet failed"
  # The terminal ends lines with \r\n; any other \r is a progress line.
  LC_ALL=C grep -q $'\r[^\n]' <(sed 's/\r$//' "$tmp/quiet") && fail "--quiet drew a line: $(cat -A "$tmp/quiet")"
  ;;
lines)
  TRANSIT_PROGRESS=lines "$cli" bench histogram --items-per-pe 20000 --repeat 2 --transit-pes=2 > "$tmp/out" 2> "$tmp/err" ||
    fail "bench failed"
  grep -q '^transit progress: bench histogram: run 1/2, ' "$tmp/err" || fail "no progress line: $(cat "$tmp/err")"
  if has_cr "$tmp/err" || has_cr "$tmp/out"; then fail "a carriage return in lines mode"; fi
  [ "$(grep -c 'verified' "$tmp/out")" -eq 2 ] || fail "expected two records on stdout: $(cat "$tmp/out")"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "progress_cli $case_name: passed"
