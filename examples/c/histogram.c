/* The histogram from C: every PE sends random updates to a table spread over the PEs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <transit/transit.h>

enum { slots = 1000, updates = 100000 };

static int count(const void* items, size_t n, void* table) { /* a whole run of arrived items */
  for (size_t i = 0; i < n; ++i) ++((int64_t*)table)[((const uint64_t*)items)[i]];
  return 0;
}

static int histogram(transit_context* ctx, void* user) {
  int64_t table[slots] = {0}, sum = 0;
  uint64_t random = (uint64_t)transit_rank(ctx) + 1, slot;
  transit_streamer* s;
  if (transit_streamer_create(ctx, sizeof slot, count, table, &s)) return 1;
  for (int i = 0; i < updates; ++i) {
    random = random * 6364136223846793005ULL + 1442695040888963407ULL; /* an LCG */
    int dest = (int)((random >> 33) % (uint64_t)transit_size(ctx));
    slot = (random >> 12) % slots;
    if (transit_streamer_insert(s, &dest, &slot, 1)) return 1;
  }
  if (transit_streamer_finish(s) || transit_streamer_destroy(s)) return 1;
  for (int i = 0; i < slots; ++i) sum += table[i];
  if (transit_allreduce(ctx, &sum, 1, TRANSIT_INT64, TRANSIT_SUM)) return 1;
  if (transit_rank(ctx) == 0) printf("%d PEs counted %lld updates\n", transit_size(ctx), (long long)sum);
  (void)user;
  return sum != (int64_t)updates * transit_size(ctx);
}

int main(int argc, char** argv) {
  if (transit_run_local(argc > 1 ? atoi(argv[1]) : 4, histogram, NULL) == TRANSIT_OK) return 0;
  fprintf(stderr, "histogram: %s\n", transit_last_error());
  return 1;
}
