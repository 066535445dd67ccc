/* Bad input to the C API, one case per run: bad_input CASE. Each case makes the bad call, checks
 * its status and that transit_last_error() names what it must, and checks that nothing was done;
 * it prints "passed" and exits 0 only then. The mpi cases initialise MPI themselves. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRANSIT_TEST_MPI
#include <mpi.h>
#endif

#include <transit/transit.h>

static int failures = 0;

/* `status` must be `expected`, and the error must contain every one of the NULL-ended strings. */
static void expect(const char* what, transit_status status, transit_status expected, ...) {
  const char* error = transit_last_error();
  if (status != expected) {
    fprintf(stderr, "%s: status %d, expected %d (error: %s)\n", what, (int)status, (int)expected, error);
    ++failures;
    return;
  }
  va_list parts;
  va_start(parts, expected);
  for (const char* part = va_arg(parts, const char*); part != NULL; part = va_arg(parts, const char*)) {
    if (strstr(error, part) == NULL) {
      fprintf(stderr, "%s: error \"%s\" does not contain \"%s\"\n", what, error, part);
      ++failures;
    }
  }
  va_end(parts);
  printf("%s: %s\n", what, error);
}

static void require(int cond, const char* what) {
  if (!cond) {
    fprintf(stderr, "failed: %s (last error: %s)\n", what, transit_last_error());
    ++failures;
  }
}

static int delivered = 0;
static int count_items(const void* items, size_t count, void* user) {
  (void)items;
  (void)user;
  delivered += (int)count;
  return 0;
}
static int fail_with_7(const void* items, size_t count, void* user) {
  (void)items;
  (void)user;
  delivered += (int)count;
  return 7;
}

static transit_context* local(void) {
  transit_context* ctx = NULL;
  if (transit_context_create_local(&ctx) != TRANSIT_OK) {
    fprintf(stderr, "create_local: %s\n", transit_last_error());
    exit(1);
  }
  return ctx;
}

static void dest_out_of_range(void) {
  transit_context* ctx = local();
  transit_streamer* s = NULL;
  require(transit_streamer_create(ctx, 8, count_items, NULL, &s) == TRANSIT_OK, "streamer_create");
  const int dests[3] = {0, 0, 5};
  const uint64_t items[3] = {1, 2, 3};
  expect("dest 5 of 1 PE", transit_streamer_insert(s, dests, items, 3), TRANSIT_OUT_OF_RANGE, "dests[2] = 5",
         "[0, 1)", "nothing was inserted", NULL);
  const int negative[1] = {-1};
  expect("dest -1", transit_streamer_insert(s, negative, items, 1), TRANSIT_OUT_OF_RANGE, "dests[0] = -1", NULL);
  require(transit_streamer_finish(s) == TRANSIT_OK, "finish");
  require(delivered == 0, "no item delivered");
  require(transit_streamer_destroy(s) == TRANSIT_OK, "streamer_destroy");
  require(transit_context_destroy(ctx) == TRANSIT_OK, "context_destroy");
}

static void index_out_of_range(void) {
  transit_context* ctx = local();
  transit_array* a = NULL;
  require(transit_array_create(ctx, 10, TRANSIT_INT64, &a) == TRANSIT_OK, "array_create");
  const uint64_t idx[2] = {1, 10};
  const int64_t val[2] = {5, 5};
  int64_t got[2] = {-1, -1};
  expect("put at 10 of 10", transit_array_put(a, idx, val, 2), TRANSIT_OUT_OF_RANGE, "indices[1] = 10", "[0, 10)",
         "nothing was done", NULL);
  expect("get at 10 of 10", transit_array_get(a, idx, got, 2), TRANSIT_OUT_OF_RANGE, "indices[1] = 10", NULL);
  expect("accumulate at 10", transit_array_accumulate(a, idx, val, 2, TRANSIT_SUM), TRANSIT_OUT_OF_RANGE,
         "indices[1] = 10", NULL);
  expect("fetch_add at 10", transit_array_fetch_add(a, idx, val, got, 2), TRANSIT_OUT_OF_RANGE, "indices[1] = 10", NULL);
  expect("accumulate with op 9", transit_array_accumulate(a, idx, val, 1, (transit_op)9), TRANSIT_INVALID_ARGUMENT,
         "op", "9", NULL);
  require(transit_array_sync(a) == TRANSIT_OK, "sync");
  require(transit_array_get(a, idx, got, 1) == TRANSIT_OK && got[0] == 0, "element 1 untouched");
  require(transit_array_destroy(a) == TRANSIT_OK, "array_destroy");
  transit_array* bad = NULL;
  expect("array of type 5", transit_array_create(ctx, 4, (transit_type)5, &bad), TRANSIT_INVALID_ARGUMENT, "type",
         NULL);
  /* Values outside the enums, checked as the integers they are (UBSan's enum check runs in test-asan). */
  int64_t one = 1;
  expect("allreduce with op -1", transit_allreduce(ctx, &one, 1, TRANSIT_INT64, (transit_op)-1),
         TRANSIT_INVALID_ARGUMENT, "op", "-1", NULL);
  expect("allreduce of type 7", transit_allreduce(ctx, &one, 1, (transit_type)7, TRANSIT_SUM), TRANSIT_INVALID_ARGUMENT,
         "type", "7", NULL);
  require(transit_context_destroy(ctx) == TRANSIT_OK, "context_destroy");
}

