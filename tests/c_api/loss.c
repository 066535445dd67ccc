/* Items lost by a streamer destroyed mid-step are the caller's error, on every backend: one case
 * per run, loss CASE WHERE [PES], printing "passed" and exiting 0 only when every check held.
 *   destroy      each PE inserts 10 items for the next PE and destroys its streamer without
 *                finishing: TRANSIT_LOGIC_ERROR naming the streamer and the 10 items; the context
 *                stays usable (a barrier and a new streamer's step work).
 *   peer_left    PE 0 does so while the others finish: PE 0 gets the loss; the others' finish
 *                fails (naming PE 0) instead of waiting for it, or what they sent PE 0 since ends
 *                the job (it arrived for a destroyed streamer). PE 0 returns 1, as a program that
 *                checks its status would: the run exits nonzero, and never hangs.
 *   undestroyed  the body returns with its streamer open: transit_run_local fails with
 *                TRANSIT_LOGIC_ERROR naming the streamer and the 10 items lost.
 * WHERE: local (one PE, transit_context_create_local), threads PES (transit_run_local), mpi
 * (MPI_COMM_WORLD; not for undestroyed). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRANSIT_TEST_MPI
#include <mpi.h>
#endif

#include <transit/transit.h>

static int check(int rank, int cond, const char* what) {
  if (!cond) fprintf(stderr, "PE %d: failed: %s (last error: %s)\n", rank, what, transit_last_error());
  return cond ? 0 : 1;
}

/* `status` is TRANSIT_LOGIC_ERROR with an error containing both parts. */
static int logic_error(int rank, transit_status status, const char* part, const char* other) {
  const char* error = transit_last_error();
  if (status != TRANSIT_LOGIC_ERROR || strstr(error, part) == NULL || strstr(error, other) == NULL) {
    fprintf(stderr, "PE %d: status %d, expected %d with \"%s\" and \"%s\" in: %s\n", rank, (int)status,
            (int)TRANSIT_LOGIC_ERROR, part, other, error);
    return 1;
  }
  fprintf(stderr, "PE %d: %s\n", rank, error);
  fflush(stderr);
  return 0;
}

static int count_items(const void* items, size_t count, void* user) {
  (void)items;
  *(long*)user += (long)count;
  return 0;
}

/* Inserts 10 items for the next PE. */
static transit_streamer* streamer_with_items(transit_context* ctx, long* delivered) {
  transit_streamer* s = NULL;
  if (transit_streamer_create(ctx, 8, count_items, delivered, &s) != TRANSIT_OK) return NULL;
  const int next = (transit_rank(ctx) + 1) % transit_size(ctx);
  int dests[10];
  uint64_t items[10];
  for (int i = 0; i < 10; ++i) {
    dests[i] = next;
    items[i] = (uint64_t)i;
  }
  if (transit_streamer_insert(s, dests, items, 10) != TRANSIT_OK) return NULL;
  return s;
}

static int destroy_case(transit_context* ctx) {
  const int rank = transit_rank(ctx);
  long delivered = 0;
  transit_streamer* s = streamer_with_items(ctx, &delivered);
  int failures = check(rank, s != NULL, "streamer with items");
  if (s == NULL) return failures;
  failures += logic_error(rank, transit_streamer_destroy(s), "destroyed mid-step", "10 items buffered");
  /* The context is still usable: a barrier, and a whole step of a new streamer. */
  failures += check(rank, transit_barrier(ctx) == TRANSIT_OK, "barrier after the loss");
  delivered = 0;
  transit_streamer* again = streamer_with_items(ctx, &delivered);
  failures += check(rank, again != NULL, "a new streamer");
  if (again == NULL) return failures;
  failures += check(rank, transit_streamer_finish(again) == TRANSIT_OK, "finish of the new streamer");
  failures += check(rank, delivered == 10, "10 items delivered by the new streamer");
  failures += check(rank, transit_streamer_destroy(again) == TRANSIT_OK, "destroy after finish");
  return failures;
}

static int peer_left_case(transit_context* ctx) {
  const int rank = transit_rank(ctx);
  long delivered = 0;
  transit_streamer* s = streamer_with_items(ctx, &delivered);
  if (s == NULL) return check(rank, 0, "streamer with items");
  /* PE 0 fails as a C program that checks its status does: its body returns nonzero. */
  if (rank == 0)
    return 1 + logic_error(rank, transit_streamer_destroy(s), "destroyed mid-step", "10 items buffered");
  const transit_status status = transit_streamer_finish(s);
  fprintf(stderr, "PE %d: finish: status %d: %s\n", rank, (int)status, transit_last_error());
  transit_streamer_destroy(s); /* mid-step too: its own peers then stop waiting for it */
  return status == TRANSIT_OK ? check(rank, 0, "finish fails when PE 0 left") : 0;
}

static int undestroyed_body(transit_context* ctx, void* user) {
  (void)user;
  static long delivered = 0;
  return streamer_with_items(ctx, &delivered) == NULL; /* returns with it open */
}

typedef int (*case_fn)(transit_context*);
static case_fn chosen = NULL;
/* Counted apart from the run's status: a run that swallowed a PE's failure must not pass. */
static atomic_int body_failures = 0;
static int run_body(transit_context* ctx, void* user) {
  (void)user;
  const int failures = chosen(ctx);
  atomic_fetch_add(&body_failures, failures);
  return failures;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: loss destroy|peer_left|undestroyed local|threads PES|mpi\n");
    return 2;
  }
  const char* name = argv[1];
  const char* where = argv[2];
  chosen = strcmp(name, "destroy") == 0 ? destroy_case : strcmp(name, "peer_left") == 0 ? peer_left_case : NULL;
  int failures = 0;
  if (strcmp(name, "undestroyed") == 0 && strcmp(where, "threads") == 0 && argc > 3) {
    failures += logic_error(0, transit_run_local(atoi(argv[3]), undestroyed_body, NULL), "not destroyed",
                            "10 items buffered");
  } else if (chosen == NULL) {
    fprintf(stderr, "unknown case '%s' for '%s'\n", name, where);
    return 2;
  } else if (strcmp(where, "local") == 0) {
    transit_context* ctx = NULL;
    failures += check(0, transit_context_create_local(&ctx) == TRANSIT_OK, "context_create_local");
    if (ctx == NULL) return 1;
    failures += chosen(ctx);
    failures += check(0, transit_context_destroy(ctx) == TRANSIT_OK, "context_destroy");
  } else if (strcmp(where, "threads") == 0 && argc > 3) {
    const transit_status status = transit_run_local(atoi(argv[3]), run_body, NULL);
    failures += atomic_load(&body_failures);
    failures += check(0, status == TRANSIT_OK || atomic_load(&body_failures) != 0,
                      "transit_run_local returns what a body failed with");
#ifdef TRANSIT_TEST_MPI
  } else if (strcmp(where, "mpi") == 0) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm world = MPI_COMM_WORLD;
    transit_context* ctx = NULL;
    failures += check(0, transit_context_create_mpi(&world, &ctx) == TRANSIT_OK, "context_create_mpi");
    if (ctx != NULL) {
      failures += chosen(ctx);
      failures += check(transit_rank(ctx), transit_context_destroy(ctx) == TRANSIT_OK, "context_destroy");
    }
    MPI_Finalize();
#endif
  } else {
    fprintf(stderr, "unknown place '%s' for '%s'\n", where, name);
    return 2;
  }
  if (failures != 0) return 1;
  printf("passed\n");
  return 0;
}
