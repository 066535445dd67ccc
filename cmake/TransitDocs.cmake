# The API reference: doxygen over the public headers' /// comments and docs/*.md, into
# build/docs/html. `cmake --build build --target docs` (or `make docs`) builds it; the ctest test
# `docs` builds it too, so `make test` (CI) fails when a public name lacks its comment. Doxygen is
# required for the test (scripts/setup installs it): without it the test fails and says so rather
# than skip, since a skipped check would let undocumented names through CI unseen.
find_program(TRANSIT_DOXYGEN NAMES doxygen)
set(TRANSIT_DOCS_DIR ${PROJECT_BINARY_DIR}/docs)
set(transit_doxyfile ${PROJECT_BINARY_DIR}/Doxyfile)
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${transit_doxyfile} @ONLY)

if(TRANSIT_DOXYGEN)
  set(transit_docs_command ${TRANSIT_DOXYGEN} ${transit_doxyfile})
else()
  set(transit_docs_missing ${PROJECT_BINARY_DIR}/docs_missing.cmake)
  file(WRITE ${transit_docs_missing}
       "message(FATAL_ERROR \"doxygen not found: the API reference (make docs, the ctest test 'docs') "
       "needs it; install the Debian package doxygen (scripts/setup does), then re-run cmake\")\n")
  set(transit_docs_command ${CMAKE_COMMAND} -P ${transit_docs_missing})
endif()

add_custom_target(docs COMMAND ${transit_docs_command}
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  COMMENT "API reference -> ${TRANSIT_DOCS_DIR}/html/index.html" VERBATIM)
if(TRANSIT_BUILD_TESTS)
  add_test(NAME docs COMMAND ${transit_docs_command} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(docs PROPERTIES TIMEOUT 120 LABELS "docs")
endif()
