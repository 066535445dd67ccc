# cmake -DREADME=<README.md> -DEXAMPLE=<examples/mapped_objects.cpp> -P readme_has_example.cmake
# Fails when the README's copy of the example differs from the file the tests build, from its
# #include of transit.hpp (C++) or transit.h (C) on.
file(READ "${README}" readme)
file(READ "${EXAMPLE}" example)
string(FIND "${example}" "#include <transit/transit.h" start)
string(SUBSTRING "${example}" ${start} -1 body)
string(FIND "${readme}" "${body}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md does not contain ${EXAMPLE} from its #include on; copy it over")
endif()
