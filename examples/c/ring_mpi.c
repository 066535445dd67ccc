/* transit from an MPI program in C: each rank streams 1000 numbers to the next rank of
 * MPI_COMM_WORLD, and rank 0 prints the total delivered. Build with mpicc (README "From C"). */
#include <stdint.h>
#include <stdio.h>
#include <transit/transit_mpi.h>

static int add(const void* items, size_t n, void* total) { /* a whole run of arrived items */
  for (size_t i = 0; i < n; ++i) *(int64_t*)total += (int64_t)((const uint64_t*)items)[i];
  return 0;
}

/* Returns 0, or the status of the first call that failed (transit_last_error() says why). */
static transit_status ring(transit_context* ctx) {
  int64_t total = 0;
  transit_streamer* s;
  transit_status status = transit_streamer_create(ctx, sizeof(uint64_t), add, &total, &s);
  if (status != TRANSIT_OK) return status;
  const int next = (transit_rank(ctx) + 1) % transit_size(ctx);
  for (uint64_t i = 1; i <= 1000 && status == TRANSIT_OK; ++i) status = transit_streamer_insert(s, &next, &i, 1);
  if (status == TRANSIT_OK) status = transit_streamer_finish(s);
  const transit_status destroyed = transit_streamer_destroy(s);
  if (status == TRANSIT_OK) status = destroyed;
  if (status == TRANSIT_OK) status = transit_allreduce(ctx, &total, 1, TRANSIT_INT64, TRANSIT_SUM);
  if (status == TRANSIT_OK && transit_rank(ctx) == 0)
    printf("%d ranks delivered %lld in total\n", transit_size(ctx), (long long)total);
  return status;
}

int main(int argc, char** argv) {
  transit_prepare_mpi(); /* Open MPI's settings for transit, before MPI_Init */
  MPI_Init(&argc, &argv);
  transit_set_watchdog(10); /* a rank waiting 10 s in a call that cannot end fails it instead */
  transit_context* ctx = NULL;
  transit_status status = transit_context_create_comm(MPI_COMM_WORLD, &ctx);
  if (status == TRANSIT_OK) status = ring(ctx);
  if (status == TRANSIT_OK) status = transit_context_destroy(ctx);
  if (status != TRANSIT_OK) {
    fprintf(stderr, "ring_mpi: %s\n", transit_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1); /* the other ranks may wait for this one */
  }
  MPI_Finalize();
  return 0;
}
