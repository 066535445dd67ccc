"""Builds the transit Python package's module with the project's CMake (pyproject.toml holds the
rest): pip install . or pip install --no-build-isolation . (README "From Python").

Never a module without MPI on a machine with MPI: when the library is built with MPI (the default),
mpi4py must be importable by the Python that builds, else the build stops and says how to fix it."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "bindings" / "python" / "pep517"))
from transit_build_backend import mpi_wanted  # noqa: E402 (the one rule, shared with the backend)

NO_MPI4PY = """transit: this build of the library has MPI (TRANSIT_WITH_MPI, on by default), but
mpi4py cannot be imported by the Python that builds the package ({python}): {why}.
The module would lack transit.Context(comm), so nothing was built. Either
  - install Debian's packages (scripts/setup: python3-mpi4py, pybind11-dev) and build with them:
        pip install --no-build-isolation .
  - or let pip fetch mpi4py for the build (it needs access to PyPI; mpi4py uses your MPI): pip install .
  - or build without MPI on purpose: CMAKE_ARGS=-DTRANSIT_WITH_MPI=OFF pip install ."""


def check_mpi4py():
    """Stops the build when MPI is wanted and mpi4py is missing (see NO_MPI4PY)."""
    if not mpi_wanted():
        return
    try:
        import mpi4py  # noqa: F401 (only its presence and its C header are needed here)
    except ImportError as e:
        sys.exit(NO_MPI4PY.format(python=sys.executable, why=e))


def pybind11_args():
    """pip's pybind11 (an isolated build) over a system one: its CMake package, when importable."""
    try:
        import pybind11
    except ImportError:
        return []  # Debian's pybind11-dev, found by CMake in /usr
    return [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]


def project_version():
    """The version of CMakeLists.txt's project(), the one transit_version() reports."""
    match = re.search(r"project\(transit VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    return match.group(1)


class CMakeBuild(build_ext):
    """Configures the library for this interpreter, builds the module target only, and copies the
    module where setuptools packages it. CMAKE_ARGS adds options (-DTRANSIT_WITH_MPI=OFF, a
    compiler launcher)."""

    def build_extension(self, ext):
        check_mpi4py()
        build = Path(self.build_temp).resolve() / "cmake"
        assembled = build / "python"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     f"-DPython_EXECUTABLE={sys.executable}", f"-DTRANSIT_PYTHON_DIR={assembled}",
                     "-DTRANSIT_BUILD_TESTS=OFF", "-DTRANSIT_BUILD_TOOLS=OFF",
                     f"-DTRANSIT_PYTHON_REQUIRE_MPI4PY={'ON' if mpi_wanted() else 'OFF'}", *pybind11_args(),
                     *os.environ.get("CMAKE_ARGS", "").split()]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build), "--target", "transit_python", "-j", jobs], check=True)
        built = next((assembled / "transit").glob("_transit*.so"), None)
        if built is None:
            raise RuntimeError(f"the module was not built in {assembled / 'transit'}: is pybind11-dev installed?")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(version=project_version(),
      # mpi4py at run time too when the module is built for it (Context(comm), MPI.COMM_WORLD)
      install_requires=["numpy"] + (["mpi4py>=3.1"] if mpi_wanted() else []),
      ext_modules=[Extension("transit._transit", sources=[])],
      cmdclass={"build_ext": CMakeBuild},
      # setuptools' own build tree, apart from the project's build/ folder
      options={"build": {"build_base": "build-python"}})
