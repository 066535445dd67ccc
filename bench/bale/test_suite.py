"""bale's test_all.py run to the end with every run counted (bench/bale/test_suite.sh sets it up).

    python3 test_suite.py TESTS_DIR BIN_DIR LOGS_DIR    (from bale_classic/apps)

bale's own test_all() lists the runs and launches them; only its run_command is wrapped, to
record each run's verdict (bale's: status 0 and no "error" in the output) and to carry on after
a failure, and its subprocess.run is given bash for its `&>`. sparse_matrix_io is not run.
"""
import functools
import os
import re
import shutil
import subprocess
import sys

tests_dir, bin_dir, logs_dir = sys.argv[1:4]
sys.path.insert(0, tests_dir)
import test_all  # noqa: E402  (bale's, from tests_dir)

test_all.subprocess.run = functools.partial(subprocess.run, executable="/bin/bash")
bale_run_command = test_all.run_command
results = []  # (app, pes, verdict, command)


def counted_run_command(cmd, double_check_for_error):
    match = re.search(r"-n (\d+) +\S*/(\w+) ", cmd)
    if not match:  # not one of the suite's runs (bale probes launchers this way)
        return bale_run_command(cmd, double_check_for_error)
    pes, app = int(match.group(1)), match.group(2)
    shown = cmd.replace(bin_dir + "/", "")
    if app == "sparse_matrix_io":
        results.append((app, pes, "not run", shown))
        return 0
    status = bale_run_command(cmd, double_check_for_error)
    verdict = "passed" if status == 0 else "failed"
    if status != 0 and os.path.exists("test.log"):
        shutil.copy("test.log", os.path.join(logs_dir, "failed_{0}.log".format(len(results))))
    results.append((app, pes, verdict, shown))
    print("  " + verdict, flush=True)  # under bale's own line naming the run
    return 0  # bale asserts on it: the suite goes on


test_all.run_command = counted_run_command
test_all.test_all(bin_dir, "mpirun --oversubscribe", "", "", "31")
if os.path.exists("test.log"):
    os.remove("test.log")

print("\n# app: passed failed not-run")
for app in dict.fromkeys(r[0] for r in results):
    row = [r for r in results if r[0] == app]
    print("{0}: {1} {2} {3}".format(app, *(sum(r[2] == v for r in row) for v in ("passed", "failed", "not run"))))
counts = {v: sum(r[2] == v for r in results) for v in ("passed", "failed", "not run")}
ran = counts["passed"] + counts["failed"]
print("# {0} of {1} runs passed, {2} failed; {3} not run (sparse_matrix_io)".format(
    counts["passed"], ran, counts["failed"], counts["not run"]))
for i, r in enumerate(results):
    if r[2] == "failed":
        print("failed: {0}   (output: {1})".format(r[3], os.path.join(logs_dir, "failed_{0}.log".format(i))))
sys.exit(1 if counts["failed"] else 0)