static void exchange_bad_peers(void) {
  transit_context* ctx = local();
  transit_exchange* x = NULL;
  require(transit_exchange_create(ctx, 4, &x) == TRANSIT_OK, "exchange_create");
  const int peers[2] = {0, 3};
  const int twice[2] = {0, 0};
  const size_t counts[2] = {1, 1};
  const int32_t items[2] = {1, 2};
  transit_received in;
  expect("peer 3 of 1 PE", transit_exchange_run(x, peers, counts, 2, items, &in), TRANSIT_OUT_OF_RANGE,
         "peers[1] = 3", "[0, 1)", NULL);
  expect("peer 0 twice", transit_exchange_run(x, twice, counts, 2, items, &in), TRANSIT_INVALID_ARGUMENT,
         "peers[1] = 0", "twice", NULL);
  require(transit_exchange_run(x, peers, counts, 1, items, &in) == TRANSIT_OK && in.total == 1, "a good run after");
  require(transit_exchange_destroy(x) == TRANSIT_OK, "exchange_destroy");
  require(transit_context_destroy(ctx) == TRANSIT_OK, "context_destroy");
}

static void null_handles(void) {
  const int dest = 0;
  const uint64_t item = 0;
  expect("insert into NULL", transit_streamer_insert(NULL, &dest, &item, 1), TRANSIT_INVALID_ARGUMENT, "streamer",
         "NULL", NULL);
  expect("finish NULL", transit_streamer_finish(NULL), TRANSIT_INVALID_ARGUMENT, "NULL", NULL);
  expect("barrier on NULL", transit_barrier(NULL), TRANSIT_INVALID_ARGUMENT, "context", "NULL", NULL);
  expect("put into NULL", transit_array_put(NULL, &item, &item, 1), TRANSIT_INVALID_ARGUMENT, "array", NULL);
  expect("sync NULL", transit_array_sync(NULL), TRANSIT_INVALID_ARGUMENT, "array", NULL);
  transit_received in;
  expect("exchange NULL", transit_exchange_run(NULL, &dest, NULL, 0, NULL, &in), TRANSIT_INVALID_ARGUMENT, "exchange",
         NULL);
  transit_streamer* s = NULL;
  expect("streamer on NULL", transit_streamer_create(NULL, 8, count_items, NULL, &s), TRANSIT_INVALID_ARGUMENT,
         "context", NULL);
  expect("create_local(NULL)", transit_context_create_local(NULL), TRANSIT_INVALID_ARGUMENT, "out", NULL);
  require(transit_rank(NULL) == -1 && transit_size(NULL) == -1, "rank and size of NULL are -1");
  require(transit_context_destroy(NULL) == TRANSIT_OK && transit_streamer_destroy(NULL) == TRANSIT_OK &&
              transit_array_destroy(NULL) == TRANSIT_OK && transit_exchange_destroy(NULL) == TRANSIT_OK,
          "destroying NULL is a no-op");
  transit_context* ctx = local();
  expect("streamer without callback", transit_streamer_create(ctx, 8, NULL, NULL, &s), TRANSIT_INVALID_ARGUMENT,
         "deliver", NULL);
  require(s == NULL, "no streamer made");
  require(transit_context_destroy(ctx) == TRANSIT_OK, "context_destroy");
}

static void item_bytes(size_t bytes) {
  transit_context* ctx = local();
  transit_streamer* s = NULL;
  char expected[64];
  snprintf(expected, sizeof expected, "got '%zu', expected 1 to 65536", bytes);
  expect("streamer item_bytes", transit_streamer_create(ctx, bytes, count_items, NULL, &s), TRANSIT_INVALID_ARGUMENT,
         "item_bytes", expected, NULL);
  transit_exchange* x = NULL;
  expect("exchange item_bytes", transit_exchange_create(ctx, bytes, &x), TRANSIT_INVALID_ARGUMENT, "item_bytes",
         expected, NULL);
  require(s == NULL && x == NULL, "nothing made");
  require(transit_context_destroy(ctx) == TRANSIT_OK, "context_destroy");
}

