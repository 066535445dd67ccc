/** @file
 * transit's C API (C11): aggregated fine-grained communication from C, and from anything that calls
 * C. Opaque handles; every call returns a transit_status, and on failure transit_last_error() says
 * why, on the calling thread. No C++ exception crosses this boundary.
 *
 * Collective calls must be made by every PE of the context, in the same order (as in C++).
 * Link with -ltransit (pkg-config --cflags --libs transit; README "From C"). */
#ifndef TRANSIT_TRANSIT_H
#define TRANSIT_TRANSIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a call did. TRANSIT_OK is 0; every other value is a failure, explained by
 *  transit_last_error(). */
typedef enum transit_status {
  TRANSIT_OK = 0,
  TRANSIT_INVALID_ARGUMENT = 1, /**< a value out of range or of the wrong kind: the error names it */
  TRANSIT_OUT_OF_RANGE = 2,     /**< an index or a PE outside its bound: the error names both */
  TRANSIT_LOGIC_ERROR = 3,      /**< a call at the wrong time (after finish, on a closed context) */
  TRANSIT_RUNTIME_ERROR = 4,    /**< MPI or the system failed, or a peer sent bad bytes */
  TRANSIT_CALLBACK_ERROR = 5,   /**< a deliver callback returned nonzero (the callback's own code is in the error) */
  TRANSIT_NOT_BUILT = 6         /**< the feature is not in this build (the mpi backend without MPI) */
} transit_status;

/** Local, any thread: the message of this thread's last failed call, or "" when none failed.
 *  Valid until this thread's next transit call. */
const char* transit_last_error(void);
/** Local: the transit version, "major.minor.patch". */
const char* transit_version(void);

/** One PE's view of a job (the C++ transit::context, with the session that made it). */
typedef struct transit_context transit_context;

/** Collective over the job: a context of the local backend with one PE (this thread), for programs
 *  and tests that run without a launcher. `*out` is set on success. */
transit_status transit_context_create_local(transit_context** out);
/** Runs `body` once on each of `pes` PEs of the local backend (threads of this process; 0 = the
 *  hardware threads), each with its own context, and returns when all have returned. A body that
 *  returns nonzero fails the run (TRANSIT_CALLBACK_ERROR naming the PE and the code); the other PEs
 *  are unwound at their next transit call; the error adds the last failed transit call's message
 *  on that PE. A body that returns with streamers, arrays or exchanges of its context not
 *  destroyed fails it too (TRANSIT_LOGIC_ERROR): the run frees those streamers and names each with
 *  what it lost. The contexts are destroyed by the run. */
transit_status transit_run_local(int pes, int (*body)(transit_context* ctx, void* user), void* user);
/** Collective over `comm` (an MPI_Comm passed by address, so this header needs no mpi.h: `&comm`):
 *  a context attached to a communicator the program owns, one PE per rank (transit::attach in C++).
 *  A program that includes mpi.h calls transit_context_create_comm (transit/transit_mpi.h)
 *  instead, which takes the MPI_Comm itself: here `comm` instead of `&comm` compiles and crashes.
 *  The program initialises and finalises MPI; destroy the context before MPI_Finalize. Fails with
 *  TRANSIT_INVALID_ARGUMENT for NULL, MPI_COMM_NULL, an intercommunicator, or MPI not initialised
 *  or already finalised, and with TRANSIT_NOT_BUILT when transit was built without MPI. */
transit_status transit_context_create_mpi(const void* comm, transit_context** out);
/** Local, before MPI_Init: sets the Open MPI variables transit sets when it initialises MPI itself
 *  (a 32 KiB shared-memory eager limit, so aggregated messages leave without waiting for the
 *  sender's next MPI call; transit::prepare_mpi_environment in C++). The program's or the user's
 *  settings win; does nothing once MPI is initialised. TRANSIT_NOT_BUILT without MPI. */
transit_status transit_prepare_mpi(void);
/** Local: 1 when this process was started by an MPI launcher (mpirun or mpiexec of Open MPI,
 *  MPICH or MVAPICH, srun with PMI or PMIx: one of the environment variables they set), else 0.
 *  The library's one rule, which transit::run uses to choose its backend when none is given
 *  (transit::started_by_mpi_launcher in C++), for front ends that choose as it does (Python's
 *  transit.Context). Present in a build without MPI too, with the same answer. */
