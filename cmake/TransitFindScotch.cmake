# Finds Scotch (Debian's libscotch-dev ships no CMake config: the header is under
# /usr/include/scotch, the libraries are libscotch and libscotcherr) and defines the imported target
# transit::scotch. Sets TRANSIT_SCOTCH_FOUND. Included by the build and, installed next to it, by
# transitConfig.cmake, so that a find_package(transit) consumer can link the static library's
# Scotch dependency. TRANSIT_SCOTCH_IMPORT_SCOPE may be GLOBAL (the build sets it, so that an
# add_subdirectory consumer sees the target too).
if(TARGET transit::scotch)
  set(TRANSIT_SCOTCH_FOUND TRUE)
  return()
endif()

find_path(TRANSIT_SCOTCH_INCLUDE_DIR scotch.h PATH_SUFFIXES scotch
          DOC "Directory of Scotch's scotch.h")
find_library(TRANSIT_SCOTCH_LIBRARY NAMES scotch DOC "Scotch's libscotch")
find_library(TRANSIT_SCOTCHERR_LIBRARY NAMES scotcherr DOC "Scotch's error handler libscotcherr")
mark_as_advanced(TRANSIT_SCOTCH_INCLUDE_DIR TRANSIT_SCOTCH_LIBRARY TRANSIT_SCOTCHERR_LIBRARY)

if(TRANSIT_SCOTCH_INCLUDE_DIR AND TRANSIT_SCOTCH_LIBRARY AND TRANSIT_SCOTCHERR_LIBRARY)
  set(TRANSIT_SCOTCH_FOUND TRUE)
  add_library(transit::scotch UNKNOWN IMPORTED ${TRANSIT_SCOTCH_IMPORT_SCOPE})
  set_target_properties(transit::scotch PROPERTIES
    IMPORTED_LOCATION "${TRANSIT_SCOTCH_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${TRANSIT_SCOTCH_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${TRANSIT_SCOTCHERR_LIBRARY}")
  # A static libscotch needs its compression and maths libraries spelled out; the shared one
  # names them itself.
  if(TRANSIT_SCOTCH_LIBRARY MATCHES "\\.a$")
    find_package(ZLIB QUIET)
    find_package(BZip2 QUIET)
    find_package(LibLZMA QUIET)
    set(scotch_static_deps m)
    foreach(dep IN ITEMS ZLIB::ZLIB BZip2::BZip2 LibLZMA::LibLZMA)
      if(TARGET ${dep})
        list(APPEND scotch_static_deps ${dep})
      endif()
    endforeach()
    set_property(TARGET transit::scotch APPEND PROPERTY INTERFACE_LINK_LIBRARIES ${scotch_static_deps})
  endif()
else()
  set(TRANSIT_SCOTCH_FOUND FALSE)
endif()
