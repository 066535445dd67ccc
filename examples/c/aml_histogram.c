/* An AML program (graph500's active-message interface): a distributed histogram. It is written
 * for AML's aml.h alone and links against transit_aml unchanged:
 *   mpicc aml_histogram.c $(pkg-config --cflags --libs transit-aml) -o aml_histogram
 *   mpirun -n 4 ./aml_histogram 1000000 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aml.h"

#define SLOTS 4096
static long table[SLOTS]; /* this PE's part of the histogram */

/* Handler id 1: one update, the slot's index on this PE. */
static void update(int from, void* data, int length) {
  uint32_t slot;
  (void)from;
  (void)length;
  memcpy(&slot, data, sizeof slot); /* AML's bytes are not aligned */
  table[slot % SLOTS]++;
}

int main(int argc, char** argv) {
  aml_init(&argc, &argv); /* MPI_Init inside */
  const long updates = argc > 1 ? atol(argv[1]) : 1000000;
  aml_register_handler(update, 1);
  uint64_t x = 88172645463325252ull + (uint64_t)my_pe(); /* xorshift, one stream per PE */
  for (long i = 0; i < updates; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const uint32_t slot = (uint32_t)(x % SLOTS);
    aml_send((void*)&slot, 1, (int)sizeof slot, (int)((x >> 32) % (uint64_t)num_pes()));
  }
  aml_barrier(); /* every update handled everywhere */
  long counted = 0;
  for (int i = 0; i < SLOTS; ++i) counted += table[i];
  aml_long_allsum(&counted);
  const int ok = counted == updates * num_pes();
  if (my_pe() == 0) printf("%d PEs counted %ld updates\n", num_pes(), counted);
  aml_finalize(); /* MPI_Finalize inside */
  return ok ? 0 : 1;
}
