# transit.pc for pkg-config (C and other non-CMake consumers): `cc prog.c $(pkg-config --cflags
# --libs transit)` links libtransit.so, which names its own dependencies; `--static` adds what the
# static library needs (the C++ runtime, threads, MPI, Scotch). Relocatable: paths are relative to
# the .pc file's own folder, so a copy installed under any prefix (cmake --install --prefix) works.
file(RELATIVE_PATH transit_pc_to_prefix /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
string(REGEX REPLACE "/$" "" transit_pc_to_prefix "${transit_pc_to_prefix}")
set(transit_pc_private "-lstdc++ -lm -pthread")
if(TRANSIT_WITH_MPI)
  foreach(lib IN LISTS MPI_CXX_LIBRARIES)
    string(APPEND transit_pc_private " ${lib}")
  endforeach()
endif()
if(TRANSIT_WITH_SCOTCH)
  string(APPEND transit_pc_private " ${TRANSIT_SCOTCH_LIBRARY} ${TRANSIT_SCOTCHERR_LIBRARY}")
endif()
file(WRITE ${PROJECT_BINARY_DIR}/transit.pc
"prefix=\${pcfiledir}/${transit_pc_to_prefix}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: transit
Description: ${PROJECT_DESCRIPTION} (C API: transit/transit.h)
Version: ${PROJECT_VERSION}
Libs: -L\${libdir} -ltransit
Libs.private: ${transit_pc_private}
Cflags: -I\${includedir}
")
install(FILES ${PROJECT_BINARY_DIR}/transit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
