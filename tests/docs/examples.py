#!/usr/bin/env python3
"""Builds and runs every whole program that README.md and docs/*.md show, as shown.

    examples.py --source DIR --build DIR --library FILE [--cc CC] [--cxx CXX] [--mpicc MPICC]
                [--mpicxx MPICXX] [--mpiexec MPIEXEC] [--python PYTHON] [--python-dir DIR]
                [--timeout S]

A fenced block is a whole program when it is
  - C (```c) or C++ (```cpp, ```c++) and defines `int main(`: compiled with `cc -std=c11` or
    `c++ -std=c++20`, both with -Wall -Wextra -Werror, against the build tree's include/ and
    libtransit.so, then run. A program that includes <mpi.h>, transit/mpi.hpp or
    transit/transit_mpi.h, or calls MPI_Init, is compiled with mpicc / mpicxx (<mpi.h> as a system
    header, as CMake's MPI::MPI_C and MPI::MPI_CXX give it) and run under `mpirun -n 2`; the
    others run on the local backend (TRANSIT_BACKEND=local, TRANSIT_PES=3).
  - Python (```python) and imports transit (`import transit` or `from transit`), with no `...`
    placeholder: run with PYTHONPATH=the build's package folder, under `mpirun -n 2` when it uses
    mpi4py, else on the local backend. Skipped, with a message, when the package was not built.
Other blocks are fragments (a loop, a declaration): skipped, and counted. A failure names the
block's file and line (of its opening fence) and shows the compiler's or the program's output.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^\s*```\s*([A-Za-z0-9+_-]*)\s*$")
LANGUAGES = {"c": "c", "cpp": "c++", "c++": "c++", "cxx": "c++", "python": "python", "py": "python"}
MPI_C = re.compile(r"#\s*include\s*[<\"](mpi\.h|transit/mpi\.hpp|transit/transit_mpi\.h)[>\"]|\bMPI_Init\b")
PYTHON_IMPORT = re.compile(r"^\s*(import transit\b|from transit\b)", re.M)
MPI_PYTHON = re.compile(r"\bmpi4py\b")


def blocks(path, relative):
    """Yields (file, line of the opening fence, language, code) for each C, C++ or Python block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        start, language = i + 1, m.group(1).lower()
        j = start
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        if language in LANGUAGES:
            yield relative, start, LANGUAGES[language], "\n".join(lines[start:j]) + "\n"
        i = j + 1


def classify(language, code):
    """(kind, reason): kind is 'c', 'c++', 'python' or None for a fragment; with MPI or not."""
    if language in ("c", "c++"):
        if "int main(" not in code:
            return None, "a fragment (no int main)", False
        return language, "", bool(MPI_C.search(code))
    if not PYTHON_IMPORT.search(code):
        return None, "a fragment (does not import transit)", False
    if "..." in code:
        return None, "a fragment (has a ... placeholder)", False
    return "python", "", bool(MPI_PYTHON.search(code))


def mpi_include_flags(wrapper):
    """<mpi.h>'s folders as system headers: the -I the wrapper adds is then ignored (GCC, Clang)."""
    out = subprocess.run([wrapper, "--showme:incdirs"], capture_output=True, text=True)
    if out.returncode != 0:
        return []
    return [flag for d in out.stdout.split() for flag in ("-isystem", d)]


def run(command, env, timeout):
    try:
        p = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        return None, out + f"\n(timed out after {timeout} s)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--library", required=True, help="the build's libtransit.so")
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--mpicc", default="")
    ap.add_argument("--mpicxx", default="")
    ap.add_argument("--mpiexec", default="")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--python-dir", default="", help="where the build assembled the transit package")
    ap.add_argument("--timeout", type=int, default=120, help="seconds for each compile and each run")
    args = ap.parse_args()

    docs = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(args.source, "docs"))
                                  if f.endswith(".md"))
    include = os.path.join(args.source, "include")
    libdir = os.path.dirname(os.path.abspath(args.library))
    link = [f"-L{libdir}", f"-Wl,-rpath,{libdir}", "-ltransit"]
    work = tempfile.mkdtemp(prefix="docs-examples-", dir=args.build)
    env = dict(os.environ, TRANSIT_BACKEND="local", TRANSIT_PES="3")
    python_built = bool(args.python_dir) and os.path.isfile(os.path.join(args.python_dir, "transit", "__init__.py"))

    built, skipped, failures = [], [], []
    for doc in docs:
        for file, line, language, code in blocks(os.path.join(args.source, doc), doc):
            where = f"{file}:{line}"
            kind, reason, mpi = classify(language, code)
            if kind is None:
                skipped.append(f"{where} ({language}): {reason}")
                continue
            if mpi and not args.mpiexec:
                skipped.append(f"{where} ({kind}): needs MPI, and this build has none")
                continue
            name = re.sub(r"[^A-Za-z0-9]+", "_", where)
            if kind == "python":
                if not python_built:
                    skipped.append(f"{where} (python): the transit Python package was not built "
                                   f"(TRANSIT_PYTHON, python3-dev, pybind11-dev)")
                    continue
                program = os.path.join(work, name + ".py")
                command = [args.python, program]
                run_env = dict(env, PYTHONPATH=args.python_dir, PYTHONDONTWRITEBYTECODE="1")
            else:
                program = os.path.join(work, name + (".c" if kind == "c" else ".cpp"))
                exe = os.path.join(work, name)
                if kind == "c":
                    compiler = args.mpicc if mpi else args.cc
                    flags = ["-std=c11"]
                else:
                    compiler = args.mpicxx if mpi else args.cxx
                    flags = ["-std=c++20", "-pthread"]
                if mpi:
                    flags += mpi_include_flags(compiler)
                with open(program, "w", encoding="utf-8") as f:
                    f.write(code)
                compile_command = [compiler, *flags, "-Wall", "-Wextra", "-Werror", "-I", include,
                                   program, "-o", exe, *link]
                status, out = run(compile_command, env, args.timeout)
                if status != 0:
                    failures.append(f"{where}: the {kind} program does not compile:\n  {' '.join(compile_command)}\n{out}")
                    continue
                command = [exe]
                run_env = env
            if kind == "python":
                with open(program, "w", encoding="utf-8") as f:
                    f.write(code)
            if mpi:  # the launcher picks the backend
                command = [args.mpiexec, "-n", "2", "--oversubscribe", *command]
                run_env = {k: v for k, v in run_env.items() if k not in ("TRANSIT_BACKEND", "TRANSIT_PES")}
            status, out = run(command, run_env, args.timeout)
            if status != 0:
                failures.append(f"{where}: the {kind} program {'exited with ' + str(status) if status is not None else 'did not finish'}:"
                                f"\n  {' '.join(command)}\n{out}")
                continue
            built.append(f"{where} ({kind}{', mpirun -n 2' if mpi else ', local backend'})")
            print(f"docs_examples: ok {built[-1]}")

    for s in skipped:
        print(f"docs_examples: skipped {s}")
    for f in failures:
        print(f"docs_examples: FAILED {f}")
    print(f"docs_examples: {len(built)} built and run, {len(failures)} failed, {len(skipped)} skipped")
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures or not built else 0


if __name__ == "__main__":
    sys.exit(main())
