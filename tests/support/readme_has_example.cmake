# cmake -DREADME=<README.md> -DEXAMPLE=<examples/mapped_objects.cpp> -DFROM=<first line> -P readme_has_example.cmake
# Fails when the README's copy of the example, from its line FROM on (the #include of transit.hpp
# in C++, of transit.h in C, the first import in Python), differs from the file the tests build.
file(READ "${README}" readme)
file(READ "${EXAMPLE}" example)
string(FIND "${example}" "${FROM}" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${EXAMPLE} has no line '${FROM}' to compare from")
endif()
string(SUBSTRING "${example}" ${start} -1 body)
string(FIND "${readme}" "${body}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md does not contain ${EXAMPLE} from its '${FROM}' on; copy it over")
endif()
