#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failed check: prints where and why, and makes the kernel fail. */
#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                       \
      fprintf(stderr, "\n");                                              \
      return 1;                                                           \
    }                                                                     \
  } while (0)
/* A transit call that must succeed. */
#define OK(call) CHECK((call) == TRANSIT_OK, "%s", transit_last_error())

/* SplitMix64, one stream per PE (bench/bench.hpp's rng). */
static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static uint64_t next_random(uint64_t* state) { return mix(*state += 0x9e3779b97f4a7c15ULL); }
static uint64_t below(uint32_t bits, uint64_t n) { return ((uint64_t)bits * n) >> 32; }

struct table {
  uint64_t* counts;
  uint64_t slots;
};

/* The batch callback: a whole run of arrived slot indices, read in place. */
static int count_updates(const void* items, size_t count, void* user) {
  struct table* t = user;
  const uint64_t* slot = items;
  for (size_t i = 0; i < count; ++i) {
    if (slot[i] >= t->slots) return 2; /* a slot this PE does not hold: a wrong item */
    ++t->counts[slot[i]];
  }
  return 0;
}

enum { batch = 1024 };

int check_histogram(transit_context* ctx, uint64_t updates, uint64_t slots) {
  const int rank = transit_rank(ctx), pes = transit_size(ctx);
  struct table t = {calloc(slots, sizeof(uint64_t)), slots};
  uint64_t* expected = calloc(slots, sizeof(uint64_t));
  CHECK(t.counts != NULL && expected != NULL, "out of memory");
  transit_streamer* s = NULL;
  OK(transit_streamer_create(ctx, sizeof(uint64_t), count_updates, &t, &s));
  int dests[batch];
  uint64_t items[batch];
  uint64_t state = mix((uint64_t)rank + 1);
  for (uint64_t done = 0; done < updates;) {
    size_t n = 0;
    for (; n < batch && done < updates; ++n, ++done) {
      const uint64_t r = next_random(&state);
      dests[n] = (int)below((uint32_t)(r >> 32), (uint64_t)pes);
      items[n] = below((uint32_t)r, slots);
    }
    OK(transit_streamer_insert(s, dests, items, n));
  }
  OK(transit_streamer_finish(s));
  OK(transit_streamer_destroy(s));

  int64_t sum = 0;
  for (uint64_t i = 0; i < slots; ++i) sum += (int64_t)t.counts[i];
  OK(transit_allreduce(ctx, &sum, 1, TRANSIT_INT64, TRANSIT_SUM));
  CHECK(sum == (int64_t)(updates * (uint64_t)pes), "global sum %lld, expected %llu x %d", (long long)sum,
        (unsigned long long)updates, pes);
  /* Every PE's stream again: the updates it sent here. */
  for (int p = 0; p < pes; ++p) {
    uint64_t other = mix((uint64_t)p + 1);
    for (uint64_t i = 0; i < updates; ++i) {
      const uint64_t r = next_random(&other);
      if ((int)below((uint32_t)(r >> 32), (uint64_t)pes) == rank) ++expected[below((uint32_t)r, slots)];
    }
  }
  CHECK(memcmp(expected, t.counts, slots * sizeof(uint64_t)) == 0, "PE %d's table differs from its recomputation",
        rank);
  free(expected);
  free(t.counts);
  return 0;
}

static int check_int64_array(transit_context* ctx) {
  const int rank = transit_rank(ctx), pes = transit_size(ctx);
  const size_t n = 10 * (size_t)pes + 3;
  transit_array* a = NULL;
  OK(transit_array_create(ctx, n, TRANSIT_INT64, &a));
  CHECK(transit_array_size(a) == n, "size %zu, expected %zu", transit_array_size(a), n);
  const size_t k = 50; /* fetch_adds per PE */
  uint64_t* idx = malloc((n + k) * sizeof(uint64_t));
  int64_t* val = malloc((n + k) * sizeof(int64_t));
  int64_t* got = malloc((n + k) * sizeof(int64_t));
  CHECK(idx != NULL && val != NULL && got != NULL, "out of memory");
  /* put: PE r writes index + 1 to the indices i with i % PEs == r, from the last one down. */
  size_t mine = 0;
  for (size_t i = n; i-- > 0;)
    if (i % (size_t)pes == (size_t)rank) {
      idx[mine] = i;
      val[mine++] = (int64_t)i + 1;
    }
  OK(transit_array_put(a, idx, val, mine));
  OK(transit_array_sync(a));
  for (size_t i = 0; i < n; ++i) idx[i] = n - 1 - i;
  OK(transit_array_get(a, idx, got, n));
  for (size_t i = 0; i < n; ++i) CHECK(got[i] == (int64_t)idx[i] + 1, "get [%llu] = %lld", (unsigned long long)idx[i], (long long)got[i]);
  OK(transit_array_sync(a));
  /* accumulate: every PE adds rank + 1 everywhere, and takes the max with 0 (no change). */
  for (size_t i = 0; i < n; ++i) val[i] = rank + 1;
  OK(transit_array_accumulate(a, idx, val, n, TRANSIT_SUM));
  for (size_t i = 0; i < n; ++i) val[i] = 0;
  OK(transit_array_accumulate(a, idx, val, n, TRANSIT_MAX));
  OK(transit_array_sync(a));
  const int64_t added = (int64_t)pes * (pes + 1) / 2;
  void* block = NULL;
  size_t first = 0, count = 0;
  OK(transit_array_local(a, &block, &first, &count));
  for (size_t i = 0; i < count; ++i)
    CHECK(((int64_t*)block)[i] == (int64_t)(first + i) + 1 + added, "local [%zu] = %lld", first + i,
          (long long)((int64_t*)block)[i]);
  int64_t held = (int64_t)count;
  OK(transit_allreduce(ctx, &held, 1, TRANSIT_INT64, TRANSIT_SUM));
  CHECK(held == (int64_t)n, "the local blocks hold %lld elements, expected %zu", (long long)held, n);
  /* fetch_add: k adds of 1 to element 0 from every PE, in one batch; the olds are all distinct. */
  for (size_t i = 0; i < k; ++i) {
    idx[i] = 0;
    val[i] = 1;
  }
  const int64_t base = 1 + added;
  OK(transit_array_fetch_add(a, idx, val, got, k));
  int64_t olds = 0;
  for (size_t i = 0; i < k; ++i) {
    CHECK(got[i] >= base && got[i] < base + (int64_t)k * pes, "old value %lld", (long long)got[i]);
    if (i > 0) CHECK(got[i] > got[i - 1], "olds of one PE out of order: %lld then %lld", (long long)got[i - 1], (long long)got[i]);
    olds += got[i];
  }
  OK(transit_allreduce(ctx, &olds, 1, TRANSIT_INT64, TRANSIT_SUM));
  const int64_t total = (int64_t)k * pes;
  CHECK(olds == total * base + total * (total - 1) / 2, "sum of olds %lld", (long long)olds);
  OK(transit_array_sync(a));
  OK(transit_array_get(a, idx, got, 1));
  CHECK(got[0] == base + total, "element 0 = %lld, expected %lld", (long long)got[0], (long long)(base + total));
  OK(transit_array_sync(a));
  OK(transit_array_destroy(a));
  free(idx);
  free(val);
  free(got);
  return 0;
}

