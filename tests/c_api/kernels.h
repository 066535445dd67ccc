/* The C API's test kernels, each a collective over one context: the histogram of `transit bench
 * histogram` (via the streamer and a batch callback), global arrays, and the sparse exchange.
 * Each returns 0 when every check passed, else 1 after printing what failed. */
#ifndef TRANSIT_TESTS_C_API_KERNELS_H
#define TRANSIT_TESTS_C_API_KERNELS_H

#include <stdint.h>

#include <transit/transit.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Random 8-byte updates of a table of `slots` per PE, `updates` per PE: the global sum must be
 *  PEs x updates, and this PE's table must equal a recomputation of every PE's random stream. */
int check_histogram(transit_context* ctx, uint64_t updates, uint64_t slots);
/** put, get, accumulate (int64 and double) and fetch_add, with exact totals. */
int check_arrays(transit_context* ctx);
/** A ring exchange of 12-byte items to the next and previous PEs, checked item by item. */
int check_exchange(transit_context* ctx);
/** All three, with the test's sizes. */
int check_all(transit_context* ctx);

#ifdef __cplusplus
}
#endif

#endif
