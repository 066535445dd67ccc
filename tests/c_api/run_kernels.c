/* The C API's kernels (kernels.h) on every kind of context:
 *   run_kernels local           one PE (transit_context_create_local)
 *   run_kernels threads N       N PEs of the local backend (transit_run_local)
 *   run_kernels mpi             one PE per rank of MPI_COMM_WORLD (transit_context_create_mpi)
 *   run_kernels mpi-split       the world split in two groups, one histogram per group at once,
 *                               with a context on the whole world alive meanwhile
 * Prints "passed" and exits 0 when every check passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRANSIT_TEST_MPI
#include <mpi.h>
#endif

#include "kernels.h"

#define OK(call)                                                                  \
  do {                                                                            \
    if ((call) != TRANSIT_OK) {                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, transit_last_error()); \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

static int pe_body(transit_context* ctx, void* user) {
  (void)user;
  return check_all(ctx);
}

#ifdef TRANSIT_TEST_MPI
static int on_world(void) {
  MPI_Comm world = MPI_COMM_WORLD;
  transit_context* ctx = NULL;
  OK(transit_context_create_mpi(&world, &ctx));
  const int failed = check_all(ctx);
  OK(transit_context_destroy(ctx));
  return failed;
}

static int on_split(void) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm group;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &group);
  MPI_Comm world = MPI_COMM_WORLD;
  transit_context* everyone = NULL;
  transit_context* mine = NULL;
  OK(transit_context_create_mpi(&world, &everyone));
  OK(transit_context_create_mpi(&group, &mine));
  int group_size = 0;
  MPI_Comm_size(group, &group_size);
  if (transit_size(mine) != group_size) {
    fprintf(stderr, "the group's context has %d PEs, expected %d\n", transit_size(mine), group_size);
    return 1;
  }
  /* The program's own traffic on its communicator between transit's work. */
  int ones = 1;
  MPI_Allreduce(MPI_IN_PLACE, &ones, 1, MPI_INT, MPI_SUM, group);
  int failed = ones != group_size;
  failed = failed || check_histogram(mine, 100000 + (uint64_t)(rank % 2) * 777, 1000);
  failed = failed || check_exchange(everyone);
  OK(transit_context_destroy(mine));
  OK(transit_context_destroy(everyone));
  MPI_Comm_free(&group);
  return failed;
}
#endif

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int failed = 1;
  int rank = 0;
  if (strcmp(mode, "local") == 0) {
    transit_context* ctx = NULL;
    OK(transit_context_create_local(&ctx));
    failed = check_all(ctx);
    OK(transit_context_destroy(ctx));
  } else if (strcmp(mode, "threads") == 0 && argc > 2) {
    OK(transit_run_local(atoi(argv[2]), pe_body, NULL));
    failed = 0;
#ifdef TRANSIT_TEST_MPI
  } else if (strcmp(mode, "mpi") == 0 || strcmp(mode, "mpi-split") == 0) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    failed = strcmp(mode, "mpi") == 0 ? on_world() : on_split();
    /* Every rank's verdict, by the program's own MPI after transit's work. */
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
#endif
  } else {
    fprintf(stderr, "usage: %s local | threads N | mpi | mpi-split\n", argv[0]);
    return 2;
  }
  if (!failed && rank == 0) printf("passed\n");
  return failed;
}
