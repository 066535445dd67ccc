/* transit_started_by_mpi_launcher: 0 without any launcher variable, 1 with each one alone (the
 * library's rule, which transit::run and the Python package ask). Run without a launcher. */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>

#include "transit/transit.h"

static const char* const variables[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                                        "MV2_COMM_WORLD_SIZE", "MPI_LOCALNRANKS", "HYDRA_CONTROL_FD"};
enum { variable_count = sizeof variables / sizeof variables[0] };

int main(void) {
  int failures = 0;
  for (int i = 0; i < variable_count; ++i) unsetenv(variables[i]);
  if (transit_started_by_mpi_launcher() != 0) {
    fprintf(stderr, "without a launcher variable: got 1, expected 0\n");
    ++failures;
  }
  for (int i = 0; i < variable_count; ++i) {
    setenv(variables[i], "1", 1);
    if (transit_started_by_mpi_launcher() != 1) {
      fprintf(stderr, "%s set: got 0, expected 1\n", variables[i]);
      ++failures;
    }
    unsetenv(variables[i]);
  }
  if (failures != 0) return 1;
  printf("passed\n");
  return 0;
}
