#!/usr/bin/env python3
"""ci_check.py SOURCE_DIR: what CI (.ci/run) runs, read from the files and make's dry run (nothing
is built here):
  - the README's test command (`make test`, README "Set-up"), first;
  - then `make ci-sanitize-build`, which configures both sanitizer builds (build-ci-asan with
    TRANSIT_SANITIZE=address,undefined, build-ci-tsan with thread), builds at least the library and the
    transit command (its applications, benchmarks and tools: tools/transit/trace.cpp is where a
    warning only the sanitizer build saw broke `make test-asan`, issue 51) in the first and at
    least the library in the second, and runs some tests in each,
    failing when none matches.
"""
import re
import subprocess
import sys

root = sys.argv[1]
problems = []
readme = open(f"{root}/README.md", encoding="utf-8").read()
setup = readme[readme.index("## Set-up"):readme.index("\n## ", readme.index("## Set-up") + 1)]
if not re.search(r"^make test\b", setup, re.M):
    problems.append("README 'Set-up' no longer shows `make test`: update .ci/run and this check")
ci = [line.strip() for line in open(f"{root}/.ci/run", encoding="utf-8")
      if line.strip() and not line.lstrip().startswith("#")]
makes = [line for line in ci if line.startswith("make")]
print("ci_check: .ci/run runs " + "; ".join(makes))
if makes[:2] != ["make test", "make ci-sanitize-build"]:
    problems.append(f".ci/run must run `make test` then `make ci-sanitize-build`, it runs {makes}")

dry = subprocess.run(["make", "-n", "-C", root, "ci-sanitize-build"], capture_output=True, text=True)
if dry.returncode != 0:
    problems.append(f"make -n ci-sanitize-build: status {dry.returncode}\n{dry.stderr}")
commands = [line.split() for line in dry.stdout.splitlines()]
for build, sanitize, needed in (("build-ci-asan", "address,undefined", {"transit", "transit_cli"}), ("build-ci-tsan", "thread", {"transit"})):
    configure = [c for c in commands if c[:1] == ["cmake"] and "-B" in c and c[c.index("-B") + 1] == build]
    builds = [c for c in commands if c[:3] == ["cmake", "--build", build]]
    tests = [c for c in commands if c[:1] == ["ctest"] and build in c]
    if not any(f"-DTRANSIT_SANITIZE={sanitize}" in c for c in configure):
        problems.append(f"ci-sanitize-build does not configure {build} with TRANSIT_SANITIZE={sanitize}")
    for c in builds:
        targets = c[c.index("--target") + 1:] if "--target" in c else ["all"]
        print(f"ci_check: {build} ({sanitize}) builds {' '.join(targets)}")
        if not needed <= set(targets):
            problems.append(f"ci-sanitize-build builds {targets} in {build}, not {sorted(needed)}")
    if not builds:
        problems.append(f"ci-sanitize-build does not build {build}")
    if not tests or not all("--no-tests=error" in c for c in tests):
        problems.append(f"ci-sanitize-build runs no tests in {build}, or lets a pattern match none")

for p in problems:
    print(f"ci_check: {p}")
print("ci_check: ok" if not problems else f"ci_check: {len(problems)} problems")
sys.exit(1 if problems else 0)
