/* Prints bale's random draws (lgp_rand_seed, lgp_rand_double, lgp_rand_int64) for a few seeds on
   every PE, and a checksum of the histogram bale's histo builds from its draws (-n L -T T -s seed):
   the sum over global index g of (g + 1) * count[g]^2. tests/apps holds its output as reference.
   Built by build.sh against bale's libgetput; run: bale-oshrun -n PES reference_draws L T SEED */
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <libgetput.h>
int main(int argc, char** argv) {
  lgp_init(argc, argv);
  if (argc != 4) {
    if (!MYTHREAD) fprintf(stderr, "usage: reference_draws UPDATES_PER_PE TABLE_PER_PE SEED\n");
    lgp_finalize();
    return 2;
  }
  int64_t seeds[] = {122222, 0, 7};
  for (int s = 0; s < 3; s++) {
    lgp_barrier();
    for (int pe = 0; pe < THREADS; pe++) {
      if (pe == MYTHREAD) {
        lgp_rand_seed(seeds[s]);
        printf("seed %" PRId64 " PE %d doubles:", seeds[s], MYTHREAD);
        for (int i = 0; i < 3; i++) printf(" %.17g", lgp_rand_double());
        lgp_rand_seed(seeds[s]);
        printf(" ints(1000):");
        for (int i = 0; i < 5; i++) printf(" %" PRId64, lgp_rand_int64(1000));
        /* draw 250 more to cross a refill, print the 251..255th */
        for (int i = 0; i < 250; i++) lgp_rand_int64(1000);
        printf(" ints[255..259]:");
        for (int i = 0; i < 5; i++) printf(" %" PRId64, lgp_rand_int64(1000));
        printf("\n"); fflush(stdout);
      }
      lgp_barrier();
    }
  }
  /* histo: as bale's histo main draws its updates (-n L -T T -s seed): checksum of the histogram,
     sum over global index g of (g + 1) * count[g]^2, over all PEs. */
  int64_t L = atol(argv[1]), T = atol(argv[2]), seed = atol(argv[3]);
  int64_t N = T * THREADS;
  SHARED int64_t* counts = lgp_all_alloc(N, sizeof(int64_t));
  int64_t* lcounts = lgp_local_part(int64_t, counts);
  for (int64_t i = 0; i < T; i++) lcounts[i] = 0;
  lgp_barrier();
  lgp_rand_seed(seed);
  for (int64_t i = 0; i < L; i++) lgp_atomic_add(counts, lgp_rand_int64(N), 1L);
  lgp_barrier();
  int64_t sum = 0;
  for (int64_t i = 0; i < T; i++) sum += (i * THREADS + MYTHREAD + 1) * lcounts[i] * lcounts[i];
  sum = lgp_reduce_add_l(sum);
  if (!MYTHREAD) printf("histo -n %" PRId64 " -T %" PRId64 " -s %" PRId64 " on %d PEs: checksum %" PRId64 "\n", L, T, seed, THREADS, sum);
  lgp_all_free(counts);
  lgp_finalize();
  return 0;
}
