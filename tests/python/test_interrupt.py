"""Ctrl-C in a rank that waits in transit (README "From Python"): SIGINT must end the wait with
KeyboardInterrupt, and the job with a nonzero status, not hang. Runs mpirun itself (not under it)."""
import re
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
MPIEXEC = os.environ.get("TRANSIT_MPIEXEC", "mpirun")


def run_and_interrupt(tmp_path, ranks, mode, waiting):
    job = subprocess.Popen([MPIEXEC, "-n", str(ranks), "--oversubscribe", sys.executable, str(HERE / "wait_forever.py"),
                            str(tmp_path), mode], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / str(r)).exists() for r in waiting):
            assert job.poll() is None, f"the job ended before waiting:\n{job.stdout.read()}"
            assert time.monotonic() < deadline, "the ranks did not start waiting within 60 s"
            time.sleep(0.1)
        time.sleep(1.0)  # inside the barrier by now
        for r in waiting:
            os.kill(int((tmp_path / str(r)).read_text()), signal.SIGINT)
        output, _ = job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        job.kill()
        output, _ = job.communicate()
        pytest.fail(f"SIGINT did not end the job within 60 s:\n{output}")
    finally:
        if job.poll() is None:
            job.kill()
    return job.returncode, output


@pytest.mark.parametrize("ranks", [2, 3])
def test_sigint_ends_a_barrier_that_one_rank_waits_in(tmp_path, ranks):
    status, output = run_and_interrupt(tmp_path, ranks, "one", [0])
    assert status != 0, output
    assert "KeyboardInterrupt" in output, output
    assert re.search(r"^transit: PE 0: KeyboardInterrupt$", output, re.M), output  # no empty ": " tail
    assert "the barrier returned" not in output, output


@pytest.mark.parametrize("ranks", [2, 3])
def test_sigint_to_every_rank_ends_their_waits(tmp_path, ranks):
    status, output = run_and_interrupt(tmp_path, ranks, "all", list(range(ranks)))
    assert status != 0, output
    assert "KeyboardInterrupt" in output, output
