# bench/graph500/lib.sh: what run.sh and sim.sh share, sourced by each. It fetches graph500's
# reference code at the pinned commit (the code never enters this repository) and builds its two
# programs, graph500_reference_bfs and graph500_reference_bfs_sssp, with the reference's own
# src/Makefile:
#   aml      its own ../aml/aml.c (the Makefile as it is);
#   transit  the same sources without aml.c and -I../aml, against `pkg-config transit-aml`;
#   smpi     as aml, with SimGrid's smpicc (simulated runs, sim.sh);
#   smpi-transit  as transit, with smpicc, against the simulation build of transit_aml (sim.sh).
# Recent GCC needs -fcommon (the reference defines globals in a header).
# Sets root (this source tree) and defines g500_die, g500_fetch and g500_build.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
g500_url=https://github.com/graph500/graph500
g500_commit=f89d643ce4aaae9a823d310c6ab2dd10e3d2982c  # master of 2020 (version 3.0.0, BFS and SSSP)
g500_programs="graph500_reference_bfs graph500_reference_bfs_sssp"
g500_me=${g500_me:-bench/graph500/$(basename "$0")}

# g500_die STATUS MESSAGE: MESSAGE on stderr, prefixed by the script's name, and exit STATUS.
g500_die() {
  echo "$g500_me: $2" >&2
  exit "$1"
}

# usage: the script's opening comment, its usage.
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

