# The two commands of the README: `make demo` and `make test`. Both install what is missing
# (scripts/setup), configure and build first. Everything else here is for developers.
# `make test` builds Release (-O3): GCC warns differently at -O3 (a -Wrestrict false positive once
# broke a user's first Release build), so CI must compile at -O3; the sanitizer builds cover -O2.
BUILD       ?= build
BUILD_TYPE  ?= Release
JOBS        ?= 2
CMAKE_FLAGS ?=
CTEST_FLAGS ?=

.PHONY: all setup configure build demo test docs test-sanitize test-asan test-tsan ci-sanitize-build sim install install-all clean

all: build

setup:
	@scripts/setup

$(BUILD)/build.ninja: | setup
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

configure: $(BUILD)/build.ninja

build: setup configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/bin/transit demo

# The simulation tests (tests/simulation) run the simulation build: `make test` builds it too.
test: build sim
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) $(CTEST_FLAGS)

# The API reference from the public headers' /// comments: build/docs/html/index.html (doxygen);
# the Python package's reference, docs/python.md, from its docstrings and type stubs.
docs: setup configure
	cmake --build $(BUILD) --target docs
	cmake --build $(BUILD) --target python_reference

# AddressSanitizer + UndefinedBehaviorSanitizer on every test (hybrid runs included); ThreadSanitizer
# on the local backend and on the PE threads of one MPI rank (hybrid 1x2, 1x3: reports from inside
# Open MPI, which is not instrumented, suppressed by tests/support/tsan-mpi.supp).
test-sanitize: test-asan test-tsan

test-asan: setup
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRANSIT_SANITIZE=address,undefined
	cmake --build build-asan -j $(JOBS)
	ctest --test-dir build-asan --output-on-failure -j $(JOBS) -LE simulation $(CTEST_FLAGS)

test-tsan: setup
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRANSIT_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS)
	ctest --test-dir build-tsan --output-on-failure -j $(JOBS) -L 'local|serial|hybrid' $(CTEST_FLAGS)

# CI (.ci/run, after `make test`): both sanitizer configurations must build, so that a warning only
# they see (GCC 12's -Wmaybe-uninitialized in <regex> under -fsanitize broke `make test-asan` on a
# fresh machine, issue 51) cannot come back unseen. CI has two cores, no ccache and 90 minutes, of
# which `make test` takes about 31; a whole sanitizer build with debug info would add about 34
# minutes (ASan+UBSan) and 16 (TSan) there (README "Set-up": measured CPU time, halved). So CI
# builds under ASan+UBSan the library, the transit command (its applications, benchmarks and tools,
# where that warning was) and the test programs below, and the library under TSan, both at
# RelWithDebInfo's -O2 without -g (debug info changes no warning and costs about a quarter of the
# compile time), in folders of their own so that test-sanitize's build-asan and build-tsan keep
# their debug info. The test programs are left to `make test-sanitize`: with them CI would come
# within a quarter of its limit. Then a handful of tests of what the sanitizers once found: the C API's
# enum checked as an integer first (UBSan), the local backend's node memory freed (LeakSanitizer),
# the trace command, and trace_test on the PE threads of one rank (TSan).
CI_SANITIZE_FLAGS = -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O2 -DNDEBUG' \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO='-O2 -DNDEBUG' $(CMAKE_FLAGS)
CI_ASAN_TARGETS ?= transit transit_shared transit_cli c_api_bad_input apps_ig_test trace_test
CI_TSAN_TARGETS ?= transit transit_shared trace_test
CI_ASAN_TESTS   ?= ^(c_api_bad\.index_out_of_range|apps_ig_test\.local\.2|trace_cli\.summarize|trace_test\.local\.4)$$
CI_TSAN_TESTS   ?= ^trace_test\.(local\.4|hybrid\.1x2)$$

ci-sanitize-build: setup
	cmake -S . -B build-ci-asan -DTRANSIT_SANITIZE=address,undefined $(CI_SANITIZE_FLAGS)
	cmake --build build-ci-asan -j $(JOBS) --target $(CI_ASAN_TARGETS)
	ctest --test-dir build-ci-asan --output-on-failure -j $(JOBS) --no-tests=error -R '$(CI_ASAN_TESTS)'
	cmake -S . -B build-ci-tsan -DTRANSIT_SANITIZE=thread $(CI_SANITIZE_FLAGS)
	cmake --build build-ci-tsan -j $(JOBS) --target $(CI_TSAN_TARGETS)
	ctest --test-dir build-ci-tsan --output-on-failure -j $(JOBS) --no-tests=error -R '$(CI_TSAN_TESTS)'

# The library and the transit command built against SimGrid's SMPI, in build-sim (docs/simulation.md):
# the mpi backend then runs on simulated machines under smpirun. The normal build never needs SimGrid.
# scripts/simulate also runs the normal build's transit command (it writes the platform: a program
# built with smpicxx runs only under smpirun), so `make sim` builds that one target of $(BUILD) too.
sim: setup configure
	cmake --build $(BUILD) -j $(JOBS) --target transit_cli
	cmake -S . -B build-sim -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRANSIT_SIMGRID=ON \
	  -DCMAKE_C_COMPILER=smpicc -DCMAKE_CXX_COMPILER=smpicxx -DMPI_CXX_COMPILER=smpicxx \
	  -DTRANSIT_BUILD_TESTS=OFF -DTRANSIT_WITH_SCOTCH=OFF $(CMAKE_FLAGS)
	cmake --build build-sim -j $(JOBS)

# `make install PREFIX=dir` (default /usr/local): the library only (libtransit.so and .a, the C and
# C++ headers, the CMake package transit::transit, transit.pc), from its own Release build in
# $(INSTALL_BUILD) with the tests, the transit command, the applications, the benchmarks and the
# Python module off: a few minutes where the whole build takes a quarter of an hour (README
# "Installing"). `make install-all` adds the transit command (bin/transit; with it the
# applications and benchmark kernels it runs), still without the tests.
INSTALL_BUILD ?= build-install
PREFIX        ?= /usr/local
INSTALL_CONFIGURE = cmake -S . -B $(INSTALL_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DTRANSIT_BUILD_TESTS=OFF -DTRANSIT_PYTHON=OFF $(CMAKE_FLAGS)

install: setup
	$(INSTALL_CONFIGURE) -DTRANSIT_BUILD_TOOLS=OFF
	cmake --build $(INSTALL_BUILD) -j $(JOBS)
	cmake --install $(INSTALL_BUILD) --prefix $(PREFIX)

install-all: setup
	$(INSTALL_CONFIGURE) -DTRANSIT_BUILD_TOOLS=ON
	cmake --build $(INSTALL_BUILD) -j $(JOBS)
	cmake --install $(INSTALL_BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(INSTALL_BUILD) build-asan build-tsan build-ci-asan build-ci-tsan build-sim
