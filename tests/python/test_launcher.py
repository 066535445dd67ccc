"""The package's launcher detection (whether transit.Context() attaches to MPI_COMM_WORLD) is the
library's one rule, asked through the C API: each variable an MPI launcher sets says yes, none of
them no, as for transit::run. Run without a launcher; the variables are set in-process only."""
import pytest

from transit import _env

# Every variable of the library's rule (transit::started_by_mpi_launcher, src/runtime/options.cpp).
LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MV2_COMM_WORLD_SIZE",
                      "MPI_LOCALNRANKS", "HYDRA_CONTROL_FD")


@pytest.fixture
def no_launcher(monkeypatch):
    for variable in LAUNCHER_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    return monkeypatch


def test_no_variable_is_no_launcher(no_launcher):
    assert _env.under_launcher() is False


@pytest.mark.parametrize("variable", LAUNCHER_VARIABLES)
def test_each_variable_is_a_launcher(no_launcher, variable):
    no_launcher.setenv(variable, "1")
    assert _env.under_launcher() is True
    no_launcher.delenv(variable)
    assert _env.under_launcher() is False
