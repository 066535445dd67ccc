/* transit_set_watchdog: a C program whose PEs call a collective unevenly (PE 1 skips a barrier)
 * ends with the watchdog's report and a nonzero status instead of hanging: watchdog CASE [PES].
 *   threads PES  transit_run_local: PE 0's barrier fails after 1 s, its body returns the status,
 *                and the run's error carries the report; exits 1.
 *   mpi          MPI_COMM_WORLD through transit_context_create_comm: rank 0's barrier fails after
 *                1 s; it prints the report and calls MPI_Abort, as the other ranks wait elsewhere.
 *   bad          out-of-range values are refused, naming the value; prints "passed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRANSIT_TEST_MPI
#include <transit/transit_mpi.h>
#else
#include <transit/transit.h>
#endif

static int uneven_barrier(transit_context* ctx, void* user) {
  (void)user;
  if (transit_rank(ctx) == 1) return 0; /* the mistake: PE 1 skips the barrier */
  return transit_barrier(ctx) != TRANSIT_OK;
}

static int refused(double seconds, const char* named) {
  const transit_status status = transit_set_watchdog(seconds);
  if (status == TRANSIT_INVALID_ARGUMENT && strstr(transit_last_error(), named) != NULL) return 0;
  fprintf(stderr, "transit_set_watchdog(%g): status %d, error \"%s\", expected %d naming %s\n", seconds, (int)status,
          transit_last_error(), (int)TRANSIT_INVALID_ARGUMENT, named);
  return 1;
}

int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "";
  if (strcmp(name, "bad") == 0) {
    const int failures = refused(-1, "'-1'") + refused(0.0001, "0.0001") + refused(1e9, "1e+09") +
                         refused(NAN, "nan") + (transit_set_watchdog(0) != TRANSIT_OK) +
                         (transit_set_watchdog(2.5) != TRANSIT_OK);
    if (failures != 0) return 1;
    printf("passed\n");
    return 0;
  }
  if (transit_set_watchdog(1) != TRANSIT_OK) {
    fprintf(stderr, "transit_set_watchdog(1): %s\n", transit_last_error());
    return 2;
  }
  if (strcmp(name, "threads") == 0 && argc > 2) {
    if (transit_run_local(atoi(argv[2]), uneven_barrier, NULL) == TRANSIT_OK) {
      fprintf(stderr, "transit_run_local: succeeded, expected the watchdog's failure\n");
      return 0;
    }
    fprintf(stderr, "transit_run_local: %s\n", transit_last_error());
    return 1;
  }
#ifdef TRANSIT_TEST_MPI
  if (strcmp(name, "mpi") == 0) {
    MPI_Init(&argc, &argv);
    transit_context* ctx = NULL;
    if (transit_context_create_comm(MPI_COMM_WORLD, &ctx) != TRANSIT_OK) {
      fprintf(stderr, "transit_context_create_comm: %s\n", transit_last_error());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (transit_rank(ctx) == 1) {
      MPI_Barrier(MPI_COMM_WORLD); /* waits elsewhere: for rank 0, which waits in transit's barrier */
    } else if (transit_barrier(ctx) != TRANSIT_OK) {
      fprintf(stderr, "rank %d: transit_barrier: %s\n", transit_rank(ctx), transit_last_error());
      fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fprintf(stderr, "rank %d: the uneven barrier returned, expected the watchdog's failure\n", transit_rank(ctx));
    transit_context_destroy(ctx);
    MPI_Finalize();
    return 0;
  }
#endif
  fprintf(stderr, "unknown case '%s': expected threads PES, mpi or bad\n", name);
  return 2;
}
