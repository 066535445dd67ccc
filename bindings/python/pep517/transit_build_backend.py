"""pip's build backend for the transit package: setuptools', with one more build requirement.

An isolated build (`pip install .`) sees only what the backend asks for. The module's
transit.Context(comm) needs mpi4py's C header at build time whenever the library is built with MPI
(TRANSIT_WITH_MPI, on unless CMAKE_ARGS says -DTRANSIT_WITH_MPI=OFF), so mpi4py is asked for then
(pip builds it against the system MPI found through mpicc); a build without MPI does not need it.
setup.py refuses to build a module without MPI support when MPI is wanted."""
import os

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 (the rest of the backend is setuptools')


def mpi_wanted():
    """Whether the library is built with MPI: CMake's TRANSIT_WITH_MPI, on unless CMAKE_ARGS
    turns it off (the rule setup.py follows too)."""
    args = os.environ.get("CMAKE_ARGS", "").split()
    return not any(a.upper() in ("-DTRANSIT_WITH_MPI=OFF", "-DTRANSIT_WITH_MPI:BOOL=OFF") for a in args)


def _extra():
    return ["mpi4py>=3.1"] if mpi_wanted() else []


def get_requires_for_build_wheel(config_settings=None):
    return _setuptools.get_requires_for_build_wheel(config_settings) + _extra()


def get_requires_for_build_editable(config_settings=None):
    return _setuptools.get_requires_for_build_editable(config_settings) + _extra()
