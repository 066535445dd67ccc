# transit_add_test(NAME name SOURCES src... [LOCAL_PES n...] [MPI_RANKS n...] [TIMEOUT s]
#                  [ARGS arg...] [LIBS lib...] [ENV VAR=value...] [NO_HYBRID])
# Without LOCAL_PES and MPI_RANKS the test is serial (pure code) and uses GoogleTest's own main.
# Builds one GoogleTest executable and registers it once per PE count: on the local backend
# (threads) for each LOCAL_PES and under mpirun for each MPI_RANKS. Primes and non-squares on
# purpose: most routing and termination bugs show only at uneven counts. Every test has a timeout,
# so a deadlock fails instead of hanging CI. A test with MPI_RANKS also runs with PE threads in
# the ranks (--transit-threads-per-rank, docs/hybrid.md): NAME.hybrid.2x2 (2 ranks x 2 threads)
# and NAME.hybrid.3x3 with a communication thread, NAME.hybrid.3x3.multiple with every PE thread
# calling MPI, unless NO_HYBRID (a test of what needs one PE per rank: MPI windows). Under
# ThreadSanitizer, which leaves MPI ranks out, they run as NAME.hybrid.1x2, .1x3 and .1x3.multiple.
set(TRANSIT_TEST_DEFAULT_TIMEOUT 120)
# Tests never read the user's calibrated profile (~/.cache/transit): a file that does not exist,
# unless a test names its own.
set(TRANSIT_TEST_PROFILE TRANSIT_PROFILE=${PROJECT_BINARY_DIR}/tests/no-profile.json)
set(TRANSIT_MPIEXEC_ENV ${TRANSIT_TEST_PROFILE}
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # One machine, no network: shared memory only, and no busy-polling fight with oversubscription.
    OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1
    OMPI_MCA_btl_vader_single_copy_mechanism=none)
if(TRANSIT_SANITIZE MATCHES "address")
  # Open MPI's own allocations outlive MPI_Finalize; leaks are checked on the local backend only.
  list(APPEND TRANSIT_MPIEXEC_ENV ASAN_OPTIONS=detect_leaks=0)
endif()

function(transit_add_test)
  cmake_parse_arguments(T "NO_HYBRID" "NAME;TIMEOUT" "SOURCES;LOCAL_PES;MPI_RANKS;ARGS;LIBS;ENV" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  if(T_LOCAL_PES OR T_MPI_RANKS)
    target_link_libraries(${T_NAME} PRIVATE transit::transit transit_test_support ${T_LIBS})
  else()  # a serial test of pure code: plain GoogleTest main
    target_link_libraries(${T_NAME} PRIVATE transit::internals GTest::gtest_main ${T_LIBS})
    target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  endif()
  transit_set_warnings(${T_NAME})
  set(no_hybrid "")
  if(T_NO_HYBRID)
    set(no_hybrid NO_HYBRID)
  endif()
  transit_register_runs(NAME ${T_NAME} TIMEOUT ${T_TIMEOUT} LOCAL_PES ${T_LOCAL_PES} MPI_RANKS ${T_MPI_RANKS}
                        ARGS ${T_ARGS} ENV ${T_ENV} ${no_hybrid})
endfunction()

# transit_register_runs(NAME exe [SUFFIX s] [LOCAL_PES n...] [MPI_RANKS n...] [TIMEOUT s] [ARGS a...]
#                       [ENV VAR=value...] [NO_HYBRID])
# Registers runs of a test executable built by transit_add_test; with SUFFIX, more runs of it under
# other settings (such as an environment variable that lowers a limit), named NAME.SUFFIX.*.
function(transit_register_runs)
  cmake_parse_arguments(T "NO_HYBRID" "NAME;SUFFIX;TIMEOUT" "LOCAL_PES;MPI_RANKS;ARGS;ENV" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT ${TRANSIT_TEST_DEFAULT_TIMEOUT})
  endif()
  if(TRANSIT_SANITIZE)  # instrumented code runs several times slower
    math(EXPR T_TIMEOUT "${T_TIMEOUT} * 4")
  endif()
  set(test_name ${T_NAME})
  if(T_SUFFIX)
    set(test_name ${T_NAME}.${T_SUFFIX})
  endif()
  if(NOT T_LOCAL_PES AND NOT T_MPI_RANKS)
    add_test(NAME ${test_name} COMMAND ${T_NAME} ${T_ARGS})
    set_tests_properties(${test_name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "serial"
                         ENVIRONMENT "${TRANSIT_TEST_PROFILE};${T_ENV}")
  endif()
  foreach(pes IN LISTS T_LOCAL_PES)
    add_test(NAME ${test_name}.local.${pes}
             COMMAND ${T_NAME} --transit-backend=local --transit-pes=${pes} ${T_ARGS})
    # Tests run up to 16 PEs on purpose, above the hardware threads of small machines (the local
    # backend runs them, with one warning line on stderr).
    set_tests_properties(${test_name}.local.${pes} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "local"
                         ENVIRONMENT "${TRANSIT_TEST_PROFILE};${T_ENV}")
  endforeach()
  if(TRANSIT_WITH_MPI AND NOT TRANSIT_SANITIZE STREQUAL "thread")
    foreach(ranks IN LISTS T_MPI_RANKS)
      add_test(NAME ${test_name}.mpi.${ranks}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} --oversubscribe
                       $<TARGET_FILE:${T_NAME}> --transit-backend=mpi ${T_ARGS})
      set_tests_properties(${test_name}.mpi.${ranks} PROPERTIES
        TIMEOUT ${T_TIMEOUT} LABELS "mpi" PROCESSORS 2 ENVIRONMENT "${TRANSIT_MPIEXEC_ENV};${T_ENV}")
    endforeach()
  endif()
  # PE threads in ranks (docs/hybrid.md): 2x2 and 3x3 with the default communication thread,
  # 3x3.multiple with every PE thread calling MPI itself (--transit-comm-thread=0). Under
  # ThreadSanitizer, on the PE threads of one rank: 1x2, 1x3, 1x3.multiple. Open MPI is not
  # instrumented, so TSan cannot see its synchronisation: reports from inside it are suppressed
  # (tests/support/tsan-mpi.supp), transit's own threads and data are checked in full.
  if(TRANSIT_WITH_MPI AND T_MPI_RANKS AND NOT T_NO_HYBRID)
    set(shapes 2x2 3x3 3x3.multiple)
    set(labels "mpi;hybrid")
    set(sanitizer_env "")
    if(TRANSIT_SANITIZE STREQUAL "thread")
      set(shapes 1x2 1x3 1x3.multiple)
      set(labels "hybrid")
      set(sanitizer_env "TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/support/tsan-mpi.supp")
    endif()
    foreach(shape IN LISTS shapes)
      string(REGEX MATCH "^([0-9]+)x([0-9]+)" parts ${shape})
      set(ranks ${CMAKE_MATCH_1})
      set(threads ${CMAKE_MATCH_2})
      set(comm_thread 1)
      if(shape MATCHES "multiple")
        set(comm_thread 0)
      endif()
      # Unbound: a rank bound to one core (mpirun's default at 2 ranks) runs its PE threads in turns.
      add_test(NAME ${test_name}.hybrid.${shape}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} --oversubscribe --bind-to none
                       $<TARGET_FILE:${T_NAME}> --transit-backend=mpi ${T_ARGS})
      set(env ${TRANSIT_MPIEXEC_ENV} ${sanitizer_env} TRANSIT_THREADS_PER_RANK=${threads}
          TRANSIT_COMM_THREAD=${comm_thread} ${T_ENV})
      set_tests_properties(${test_name}.hybrid.${shape} PROPERTIES
        TIMEOUT ${T_TIMEOUT} LABELS "${labels}" PROCESSORS 2 ENVIRONMENT "${env}")
    endforeach()
  endif()
