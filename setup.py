"""Builds the transit Python package's module with the project's CMake (pyproject.toml holds the
rest): pip install --no-build-isolation . (README "From Python")."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def project_version():
    """The version of CMakeLists.txt's project(), the one transit_version() reports."""
    match = re.search(r"project\(transit VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    return match.group(1)


class CMakeBuild(build_ext):
    """Configures the library for this interpreter, builds the module target only, and copies the
    module where setuptools packages it. CMAKE_ARGS adds options (-DTRANSIT_WITH_MPI=OFF, a
    compiler launcher)."""

    def build_extension(self, ext):
        build = Path(self.build_temp).resolve() / "cmake"
        assembled = build / "python"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     f"-DPython_EXECUTABLE={sys.executable}", f"-DTRANSIT_PYTHON_DIR={assembled}",
                     "-DTRANSIT_BUILD_TESTS=OFF", "-DTRANSIT_BUILD_TOOLS=OFF", *os.environ.get("CMAKE_ARGS", "").split()]
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
      ext_modules=[Extension("transit._transit", sources=[])],
      cmdclass={"build_ext": CMakeBuild},
      # setuptools' own build tree, apart from the project's build/ folder
      options={"build": {"build_base": "build-python"}})