int transit_started_by_mpi_launcher(void);
/** Local, any thread, before making the contexts it is for: the hang watchdog of every context
 *  made after it in this process (transit_context_create_local, _mpi, _comm, transit_run_local),
 *  as --transit-watchdog / TRANSIT_WATCHDOG set it for C++ (and instead of that variable). A PE
 *  that waits `seconds` without progress in a collective call (a barrier another PE skipped, a
 *  step it never ends) stops waiting: the call fails with TRANSIT_RUNTIME_ERROR and
 *  transit_last_error() is the watchdog's report of what the PE waits in. 0 turns it off (the
 *  default); else 0.001 to 604800 (a week), or TRANSIT_INVALID_ARGUMENT naming the value. */
transit_status transit_set_watchdog(double seconds);
/** Collective: a barrier, then frees the context. NULL is a no-op. Every object made on the context
 *  (streamers, arrays, exchanges) must be destroyed first (else TRANSIT_LOGIC_ERROR, nothing freed).
 *  The contexts transit_run_local hands its bodies are its own (TRANSIT_LOGIC_ERROR here). A
 *  failure that ended the context's job meanwhile without a failed call is returned here, and the
 *  context is freed all the same. */
transit_status transit_context_destroy(transit_context* ctx);
/** Local: this PE, in [0, size); -1 for NULL (transit_last_error() says so). */
int transit_rank(const transit_context* ctx);
/** Local: the PEs of the job; -1 for NULL. */
int transit_size(const transit_context* ctx);
/** Collective: returns once every PE has called it. */
transit_status transit_barrier(transit_context* ctx);
/** Local: while a call on `ctx` waits for other PEs (a barrier, a finish, a sync...), `check` is
 *  called at most every 20 ms with `user`; when it returns nonzero the wait ends and the call fails
 *  with TRANSIT_CALLBACK_ERROR ("interrupted"). For front ends whose user may interrupt a wait
 *  (Python's Ctrl-C). The job is then in an unknown state: end it. The check stays until NULL
 *  removes it or the context is destroyed (`user` must live as long). */
transit_status transit_context_set_interrupt_check(transit_context* ctx, int (*check)(void* user), void* user);

/** Reductions for transit_allreduce and transit_array_accumulate. */
typedef enum transit_op { TRANSIT_SUM = 0, TRANSIT_MIN = 1, TRANSIT_MAX = 2 } transit_op;
/** Element types of arrays and reductions. */
typedef enum transit_type { TRANSIT_INT64 = 0, TRANSIT_DOUBLE = 1 } transit_type;

/** Collective: reduces `count` values at `values` (int64_t or double, by `type`) over all PEs, in
 *  place, on every PE. */
transit_status transit_allreduce(transit_context* ctx, void* values, size_t count, transit_type type, transit_op op);

/* ---- Streamer: fixed-size items to PEs, aggregated --------------------------------------------- */

/** A streamer of items of one size (the C++ transit::streamer). */
typedef struct transit_streamer transit_streamer;
/** Called on the destination PE with whole runs of arrived items: `count` items of item_bytes each
 *  at `items` (read in place: valid during the call only). Return 0; a nonzero return stops the
 *  call that delivered (it fails with TRANSIT_CALLBACK_ERROR naming the code); the run counts as
 *  delivered. A callback may call transit_streamer_insert (in a quiesce step only), nothing else of
 *  this streamer. */
typedef int (*transit_deliver_fn)(const void* items, size_t count, void* user);

/** Collective: a streamer of items of `item_bytes` (1 to 65536) with transit's default options
 *  (automatic buffer size, best grid). */
transit_status transit_streamer_create(transit_context* ctx, size_t item_bytes, transit_deliver_fn deliver,
                                       void* user, transit_streamer** out);
/** Collective, after a finished step (finish or quiesce returned on every PE, nothing inserted
 *  since). NULL is a no-op. Destroyed mid-step, with items buffered, messages undelivered or the
 *  step not ended, it fails with TRANSIT_LOGIC_ERROR naming the streamer and what is lost
 *  ("streamer<C items> #0 destroyed mid-step (step 0, open): 10 items buffered and 0 messages
 *  undelivered are lost; ..."); the job is not ended. Afterwards, either way: the handle is freed
 *  and its items are gone; the context stays usable (its other objects, barriers, new streamers);
 *  a peer still in that step with this streamer fails (TRANSIT_LOGIC_ERROR: this PE "destroyed its
 *  streamer before taking part in step N") instead of waiting for it, and a message a peer sent
 *  this streamer that arrives after the destroy ends the job, naming both PEs, as in C++. */