static void callback_error(void) {
  transit_context* ctx = local();
  transit_streamer* s = NULL;
  require(transit_streamer_create(ctx, 8, fail_with_7, NULL, &s) == TRANSIT_OK, "streamer_create");
  const int dests[2] = {0, 0};
  const uint64_t items[2] = {1, 2};
  require(transit_streamer_insert(s, dests, items, 2) == TRANSIT_OK, "insert");
  expect("callback returning 7", transit_streamer_finish(s), TRANSIT_CALLBACK_ERROR, "returned 7", NULL);
  /* The run counts as delivered: finishing again delivers nothing twice. */
  require(transit_streamer_finish(s) == TRANSIT_OK, "finish again");
  require(delivered == 2, "both items delivered once");
  require(transit_streamer_destroy(s) == TRANSIT_OK, "streamer_destroy");
  require(transit_context_destroy(ctx) == TRANSIT_OK, "context_destroy");
}

static int fail_on_pe_1(transit_context* ctx, void* user) {
  (void)user;
  if (transit_rank(ctx) == 1) return 3;
  return transit_barrier(ctx) == TRANSIT_OK ? 0 : 4; /* unwound by PE 1's failure */
}

static void body_error(void) {
  expect("body returning 3 on PE 1", transit_run_local(3, fail_on_pe_1, NULL), TRANSIT_CALLBACK_ERROR,
         "returned 3 on PE 1", NULL);
  expect("run_local(-2)", transit_run_local(-2, fail_on_pe_1, NULL), TRANSIT_INVALID_ARGUMENT, "pes", "-2", NULL);
}

static void destroy_with_objects(void) {
  transit_context* ctx = local();
  transit_array* a = NULL;
  require(transit_array_create(ctx, 4, TRANSIT_DOUBLE, &a) == TRANSIT_OK, "array_create");
  expect("destroy with an array alive", transit_context_destroy(ctx), TRANSIT_LOGIC_ERROR, "1 streamers, arrays",
         NULL);
  require(transit_array_destroy(a) == TRANSIT_OK, "array_destroy");
  require(transit_context_destroy(ctx) == TRANSIT_OK, "context_destroy after");
}

#ifdef TRANSIT_TEST_MPI
static void mpi_case(const char* name, int* argc, char*** argv) {
  transit_context* ctx = NULL;
  if (strcmp(name, "not_initialised") == 0) {
    MPI_Comm world = MPI_COMM_WORLD;
    expect("before MPI_Init", transit_context_create_mpi(&world, &ctx), TRANSIT_INVALID_ARGUMENT, "initiali", NULL);
    require(ctx == NULL, "no context");
    return;
  }
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (strcmp(name, "finalised") == 0) {
    MPI_Finalize();
    MPI_Comm world = MPI_COMM_WORLD;
    expect("after MPI_Finalize", transit_context_create_mpi(&world, &ctx), TRANSIT_INVALID_ARGUMENT, "finali", NULL);
    require(ctx == NULL, "no context");
    return;
  }
  if (strcmp(name, "comm_null") == 0) {
    MPI_Comm null = MPI_COMM_NULL;
    expect("MPI_COMM_NULL", transit_context_create_mpi(&null, &ctx), TRANSIT_INVALID_ARGUMENT, "MPI_COMM_NULL", NULL);
    expect("a NULL MPI_Comm*", transit_context_create_mpi(NULL, &ctx), TRANSIT_INVALID_ARGUMENT, "comm", NULL);
  } else if (strcmp(name, "intercomm") == 0) {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 99, &inter);
    expect("an intercommunicator", transit_context_create_mpi(&inter, &ctx), TRANSIT_INVALID_ARGUMENT, "intercommunicator",
           NULL);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  } else {
    fprintf(stderr, "unknown case %s\n", name);
    ++failures;
  }
  require(ctx == NULL, "no context");
  /* MPI still works for the program after the refusals. */
  int ones = 1;
  MPI_Allreduce(MPI_IN_PLACE, &ones, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
}
#endif

int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "";
  if (strcmp(name, "dest_out_of_range") == 0) dest_out_of_range();
  else if (strcmp(name, "index_out_of_range") == 0) index_out_of_range();
  else if (strcmp(name, "exchange_bad_peers") == 0) exchange_bad_peers();
  else if (strcmp(name, "null_handles") == 0) null_handles();
  else if (strcmp(name, "item_bytes_zero") == 0) item_bytes(0);
  else if (strcmp(name, "item_bytes_too_large") == 0) item_bytes(65537);
  else if (strcmp(name, "callback_error") == 0) callback_error();
  else if (strcmp(name, "body_error") == 0) body_error();
  else if (strcmp(name, "destroy_with_objects") == 0) destroy_with_objects();
#ifdef TRANSIT_TEST_MPI
  else if (strcmp(name, "not_initialised") == 0 || strcmp(name, "finalised") == 0 || strcmp(name, "comm_null") == 0 ||
           strcmp(name, "intercomm") == 0)
    mpi_case(name, &argc, &argv);
#endif
  else {
    fprintf(stderr, "unknown case '%s'\n", name);
    return 2;
  }
  if (failures != 0) return 1;
  printf("passed\n");
  return 0;
}
