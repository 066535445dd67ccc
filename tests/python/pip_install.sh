#!/usr/bin/env bash
# pip_install.sh SOURCE WORKDIR PYTHON: `pip install --no-build-isolation .` from a copy of the
# checkout into a fresh venv made by PYTHON with --system-site-packages (NumPy, mpi4py, pybind11
# and setuptools are Debian's: nothing is downloaded), then the installed package runs the
# example on one local PE, from outside the checkout.
set -euo pipefail
source=$1 work=$2 python=$3
rm -rf "$work"
mkdir -p "$work/src"
# The checkout without its build folders (README "From Python": pip install from the checkout).
tar -C "$source" --exclude='./build*' --exclude='./.git' -cf - . | tar -C "$work/src" -xf -
"$python" -m venv --system-site-packages "$work/venv"
cd "$work/src"
PIP_NO_INDEX=1 "$work/venv/bin/pip" install --no-build-isolation -q .
cd "$work"
"$work/venv/bin/python" - <<'PY'
import pathlib, sys, transit
where = pathlib.Path(transit.__file__).resolve()
assert str(where).startswith(sys.prefix), f"transit imported from {where}, not from the venv {sys.prefix}"
print(f"transit {transit.version} installed in {where.parent}")
PY
"$work/venv/bin/python" "$work/src/examples/python/histogram.py"