static int check_double_array(transit_context* ctx) {
  const int pes = transit_size(ctx);
  const size_t n = 7;
  transit_array* a = NULL;
  OK(transit_array_create(ctx, n, TRANSIT_DOUBLE, &a));
  uint64_t idx[7];
  double val[7], got[7];
  for (size_t i = 0; i < n; ++i) {
    idx[i] = i;
    val[i] = 0.5;
  }
  OK(transit_array_accumulate(a, idx, val, n, TRANSIT_SUM));
  OK(transit_array_sync(a));
  OK(transit_array_get(a, idx, got, n));
  for (size_t i = 0; i < n; ++i) CHECK(got[i] == 0.5 * pes, "double [%zu] = %g, expected %g", i, got[i], 0.5 * pes);
  OK(transit_array_sync(a));
  OK(transit_array_destroy(a));
  double x = 1.5;
  OK(transit_allreduce(ctx, &x, 1, TRANSIT_DOUBLE, TRANSIT_MAX));
  CHECK(x == 1.5, "allreduce max %g", x);
  return 0;
}

int check_arrays(transit_context* ctx) { return check_int64_array(ctx) || check_double_array(ctx); }

struct tagged {
  int32_t source, dest, seq;
};

int check_exchange(transit_context* ctx) {
  const int rank = transit_rank(ctx), pes = transit_size(ctx);
  transit_exchange* x = NULL;
  OK(transit_exchange_create(ctx, sizeof(struct tagged), &x));
  for (int round = 0; round < 3; ++round) {
    /* To the next PE rank + 1 + round items, to the previous one 2 (one peer when they coincide). */
    int peers[2] = {(rank + 1) % pes, (rank + pes - 1) % pes};
    size_t counts[2] = {(size_t)(rank + 1 + round), 2};
    const size_t peer_count = peers[0] == peers[1] ? 1 : 2;
    struct tagged items[64];
    CHECK(counts[0] + counts[1] <= 64, "%d PEs: more items than the test's buffer", pes);
    size_t at = 0;
    for (size_t p = 0; p < peer_count; ++p)
      for (size_t i = 0; i < counts[p]; ++i) items[at++] = (struct tagged){rank, peers[p], (int32_t)i};
    transit_received in;
    OK(transit_exchange_run(x, peers, counts, peer_count, items, &in));
    size_t expected_total = 0;
    for (int s = 0; s < pes; ++s) {
      size_t expect = 0;
      if ((s + 1) % pes == rank) expect += (size_t)(s + 1 + round);
      if ((s + pes - 1) % pes == rank && (s + pes - 1) % pes != (s + 1) % pes) expect += 2;
      const size_t got = in.offsets[s + 1] - in.offsets[s];
      CHECK(got == expect, "round %d: %zu items from PE %d, expected %zu", round, got, s, expect);
      const struct tagged* from = (const struct tagged*)in.items + in.offsets[s];
      for (size_t i = 0; i < got; ++i)
        CHECK(from[i].source == s && from[i].dest == rank, "round %d: item %zu from PE %d names %d -> %d", round, i, s,
              from[i].source, from[i].dest);
      expected_total += expect;
    }
    CHECK(in.total == expected_total, "round %d: %zu items, expected %zu", round, in.total, expected_total);
  }
  OK(transit_exchange_destroy(x));
  return 0;
}

int check_all(transit_context* ctx) {
  return check_histogram(ctx, 100000, 1000) || check_arrays(ctx) || check_exchange(ctx);
}
