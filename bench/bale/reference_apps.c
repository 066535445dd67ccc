/* Prints checksums of what bale's ig and randperm compute, for tests/apps/ig and
   tests/apps/randperm to hold as reference:
   - ig: the target array bale's ig gathers (-n L -T T -s SEED): its draws (lgp_rand_seed,
     lgp_rand_int64) read from the table bale fills (entry i holds -(i + 1)) by lgp_get_int64, as
     ig_agp does; checksum = sum over PE p and request i of (i * P + p + 1) * tgt[i].
   - randperm: the permutation of N rand_permp_agp, rand_permp_exstack (buf_cnt B) and
     rand_permp_conveyor return with bale's randperm seeds (seed + MYTHREAD); checksum = sum over
     g of (g + 1) * perm[g], and the permutation itself when N <= 40.
   Built by build.sh against bale's libraries; run:
     bale-oshrun -n PES reference_apps L T N B SEED */
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <libgetput.h>
#include <spmat.h>

static void print_perm(const char* style, SHARED int64_t* perm, int64_t N, int64_t B, int64_t seed) {
  int64_t sum = 0;
  int64_t lN = (N + THREADS - MYTHREAD - 1) / THREADS;
  int64_t* lperm = lgp_local_part(int64_t, perm);
  for (int64_t i = 0; i < lN; i++) sum += (i * THREADS + MYTHREAD + 1) * lperm[i];
  sum = lgp_reduce_add_l(sum);
  if (!MYTHREAD) {
    printf("randperm %s -N %" PRId64 " -b %" PRId64 " -s %" PRId64 " on %d PEs: is_perm %d checksum %" PRId64,
           style, N, B, seed, THREADS, is_perm(perm, N), sum);
    if (N <= 40) {
      printf(" perm:");
      for (int64_t g = 0; g < N; g++) printf(" %" PRId64, lgp_get_int64(perm, g));
    }
    printf("\n");
    fflush(stdout);
  } else {
    is_perm(perm, N);  /* collective */
  }
  lgp_barrier();
}

int main(int argc, char** argv) {
  lgp_init(argc, argv);
  if (argc != 6) {
    if (!MYTHREAD) fprintf(stderr, "usage: reference_apps REQUESTS_PER_PE TABLE_PER_PE PERM_SIZE BUF_CNT SEED\n");
    lgp_finalize();
    return 2;
  }
  int64_t L = atol(argv[1]), T = atol(argv[2]), N = atol(argv[3]), B = atol(argv[4]), seed = atol(argv[5]);

  /* ig */
  int64_t tab_siz = T * THREADS;
  SHARED int64_t* table = lgp_all_alloc(tab_siz, sizeof(int64_t));
  int64_t* ltable = lgp_local_part(int64_t, table);
  for (int64_t i = 0; i < T; i++) ltable[i] = -(i * THREADS + MYTHREAD + 1);
  lgp_barrier();
  lgp_rand_seed(seed);
  int64_t sum = 0;
  for (int64_t i = 0; i < L; i++) sum += (i * THREADS + MYTHREAD + 1) * lgp_get_int64(table, lgp_rand_int64(tab_siz));
  sum = lgp_reduce_add_l(sum);
  if (!MYTHREAD) printf("ig -n %" PRId64 " -T %" PRId64 " -s %" PRId64 " on %d PEs: checksum %" PRId64 "\n", L, T, seed, THREADS, sum);
  lgp_barrier();
  lgp_all_free(table);

  /* randperm, as bale's randperm main calls the kernels */
  SHARED int64_t* perm = rand_permp_agp(N, (int)(seed + MYTHREAD));
  print_perm("agp", perm, N, B, seed);
  lgp_all_free(perm);
  perm = rand_permp_exstack(N, (int)(seed + MYTHREAD), B);
  print_perm("exstack", perm, N, B, seed);
  lgp_all_free(perm);
  perm = rand_permp_conveyor(N, (int)(seed + MYTHREAD));
  print_perm("conveyor", perm, N, B, seed);
  lgp_all_free(perm);
  lgp_finalize();
  return 0;
}
