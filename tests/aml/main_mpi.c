/* transit_aml as graph500 uses it: aml_init and aml_finalize around the program, on
 * MPI_COMM_WORLD, and MPI called between AML calls. With an argument, one mistake without an error
 * handler: it must end the job with its message (tests/aml/CMakeLists.txt). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "aml.h"
#include "checks.h"

static void nothing(int from, void* data, int length) {
  (void)from;
  (void)data;
  (void)length;
}

int main(int argc, char** argv) {
  if (aml_init(&argc, &argv) != 0) return 2;
  if (argc > 1) {
    char byte = 0;
    aml_register_handler(nothing, 1);
    if (strcmp(argv[1], "unregistered") == 0) aml_send(&byte, 9, 1, 0);
    if (strcmp(argv[1], "too_long") == 0) aml_send(&byte, 1, TRANSIT_AML_MAX_LENGTH + 1, 0);
    if (strcmp(argv[1], "destination") == 0) aml_send(&byte, 1, 1, aml_n_pes());
    aml_finalize();
    printf("the mistake was not reported\n");
    return 0;
  }
  aml_checks_catch_errors();
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank); /* the program's own MPI calls, between AML's */
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int failures = aml_checks();
  if (rank != aml_my_pe() || size != aml_n_pes()) {
    fprintf(stderr, "rank %d of %d, but AML's PE %d of %d\n", rank, size, aml_my_pe(), aml_n_pes());
    failures++;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  aml_finalize();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    fprintf(stderr, "aml_finalize did not finalise the MPI that aml_init initialised\n");
    failures++;
  }
  if (failures == 0 && rank == 0) printf("passed\n");
  return failures == 0 ? 0 : 1;
}