# g500_options SPECS -- ARGS...: the command line. SPECS: --OPTION=VARIABLE (the option's value
# goes into VARIABLE) or --FLAG=VARIABLE:VALUE (the flag sets VARIABLE to VALUE); -h or --help
# prints the script's usage. Anything else is a usage error that lists the options.
g500_options() {
  local specs=() spec known=""
  while [ "$1" != "--" ]; do specs+=("$1"); known+=" ${1%%=*}"; shift; done
  shift
  while [ $# -gt 0 ]; do
    if [ "$1" = -h ] || [ "$1" = --help ]; then usage; exit 0; fi
    local found=""
    for spec in "${specs[@]}"; do
      [ "${spec%%=*}" = "$1" ] || continue
      found=${spec#*=}
      if [[ $found == *:* ]]; then
        printf -v "${found%%:*}" '%s' "${found#*:}"
        shift
      else
        [ $# -ge 2 ] || g500_die 2 "$1: expected a value after it"
        printf -v "$found" '%s' "$2"
        shift 2
      fi
      break
    done
    [ -n "$found" ] || g500_die 2 "option: got '$1', expected one of$known"
  done
}

# g500_positive OPTION VALUE: VALUE is a positive integer, or a usage error naming OPTION.
g500_positive() { [[ $2 =~ ^[1-9][0-9]*$ ]] || g500_die 2 "$1: got '$2', expected a positive integer"; }

# g500_lists: ranks, scales and programs (comma-separated, scales also FIRST-LAST) made
# space-separated and checked: ranks powers of two, SCALEs up to 30, programs bfs or bfs_sssp.
g500_lists() {
  local r s p
  ranks=${ranks//,/ }
  for r in $ranks; do
    g500_positive --ranks "$r"
    (( (r & (r - 1)) == 0 )) || g500_die 2 "--ranks: got '$r', expected a power of two (the reference's 2-D decomposition needs one)"
  done
  if [[ $scales =~ ^([0-9]+)-([0-9]+)$ ]]; then
    scales=$(seq "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" | tr '\n' ' ')
  fi
  scales=${scales//,/ }
  [ -n "${scales// /}" ] || g500_die 2 "--scales: got an empty range, expected e.g. 16-18"
  for s in $scales; do
    g500_positive --scales "$s"
    (( s <= 30 )) || g500_die 2 "--scales: got '$s', expected at most 30 (this machine's memory)"
  done
  programs=${programs//,/ }
  for p in $programs; do
    [[ $p == bfs || $p == bfs_sssp ]] || g500_die 2 "--programs: got '$p', expected bfs, bfs_sssp or both (bfs,bfs_sssp)"
  done
}

# g500_fetch SOURCE WORK: the reference's src/, aml/ and generator/ at the pinned commit in
# WORK/source (kept between runs; refreshed when the commit differs). SOURCE: a clone of graph500
# (checkout or bare git directory) holding the pinned commit, or a plain copy of its tree (taken as
# it is, said so), or empty: clone $g500_url. Exit status 3 when the source cannot be had (no
# network, say), with the reason: tests turn that into a skip.
g500_fetch() {
  local source=$1 work=$2 tree=$2/source
  if [ -f "$tree/.commit" ] && [ "$(cat "$tree/.commit")" = "$g500_commit" ] && [ -z "$source" ]; then
    return 0
  fi
  rm -rf "$tree"
  mkdir -p "$tree"
  if [ -z "$source" ]; then
    local clone=$work/clone
    if [ ! -d "$clone/.git" ]; then
      rm -rf "$clone"
      git clone --quiet "$g500_url" "$clone" >"$work/clone.log" 2>&1 ||
        g500_die 3 "cannot fetch graph500's reference code: 'git clone $g500_url' failed ($(tail -n 1 "$work/clone.log")); give a copy with --source DIR or GRAPH500_SOURCE"
    fi
    source=$clone
  fi
  [ -e "$source" ] || g500_die 2 "--source: got '$source', expected a clone of $g500_url or a copy of its tree"
  if git -C "$source" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$source" cat-file -e "$g500_commit^{commit}" 2>/dev/null ||
      g500_die 3 "--source: got '$source', expected a clone of graph500 holding commit $g500_commit (git -C '$source' fetch)"
    git -C "$source" archive "$g500_commit" src aml generator | tar -x -C "$tree" ||
      g500_die 2 "cannot extract src, aml and generator of $g500_commit from '$source'"
    echo "$g500_commit" >"$tree/.commit"
  else
    [ -f "$source/src/main.c" ] && [ -f "$source/aml/aml.c" ] && [ -d "$source/generator" ] ||
      g500_die 2 "--source: got '$source', expected graph500's tree (src/main.c, aml/aml.c, generator/) or a clone of it"
    cp -a "$source/src" "$source/aml" "$source/generator" "$tree/"
    echo "$g500_me: '$source' is not a git clone: its tree is built as it is (not checked against commit $g500_commit)" >&2
    echo "unchecked" >"$tree/.commit"
  fi
}

# g500_pc PREFIX: transit-aml.pc under PREFIX (lib/pkgconfig, lib64/..., lib/<multiarch>/...), or nothing.
g500_pc() {
  find "$1"/lib* -maxdepth 3 -path '*/pkgconfig/transit-aml.pc' 2>/dev/null | head -n 1
}

# g500_build KIND WORK [PREFIX]: builds both programs into WORK/KIND/src/ (KIND: aml, transit,
# smpi, smpi-transit) from WORK/source; for transit, against PREFIX's transit-aml.pc (g500_pc); for
# smpi-transit, against PREFIX, a simulation build of transit (build-sim: not installed, so its
# library and this tree's aml.h are named directly). Rebuilt every
# time (a few seconds): a changed library is never missed.
g500_build() {
  local kind=$1 work=$2 prefix=${3:-} dir=$2/$1 mpicc=mpicc
  rm -rf "$dir"
  mkdir -p "$dir"
  cp -a "$work/source/src" "$work/source/generator" "$dir/"
  # The Makefile's own CFLAGS; -I../aml is the only thing build transit leaves out of them.
  local cflags
  cflags=$(sed -n 's/^CFLAGS *= *//p' "$dir/src/Makefile")
  [[ " $cflags " == *" -I../aml "* ]] || g500_die 1 "the reference's src/Makefile has no 'CFLAGS = ... -I../aml': not the pinned code?"
  local make_args=()
  case $kind in
    aml) cp -a "$work/source/aml" "$dir/" ;;
    smpi)
      cp -a "$work/source/aml" "$dir/"
      command -v smpicc >/dev/null || g500_die 2 "smpicc not found (SimGrid's compiler wrapper: scripts/setup installs Debian's libsimgrid-dev)"
      # SMPI's malloc override would hand every rank shared blocks; the reference's arrays are its own.
      mpicc="smpicc -DSMPI_NO_OVERRIDE_MALLOC"
      # MPI_Testany as MPI defines it for sends to MPI_PROC_NULL, which AML relies on and SMPI 3.32
      # gets wrong (smpi_compat.c); a file of ours linked in, the reference's own unchanged.
      make_args=("SOURCES=$(sed -n 's/^SOURCES *= *//p' "$dir/src/Makefile") $root/bench/graph500/smpi_compat.c") ;;
    transit)
      local pc
      pc=$(g500_pc "$prefix")
      [ -n "$pc" ] || g500_die 2 "--transit-prefix: got '$prefix', expected the prefix transit is installed in, with lib/pkgconfig/transit-aml.pc (cmake --install build --prefix PREFIX)"
      local pcdir aml_cflags aml_libs
      pcdir=$(dirname "$pc")
      aml_cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags transit-aml) || g500_die 1 "pkg-config --cflags transit-aml failed ($pc)"
      aml_libs=$(PKG_CONFIG_PATH=$pcdir pkg-config --libs transit-aml) || g500_die 1 "pkg-config --libs transit-aml failed ($pc)"
      # The reference's rules link $(LDFLAGS) before the sources, and the toolchain's --as-needed
      # drops a shared library that nothing before it uses: --no-as-needed keeps them (shared
      # libraries resolve later references in any order). The run path finds them at run time.
      local libdir
      libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir transit-aml)
      make_args=("SOURCES=main.c utils.c validate.c" "CFLAGS=${cflags/ -I..\/aml/} $aml_cflags"
                 "LDFLAGS=-lpthread -Wl,--no-as-needed $aml_libs -Wl,--as-needed -Wl,-rpath,$libdir") ;;
    smpi-transit)
      command -v smpicc >/dev/null || g500_die 2 "smpicc not found (SimGrid's compiler wrapper: scripts/setup installs Debian's libsimgrid-dev)"
      mpicc="smpicc -DSMPI_NO_OVERRIDE_MALLOC"
      local lib=$prefix/bindings/aml
      [ -f "$lib/libtransit_aml.so" ] || g500_die 2 "--transit-sim: got '$prefix', expected the simulation build of transit (make sim), with bindings/aml/libtransit_aml.so"
      make_args=("SOURCES=main.c utils.c validate.c" "CFLAGS=${cflags/ -I..\/aml/} -I$root/bindings/aml"
                 "LDFLAGS=-lpthread -Wl,--no-as-needed -L$lib -ltransit_aml -Wl,--as-needed -Wl,-rpath,$lib:$prefix") ;;
    *) g500_die 2 "build: got '$kind', expected aml, transit, smpi or smpi-transit" ;;
  esac
  command -v ${mpicc%% *} >/dev/null || g500_die 2 "${mpicc%% *} not found (Debian's libopenmpi-dev)"
  # -fcommon: the reference defines its globals in common.h, which GCC 10 and later refuse to merge.
  if ! make -C "$dir/src" MPICC="$mpicc -fcommon" "${make_args[@]}" $g500_programs >"$dir/build.log" 2>&1; then
    tail -n 20 "$dir/build.log" >&2
    g500_die 1 "building the reference ($kind) failed: see $dir/build.log"
  fi
  local program
  for program in $g500_programs; do
    [ -x "$dir/src/$program" ] || g500_die 1 "the $kind build made no $dir/src/$program: see $dir/build.log"
  done
}
