// convey_histogram: `transit bench histogram`'s kernel written on bale's conveyors over plain MPI
// (convey configured --with-mpi), the baseline issue 53 names for many ranks per core. transit's
// code; it links the libconvey.a that bench/bale/convey_mpi.sh builds from a fetched bale.
//
//   mpirun -n P convey_histogram [--items-per-pe N] [--table-slots S] [--seed X]
//
// The same draws as transit's kernel (bench/bench.hpp: splitmix64 per PE, seeded by pe_seed with
// the kernel's salt; Lemire's multiply-shift for the PE and the slot), an 8-byte item (the slot)
// to the slot's PE, where the pull increments it, as convey's own examples/histo.c does. Timed as
// transit times its run: from a barrier to this PE's end of the conveyor (convey_advance returned
// convey_DONE), the slowest PE's time; the conveyor is made and begun before the clock starts.
// Verified as transit verifies: the table's global sum must equal the updates sent. Prints one
// JSON record on rank 0; exit status 0 verified, 1 not verified or a conveyor failed, 2 bad usage.
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "convey.h"

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint32_t below(uint32_t bits, uint64_t n) { return (uint32_t)(((uint64_t)bits * n) >> 32); }

static int rank;

static void die(int status, const char* message, const char* value) {
  if (rank == 0) fprintf(stderr, "convey_histogram: %s%s\n", message, value ? value : "");
  fflush(stderr);
  MPI_Finalize();
  exit(status);
}

static uint64_t positive(const char* name, const char* text) {
  char* end = NULL;
  errno = 0;
  const unsigned long long v = text ? strtoull(text, &end, 10) : 0;
  if (text == NULL || *text == '\0' || *end != '\0' || errno != 0 || v == 0 || text[0] == '-') {
    char message[200];
    snprintf(message, sizeof message, "%s: got '%s', expected a positive integer", name, text ? text : "");
    die(2, message, NULL);
  }
  return (uint64_t)v;
}

// convey's MPI layer (mpp2mpi.c): MPI_Init, then its rank and size variables.
extern int xmpi_init(int argc, char* argv[]);

int main(int argc, char* argv[]) {
  xmpi_init(argc, argv);
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  uint64_t n = UINT64_C(1) << 22, slots = 1000, seed = 1;  // transit bench histogram's defaults
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--items-per-pe") == 0)
      n = positive("--items-per-pe", i + 1 < argc ? argv[++i] : NULL);
    else if (strcmp(argv[i], "--table-slots") == 0)
      slots = positive("--table-slots", i + 1 < argc ? argv[++i] : NULL);
    else if (strcmp(argv[i], "--seed") == 0)
      seed = positive("--seed", i + 1 < argc ? argv[++i] : NULL);
    else {
      char message[300];
      snprintf(message, sizeof message, "unknown argument '%.200s' (expected --items-per-pe, --table-slots or --seed)",
               argv[i]);
      die(2, message, NULL);
    }
  }
  if (slots > UINT32_MAX) die(2, "--table-slots: expected at most 2^32 - 1", NULL);

  uint64_t* table = calloc(slots, sizeof *table);
  convey_t* conveyor = convey_new(SIZE_MAX, 0, NULL, convey_opt_SCATTER | convey_opt_ALERT);
  if (table == NULL || conveyor == NULL) die(1, "cannot make the table or the conveyor", NULL);
  if (convey_begin(conveyor, sizeof(uint64_t), _Alignof(uint64_t)) != convey_OK) die(1, "convey_begin failed", NULL);

  // pe_seed(opt, rank, 0x4157) of bench/bench.hpp.
  uint64_t state = mix(seed * UINT64_C(0x100000001b3) + 0x4157) ^ mix((uint64_t)rank + 1);
  const uint64_t pes = (uint64_t)size;

  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  uint64_t sent = 0;
  uint64_t slot = 0;
  int64_t pe = -1;  // the drawn update not yet pushed, if pe >= 0
  for (;;) {
    const int rv = convey_advance(conveyor, sent == n);
    if (rv == convey_DONE) break;
    if (rv < 0) die(1, "convey_advance failed", NULL);
    for (; sent < n; ++sent) {
      if (pe < 0) {
        const uint64_t r = mix(state += UINT64_C(0x9e3779b97f4a7c15));
        pe = below((uint32_t)(r >> 32), pes);
        slot = below((uint32_t)r, slots);
      }
      if (!convey_push(conveyor, &slot, pe)) break;  // full: advance, then push it again
      pe = -1;
    }
    const uint64_t* arrived;
    while ((arrived = convey_apull(conveyor, NULL)) != NULL) ++table[*arrived];
  }
  const double mine = MPI_Wtime() - start;
  MPI_Barrier(MPI_COMM_WORLD);
  double seconds = 0;
  MPI_Allreduce(&mine, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  convey_reset(conveyor);
  convey_free(conveyor);

  uint64_t sum = 0, total = 0;
  for (uint64_t i = 0; i < slots; ++i) sum += table[i];
  MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  free(table);
  const int verified = total == n * pes;
  if (rank == 0) {
    printf("{\"program\": \"convey_histogram\", \"baseline\": \"bale conveyors over MPI\", \"ranks\": %d, "
           "\"items_per_pe\": %" PRIu64 ", \"table_slots\": %" PRIu64 ", \"seconds\": %.9g, "
           "\"items_per_second_per_pe\": %.9g, \"counted\": %" PRIu64 ", \"verified\": %s}\n",
           size, n, slots, seconds, (double)n / seconds, total, verified ? "true" : "false");
    if (!verified)
      fprintf(stderr, "convey_histogram: the table counted %" PRIu64 " updates, expected %" PRIu64 "\n", total,
              n * pes);
  }
  MPI_Finalize();
  return verified ? 0 : 1;
}
