#!/usr/bin/env bash
# pip_install.sh SOURCE WORKDIR PYTHON [MPIEXEC]: the package as a user installs it, from a copy of
# the checkout, with Debian's NumPy, mpi4py, pybind11 and setuptools (nothing is downloaded):
#  1. `pip wheel --no-build-isolation .` makes a wheel, installed into a fresh venv made by PYTHON
#     with --system-site-packages: `python -m transit` says MPI and mpi4py are in, the example runs
#     on one local PE and a small script under MPIEXEC at 2 ranks (when given);
#  2. `pip install --no-build-isolation .` (README "From Python") into another such venv;
#  3. the same into a venv without Debian's packages, where mpi4py cannot be imported: the build
#     must stop with the message naming the fix, and install nothing (never a module without MPI).
set -euo pipefail
source=$1 work=$2 python=$3 mpiexec=${4:-}
rm -rf "$work"
mkdir -p "$work/src" "$work/wheels"
# The checkout without its build folders (README "From Python": pip install from the checkout).
tar -C "$source" --exclude='./build*' --exclude='./.git' -cf - . | tar -C "$work/src" -xf -
export PIP_NO_INDEX=1
cd "$work/src"

echo "== pip wheel --no-build-isolation ."
"$python" -m pip wheel --no-build-isolation --no-deps -q -w "$work/wheels" .
wheel=$(ls "$work"/wheels/transit-*.whl)
"$python" -m venv --system-site-packages "$work/venv-wheel"
"$work/venv-wheel/bin/pip" install -q "$wheel"
cd "$work"
"$work/venv-wheel/bin/python" -m transit
"$work/venv-wheel/bin/python" - <<'PY'
import pathlib, sys, transit
where = pathlib.Path(transit.__file__).resolve()
assert str(where).startswith(sys.prefix), f"transit imported from {where}, not from the venv {sys.prefix}"
info = transit.build_info()
assert info["mpi"] and info["mpi4py"], f"the wheel's module lacks MPI: {info}"
assert where.with_name("__init__.pyi").exists() and where.with_name("py.typed").exists(), "no type stubs"
print(f"transit {transit.version} installed from the wheel in {where.parent}")
PY
"$work/venv-wheel/bin/python" "$work/src/examples/python/histogram.py"
if [ -n "$mpiexec" ]; then
  cat > "$work/two_ranks.py" <<'PY'
import numpy as np, transit
with transit.Context() as ctx:
    got = []
    s = transit.Streamer(ctx, np.int64, got.append, copy=True)
    s.insert(np.arange(100) % ctx.size, np.arange(100))
    s.finish()
    total = ctx.allreduce(int(sum(a.sum() for a in got)))
    assert ctx.size == 2 and total == 4950 * 2, (ctx.size, total)
    if ctx.rank == 0:
        print(f"two ranks from the wheel: {total}")
PY
  "$mpiexec" -n 2 "$work/venv-wheel/bin/python" "$work/two_ranks.py"
fi

echo "== pip install --no-build-isolation ."
"$python" -m venv --system-site-packages "$work/venv"
cd "$work/src"
"$work/venv/bin/pip" install --no-build-isolation -q .
cd "$work"
"$work/venv/bin/python" -c "import transit; assert transit.build_info()['mpi4py']"
"$work/venv/bin/python" "$work/src/examples/python/histogram.py"

echo "== pip install --no-build-isolation . where mpi4py is missing"
# A venv like the others in which mpi4py cannot be imported (a stand-in that raises ImportError
# comes first on the path of pip and of the build it runs).
"$python" -m venv --system-site-packages "$work/venv-bare"
mkdir -p "$work/no-mpi4py/mpi4py"
echo 'raise ImportError("No module named mpi4py (hidden by pip_install.sh)")' > "$work/no-mpi4py/mpi4py/__init__.py"
cd "$work/src"
if PYTHONPATH="$work/no-mpi4py" "$work/venv-bare/bin/pip" install --no-build-isolation --no-deps . > "$work/bare.log" 2>&1; then
  cat "$work/bare.log"; echo "pip_install.sh: installed without mpi4py, expected a refusal"; exit 1
fi
grep -q "mpi4py cannot be imported by the Python that builds the package" "$work/bare.log" ||
  { cat "$work/bare.log"; echo "pip_install.sh: no message naming the fix"; exit 1; }
grep -q "pip install --no-build-isolation ." "$work/bare.log"
cd "$work"
if "$work/venv-bare/bin/python" -c "import transit" 2>/dev/null; then
  echo "pip_install.sh: a transit module was installed anyway"; exit 1
fi
grep -A6 "transit: this build of the library has MPI" "$work/bare.log"
echo "pip_install.sh: refused without mpi4py, as expected"
