/** @file
 * transit_aml: AML's interface (graph500's Active Messages Library, aml/aml.h of the reference
 * code) on transit. A program written for AML compiles against this header and links with
 * `pkg-config --cflags --libs transit-aml` instead of aml.c, unchanged; its messages then travel
 * through transit's active messages: aggregated per destination, routed over the node grid,
 * terminated by transit's quiescence. README "AML programs on transit" says how to build one.
 *
 * The rules, AML's (its README) and those graph500's reference relies on:
 * - aml_init calls MPI_Init (or joins an MPI the program initialised) and makes the PEs the ranks
 *   of MPI_COMM_WORLD; the program keeps calling MPI on MPI_COMM_WORLD between AML calls.
 * - A handler runs as handler(sender's PE, bytes, length), on its PE's thread, inside that PE's
 *   aml_send or aml_barrier calls; the bytes are valid during the call and not aligned (as AML's).
 *   A handler may call aml_send (also to itself: queued, not recursive); not aml_barrier.
 * - aml_send to this PE runs the handler at once (outside handlers), as AML does.
 * - aml_barrier is collective and returns once every message sent before it anywhere, and every
 *   message those handlers sent, has been handled everywhere.
 * - Messages of 0 to TRANSIT_AML_MAX_LENGTH bytes (AML's limit is its 32 KiB buffer).
 *
 * A mistake (a handler id never registered, a length beyond the limit, a PE outside the job, a
 * call before aml_init) is reported by a message naming the value and what was expected: to the
 * handler of transit_aml_set_error_handler if one is set (the failing call then does nothing),
 * else on stderr, ending the job. */
#ifndef TRANSIT_AML_AML_H
#define TRANSIT_AML_AML_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The longest message aml_send takes, in bytes (1 GiB). */
#define TRANSIT_AML_MAX_LENGTH (1 << 30)

/** Collective over MPI_COMM_WORLD: initialises MPI (unless the program did; then only AML) and
 *  AML. transit's options (TRANSIT_* variables, --transit-* arguments, README "Running") apply;
 *  the arguments are taken out of argc/argv, as MPI_Init takes its own. Returns 0, or -1 after
 *  reporting why (a second aml_init, MPI failing, a bad option). Call it instead of MPI_Init. */
int aml_init(int* argc, char*** argv);
/** Collective: an aml_barrier, then ends AML and, when aml_init initialised MPI, MPI. */
void aml_finalize(void);
/** Collective: returns once every message sent before it by any PE, and every message their
 *  handlers sent in turn, has been handled. Not from a handler. */
void aml_barrier(void);
/** Collective: handler id `n` (0 to 255) runs `f` from now on, on every PE (each PE registers the
 *  same id; a barrier before and after, as in AML). Registering an id again replaces its handler. */
void aml_register_handler(void (*f)(int from, void* data, int length), int n);
/** Local: sends `length` bytes at `srcaddr` (copied before the call returns) to PE `node`, to be
 *  handled by handler id `type` there: at once for this PE, else by the next aml_barrier. */
void aml_send(void* srcaddr, int type, int length, int node);
/** Local: this PE, in [0, aml_n_pes()). */
int aml_my_pe(void);
/** Local: the PEs of the job. */
int aml_n_pes(void);

/* ---- transit's additions --------------------------------------------------------------------- */

/** Local: seconds on transit's clock (a simulated machine's under SimGrid), for aml_time(). */
double transit_aml_time(void);
/** Collective: the sum (op 0), min (1) or max (2) over all PEs of the signed integer of `bytes`
 *  bytes (4 or 8) at `value`, in place: aml_long_allsum/allmin/allmax. */
void transit_aml_allreduce(void* value, size_t bytes, int op);

struct transit_context;
/** Collective over `ctx` (transit/transit.h): AML for the calling thread on the PEs of `ctx`,
 *  instead of aml_init: PE r of `ctx` is AML's PE r. For programs on transit's runtime, whose PEs
 *  may be threads (transit_run_local, or PE threads in MPI ranks); each PE thread attaches its own
 *  context. Returns 0, or -1 after reporting why (NULL, already attached, after aml_init). */
int transit_aml_attach(struct transit_context* ctx);
/** Collective: an aml_barrier, then ends the calling thread's AML (the context stays usable). */
void transit_aml_detach(void);

/** Called with a mistake's message instead of ending the job; `user` is passed back. */
typedef void (*transit_aml_error_fn)(const char* message, void* user);
/** Local, for the whole process: report mistakes to `f` (NULL: back to stderr and ending the job).
 *  The failing call then returns having done nothing. */
void transit_aml_set_error_handler(transit_aml_error_fn f, void* user);

#ifdef __cplusplus
}
#endif

/* AML's macros. AML's own reduce on MPI_COMM_WORLD with MPI_LONG_LONG; these reduce over the PEs
 * of the job (the same ranks after aml_init) and check the value's size. */
/** AML's name for aml_my_pe. */
#define my_pe aml_my_pe
/** AML's name for aml_n_pes. */
#define num_pes aml_n_pes
/** Local: seconds on transit's clock (transit_aml_time). */
#define aml_time() transit_aml_time()
/** Collective: `*p` (a signed integer of 4 or 8 bytes) summed over all PEs, in place. */
#define aml_long_allsum(p) transit_aml_allreduce((p), sizeof(*(p)), 0)
/** Collective: the least `*p` over all PEs, in place. */
#define aml_long_allmin(p) transit_aml_allreduce((p), sizeof(*(p)), 1)
/** Collective: the greatest `*p` over all PEs, in place. */
#define aml_long_allmax(p) transit_aml_allreduce((p), sizeof(*(p)), 2)

#endif /* TRANSIT_AML_AML_H */
