# cmake -DBUILD_DIR=<build tree> -DPREFIX=<dir> -P install_fresh.cmake
# Installs the build tree into an emptied PREFIX, so that no file an earlier run installed can stand
# in for one that is no longer installed.
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
                COMMAND_ERROR_IS_FATAL ANY)
