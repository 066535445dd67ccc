"""Under mpirun, a test that fails on some ranks leaves the others waiting in its next collective
call: the first failure ends the job at once, with its report, instead of a hang until the
timeout."""
import sys


def pytest_runtest_logreport(report):
    mpi = sys.modules.get("mpi4py.MPI")
    if not report.failed or mpi is None or mpi.COMM_WORLD.size == 1:
        return
    sys.stderr.write(f"rank {mpi.COMM_WORLD.rank}: {report.nodeid} failed:\n{report.longreprtext}\n")
    sys.stderr.flush()
    mpi.COMM_WORLD.Abort(1)