endfunction()

# transit_add_failure_cases(NAME prefix TARGET exe PES n CASES "mode=regex"...)
# For each case, runs `exe mode` on the local backend with n PEs and under mpirun with n ranks;
# each run must fail (nonzero status, not a signal or timeout) with output matching the regex
# (tests/support/expect_failure.sh). Tests are named prefix.mode.local and prefix.mode.mpi.
function(transit_add_failure_cases)
  cmake_parse_arguments(T "" "NAME;TARGET;PES" "CASES" ${ARGN})
  set(expect ${PROJECT_SOURCE_DIR}/tests/support/expect_failure.sh)
  foreach(case IN LISTS T_CASES)
    string(FIND "${case}" "=" split)
    string(SUBSTRING "${case}" 0 ${split} mode)
    math(EXPR split "${split} + 1")
    string(SUBSTRING "${case}" ${split} -1 regex)
    add_test(NAME ${T_NAME}.${mode}.local
             COMMAND ${expect} "${regex}" $<TARGET_FILE:${T_TARGET}> ${mode} --transit-backend=local --transit-pes=${T_PES})
    set_tests_properties(${T_NAME}.${mode}.local PROPERTIES TIMEOUT 60 LABELS "local")
    if(TRANSIT_WITH_MPI AND NOT TRANSIT_SANITIZE STREQUAL "thread")
      add_test(NAME ${T_NAME}.${mode}.mpi
               COMMAND ${expect} "${regex}" ${MPIEXEC_EXECUTABLE} -n ${T_PES} --oversubscribe $<TARGET_FILE:${T_TARGET}> ${mode})
      set_tests_properties(${T_NAME}.${mode}.mpi PROPERTIES TIMEOUT 60 LABELS "mpi" PROCESSORS 2
                           ENVIRONMENT "${TRANSIT_MPIEXEC_ENV}")
    endif()
  endforeach()
endfunction()

# transit_readme_has_example(NAME test EXAMPLE file [FROM line]): fails when the README's copy of an
# example (from its line FROM on; by default its `#include <transit/transit.hpp>`, in C
# `<transit/transit.h>`) differs from the file the tests build.
function(transit_readme_has_example)
  cmake_parse_arguments(T "" "NAME;EXAMPLE;FROM" "" ${ARGN})
  if(NOT T_FROM)
    set(T_FROM "#include <transit/transit.h")
  endif()
  add_test(NAME ${T_NAME}
           COMMAND ${CMAKE_COMMAND} -DREADME=${PROJECT_SOURCE_DIR}/README.md -DEXAMPLE=${T_EXAMPLE} "-DFROM=${T_FROM}"
                   -P ${PROJECT_SOURCE_DIR}/tests/support/readme_has_example.cmake)
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT 30 LABELS "serial")
endfunction()
