/* MPI_Test, MPI_Testany and MPI_Ibarrier for the reference's AML under SimGrid 3.32's SMPI: sim.sh
 * links this file into the smpicc build (the reference's own code is unchanged). Three things SMPI
 * does not do as AML needs, found running it:
 *
 * 1. A send to MPI_PROC_NULL. AML starts each of its send slots as one (aml_init) and takes the
 *    first free slot with MPI_Testany (flush_buffer). MPI says such a request is active and
 *    completes at once, so MPI_Testany returns its index. SMPI keeps no communication for it and
 *    counts it as inactive: with every slot in that state MPI_Testany answers flag 1 with index
 *    MPI_UNDEFINED, and AML indexes its buffers with it (a crash in aml_send at 4 ranks on 2
 *    nodes). When SMPI answers so, each request still present is tested by MPI_Test, which SMPI
 *    completes for MPI_PROC_NULL as MPI does, and the first completed one is the answer.
 *
 * 2. The cost of a poll. AML waits by polling. SMPI charges a failed MPI_Test or MPI_Testany
 *    smpi/test seconds times a counter that every failed MPI_Testany of any rank increments (all
 *    ranks live in one process; smpi/grow-injected-times:no does not stop it there): 16 ranks
 *    polled the simulated clock to 2.6 million seconds within a minute. With smpi/test:0 no poll
 *    costs anything, and while every rank polls the clock cannot move. sim.sh sets smpi/test:0,
 *    and a failed call here sleeps GRAPH500_SIM_TEST_COST simulated seconds, the same every time.
 *
 * 3. MPI_Ibarrier is no barrier. SMPI's rank 0 posts its receives and its sends to every rank at
 *    once, so every other rank leaves as soon as rank 0 enters. AML's barrier counts on it (all
 *    messages acknowledged before anyone leaves): at 8 ranks, ranks left with a message of rank 2
 *    unacknowledged, its acknowledgement delayed until their next send to it, while rank 2 waited
 *    for it and they waited for rank 2 in MPI_Barrier: the simulated clock ran on forever. Here it
 *    is an MPI_Iallreduce of nothing, which SMPI runs as every rank sending to and receiving from
 *    every other: no rank completes before all have entered. */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

int smpi_nanosleep(const struct timespec* tp, struct timespec* t);

static void failed_poll(void) {
  static long nanoseconds = -1;
  if (nanoseconds < 0) {
    const char* text = getenv("GRAPH500_SIM_TEST_COST");
    double seconds = text != NULL ? atof(text) : 1e-5; /* sim.sh's default */
    nanoseconds = seconds > 0 ? (long)(seconds * 1e9 + 0.5) : 0;
  }
  if (nanoseconds > 0) {
    struct timespec nap = {nanoseconds / 1000000000L, nanoseconds % 1000000000L};
    smpi_nanosleep(&nap, NULL);
  }
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  int result = PMPI_Testany(count, requests, index, flag, status);
  if (result != MPI_SUCCESS) return result;
  if (!*flag) {
    failed_poll();
    return result;
  }
  if (*index != MPI_UNDEFINED) return result;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    int done = 0;
    result = PMPI_Test(&requests[i], &done, status);
    if (result != MPI_SUCCESS) return result;
    if (done) {
      *index = i;
      return MPI_SUCCESS;
    }
  }
  return MPI_SUCCESS; /* every request null: MPI_UNDEFINED and flag 1, as MPI says */
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  int result = PMPI_Test(request, flag, status);
  if (result == MPI_SUCCESS && !*flag) failed_poll();
  return result;
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  /* AML has one barrier in flight at a time; with SMPI's privatization each rank has its own. */
  static int nothing = 0, sum;
  return PMPI_Iallreduce(&nothing, &sum, 1, MPI_INT, MPI_SUM, comm, request);
}
