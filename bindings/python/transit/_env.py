"""Which backend transit.Context(comm) runs on: the communicator to attach to, or None for one PE
of the local backend. Imports mpi4py.MPI only when MPI is wanted: importing it initialises MPI."""
import sys


def under_launcher():
    """Whether this process was started by an MPI launcher: the library's one rule (the variables
    of Open MPI's mpirun, MPICH's Hydra, MVAPICH, PMI and PMIx launchers such as Slurm's srun),
    asked through the C API (transit_started_by_mpi_launcher), as transit::run asks it."""
    from . import _transit
    return _transit._started_by_mpi_launcher()


def _mpi_already_initialised():
    mpi = sys.modules.get("mpi4py.MPI")
    return mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized()


def communicator(comm):
    """The mpi4py communicator a Context attaches to, or None for the local backend.

    comm None: MPI.COMM_WORLD under an MPI launcher or when the program has initialised MPI
    already, else None. A communicator is checked here so that errors name it as Python sees it.
    """
    if comm is None:
        if not (under_launcher() or _mpi_already_initialised()):
            return None
        if "mpi4py.MPI" not in sys.modules:
            # Importing mpi4py.MPI starts MPI: first Open MPI's settings for transit's messages
            # (a 32 KiB eager limit: 1.5-2x here, README "From Python"), as transit::run sets them.
            from . import _transit
            _transit._prepare_mpi()
        from mpi4py import MPI
        return MPI.COMM_WORLD
    # A communicator comes from mpi4py.MPI, imported already: importing it here would start MPI.
    MPI = sys.modules.get("mpi4py.MPI")
    if MPI is None or not isinstance(comm, MPI.Comm):
        raise TypeError(f"comm: got a {type(comm).__name__}, expected an mpi4py communicator or None")
    if comm == MPI.COMM_NULL:
        raise ValueError("comm: got MPI.COMM_NULL, expected an intracommunicator")
    if comm.Is_inter():
        raise ValueError("comm: got an intercommunicator, expected an intracommunicator")
    return comm


class watchdog_option:
    """Context(watchdog=seconds) for the start of one context: the library reads its run options
    (TRANSIT_WATCHDOG among them) from the environment when a context starts, so the variable is
    set for that moment and restored after. None leaves the environment (and TRANSIT_WATCHDOG, if
    the user set it) alone; 0 turns the watchdog off."""

    def __init__(self, seconds):
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
                raise TypeError(f"watchdog: got a {type(seconds).__name__}, expected a number of seconds or None")
            if not (seconds == 0 or 0.001 <= seconds <= 7 * 24 * 3600):
                raise ValueError(f"watchdog: got {seconds!r}, expected 0 (off) or seconds in [0.001, 604800] (a week)")
        self.seconds = seconds
        self.saved = None

    def __enter__(self):
        import os
        if self.seconds is not None:
            self.saved = os.environ.get("TRANSIT_WATCHDOG")
            os.environ["TRANSIT_WATCHDOG"] = repr(float(self.seconds))
        return self

    def __exit__(self, *exc):
        import os
        if self.seconds is None:
            return
        if self.saved is None:
            os.environ.pop("TRANSIT_WATCHDOG", None)
        else:
            os.environ["TRANSIT_WATCHDOG"] = self.saved