transit_status transit_streamer_destroy(transit_streamer* s);
/** Local: buffers `count` items (count x item_bytes bytes at `items`) for the PEs in `dests`
 *  (one per item). Checks every destination first: one outside [0, size) fails with
 *  TRANSIT_OUT_OF_RANGE naming its position and value, and nothing is inserted. A deliver callback
 *  that fails while this call polls makes it return TRANSIT_CALLBACK_ERROR after every item is
 *  buffered (none is lost). */
transit_status transit_streamer_insert(transit_streamer* s, const int* dests, const void* items, size_t count);
/** Collective: ends the step; returns once every item inserted by any PE in it has been delivered. */
transit_status transit_streamer_finish(transit_streamer* s);
/** Collective: as finish, when deliveries insert new items: returns once nothing is in flight. */
transit_status transit_streamer_quiesce(transit_streamer* s);

/* ---- Global arrays of int64_t or double -------------------------------------------------------- */

/** An array of `size` elements spread in blocks over the PEs (the C++ transit::global_array). */
typedef struct transit_array transit_array;
/** Collective: an array of `size` elements of `type`, all zero. */
transit_status transit_array_create(transit_context* ctx, size_t size, transit_type type, transit_array** out);
/** Collective. NULL is a no-op. */
transit_status transit_array_destroy(transit_array* a);
/** Local: the array's number of elements; 0 for NULL. */
size_t transit_array_size(const transit_array* a);
/** Local: this PE's block: `*data` (int64_t* or double*), `*first` its first global index, `*count` its length. */
transit_status transit_array_local(transit_array* a, void** data, size_t* first, size_t* count);
/* Batched operations over `count` (index, value) pairs: each element index is checked first (one
 * outside [0, size) fails with TRANSIT_OUT_OF_RANGE naming its position, value and the bound, and
 * nothing is done). Values are int64_t or double as the array's type. put, accumulate and fetch_add
 * are visible to all PEs after the next transit_array_sync; get and fetch_add return with their
 * results in `out` / `old_values`. A batch is issued at once, as one non-blocking request whose
 * element requests aggregate per owner, and waited for once. Local (they progress the array
 * meanwhile). */

/** Local: element indices[i] = values[i], for each i (see the batched operations above). */
transit_status transit_array_put(transit_array* a, const uint64_t* indices, const void* values, size_t count);
/** Local: out[i] = element indices[i], for each i; returns with every value in `out`. */
transit_status transit_array_get(transit_array* a, const uint64_t* indices, void* out, size_t count);
/** Local: element indices[i] = element op values[i], atomically per element, for each i. */
transit_status transit_array_accumulate(transit_array* a, const uint64_t* indices, const void* values, size_t count,
                                        transit_op op);
/** Local: adds deltas[i] to element indices[i] atomically and returns the value before in
 *  old_values[i], for each i (the adds of one PE to one element apply in order). */
transit_status transit_array_fetch_add(transit_array* a, const uint64_t* indices, const void* deltas,
                                       void* old_values, size_t count);
/** Collective: every operation issued before it by any PE is complete and visible. */
transit_status transit_array_sync(transit_array* a);

/* ---- Sparse all-to-all exchange ---------------------------------------------------------------- */

/** A sparse exchange of items of one size (the C++ transit::sparse_exchange: crystal router, grid,
 *  or direct, chosen automatically). */
typedef struct transit_exchange transit_exchange;
/** Received items: `total` items, contiguous in `items`; those from source PE p are
 *  items[offsets[p] .. offsets[p + 1]) (offsets has size + 1 entries). Owned by the exchange,
 *  valid until its next run or destroy. */
typedef struct transit_received {
  const void* items;     /**< the received items, by source PE */
  size_t total;          /**< how many items */
  const size_t* offsets; /**< size + 1 entries: source p's items are [offsets[p], offsets[p + 1]) */
} transit_received;
/** Collective: an exchange of items of `item_bytes` (1 to 65536). */
transit_status transit_exchange_create(transit_context* ctx, size_t item_bytes, transit_exchange** out);
/** Collective. NULL is a no-op. */
transit_status transit_exchange_destroy(transit_exchange* x);
/** Collective: sends to each of `peer_count` PEs `peers[i]` the `counts[i]` items that follow in
 *  `items` (the items for peers[0] first, then peers[1]'s...); fills `*received`. A peer outside
 *  [0, size) or given twice fails with TRANSIT_OUT_OF_RANGE / TRANSIT_INVALID_ARGUMENT naming it,
 *  before anything is sent. */
transit_status transit_exchange_run(transit_exchange* x, const int* peers, const size_t* counts, size_t peer_count,
                                    const void* items, transit_received* received);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIT_TRANSIT_H */
