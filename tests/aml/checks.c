/* AML's rules, checked through transit_aml's aml.h on whatever PEs AML runs on (aml_init's MPI
 * ranks, or PE threads attached with transit_aml_attach). Every PE keeps its own state in
 * thread-local variables: handlers run on their PE's thread. */
#include "checks.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aml.h"

static _Thread_local int failures;
static _Thread_local int me, pes;

#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (!(cond)) {                                          \
      ++failures;                                           \
      fprintf(stderr, "PE %d: %s:%d: ", me, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                         \
      fprintf(stderr, "\n");                                \
    }                                                       \
  } while (0)

/* The bytes of a message of `length` from PE `from`: the receiver recomputes them from the `from`
 * AML hands it, so a wrong sender shows as wrong bytes. */
static unsigned char pattern(int from, int length, int i) { return (unsigned char)(from * 31 + length * 7 + i * 13); }

/* ---- counting handlers ---- */
static _Thread_local long counted[64];       /* messages handled, by sender (PEs < 64 here) */
static _Thread_local long bad_bytes;         /* messages whose bytes did not match */
static _Thread_local long handled_by_b;

static void count_pattern(int from, void* data, int length) {
  const unsigned char* bytes = data;
  if (from >= 0 && from < 64) ++counted[from];
  for (int i = 0; i < length; ++i) {
    if (bytes[i] != pattern(from, length, i)) {
      ++bad_bytes;
      break;
    }
  }
}

static void count_b(int from, void* data, int length) {
  (void)from;
  (void)data;
  (void)length;
  ++handled_by_b;
}

static void reset_counts(void) {
  memset(counted, 0, sizeof counted);
  bad_bytes = 0;
  handled_by_b = 0;
}

static void send_pattern(int dest, int length, int type) {
  unsigned char* buffer = malloc((size_t)length + 1);
  for (int i = 0; i < length; ++i) buffer[i] = pattern(me, length, i);
  aml_send(buffer, type, length, dest);
  free(buffer); /* aml_send copied it */
}

/* ---- handlers that send ---- */
static _Thread_local long relayed;
struct relay {
  int32_t hops_left;
  int32_t origin;
};
static void relay_handler(int from, void* data, int length) {
  struct relay r;
  (void)from;
  if (length != (int)sizeof r) {
    ++bad_bytes;
    return;
  }
  memcpy(&r, data, sizeof r);
  ++relayed;
  if (r.hops_left > 0) {
    --r.hops_left;
    aml_send(&r, 5, (int)sizeof r, (me + 1) % pes); /* one PE: to itself, from a handler (queued) */
  }
}

static _Thread_local int self_reentered;
static _Thread_local int in_self_handler;
static void self_sender(int from, void* data, int length) {
  (void)data;
  (void)length;
  CHECK(from == me, "a message to self names PE %d as its sender", from);
  if (in_self_handler) self_reentered = 1; /* AML runs self messages from handlers later, not nested */
  in_self_handler = 1;
  if (length == 1) {
    unsigned char again = 0;
    aml_send(&again, 6, 0, me);
  }
  in_self_handler = 0;
}

/* ---- mistakes, caught by the error handler ---- */
static _Thread_local char last_error[512];
static _Thread_local int errors_seen;
static void keep_error(const char* message, void* user) {
  (void)user;
  snprintf(last_error, sizeof last_error, "%s", message);
  ++errors_seen;
}
static void expect_error(const char* what, const char* needle) {
  CHECK(errors_seen == 1, "%s: %d errors reported, expected 1", what, errors_seen);
  CHECK(strstr(last_error, needle) != NULL, "%s: the error \"%s\" does not say \"%s\"", what, last_error, needle);
  errors_seen = 0;
  last_error[0] = '\0';
}
static _Thread_local int barrier_in_handler_reported;
static void barrier_from_handler(int from, void* data, int length) {
  (void)from;
  (void)data;
  (void)length;
  errors_seen = 0;
  aml_barrier();
  if (errors_seen == 1 && strstr(last_error, "called from a handler") != NULL) barrier_in_handler_reported = 1;
  errors_seen = 0;
}

void aml_checks_catch_errors(void) { transit_aml_set_error_handler(keep_error, NULL); }

static long sum_over_pes(long value) {
  long v = value;
  aml_long_allsum(&v);
  return v;
}

int aml_checks(void) {
  failures = 0;
  me = aml_my_pe();
  pes = aml_n_pes();
  CHECK(pes >= 1 && pes <= 64, "aml_n_pes() = %d", pes);
  CHECK(me >= 0 && me < pes, "aml_my_pe() = %d of %d", me, pes);

  /* A barrier with nothing sent, several times. */
  for (int i = 0; i < 3; ++i) aml_barrier();

  /* Reductions: long and int, sum, min and max. */
  long sum = me + 1, low = me + 1, high = me + 1;
  aml_long_allsum(&sum);
  aml_long_allmin(&low);
  aml_long_allmax(&high);
  CHECK(sum == (long)pes * (pes + 1) / 2 && low == 1 && high == pes, "reductions: sum %ld min %ld max %ld", sum, low,
        high);
  int small = 2;
  aml_long_allsum(&small);
  CHECK(small == 2 * pes, "allsum of an int: %d", small);

  /* A message to self runs at once (outside handlers), with this PE as sender. */
  aml_register_handler(count_pattern, 1);
  reset_counts();
  send_pattern(me, 8, 1);
  CHECK(counted[me] == 1, "a message to self was not handled at once (%ld)", counted[me]);
  aml_barrier();

  /* Every PE to every PE, many small messages; then each length of a list, to both neighbours. */
  reset_counts();
  const int per_peer = 2000;
  for (int k = 0; k < per_peer; ++k)
    for (int p = 0; p < pes; ++p) send_pattern((me + p) % pes, 8, 1);
  aml_barrier();
  for (int p = 0; p < pes; ++p)
    CHECK(counted[p] == per_peer, "all to all: %ld messages from PE %d, expected %d", counted[p], p, per_peer);
  CHECK(bad_bytes == 0, "all to all: %ld messages with wrong bytes", bad_bytes);

  /* Around transit_aml's paths too: calls of 1 to 32 bytes of fixed size, and the rest. */
  static const int lengths[] = {0, 1, 2, 3, 4, 7, 8, 12, 13, 14, 15, 16, 29, 30, 31, 32, 33, 200, 250, 251, 255, 256,
                                1000, 1024, 4095, 32764, 32768, 65536, 65537, 300000};
  const int n_lengths = (int)(sizeof lengths / sizeof lengths[0]);
  reset_counts();
  const int right = (me + 1) % pes, left = (me + pes - 1) % pes;
  for (int i = 0; i < n_lengths; ++i) {
    send_pattern(right, lengths[i], 1);
    send_pattern(left, lengths[i], 1);
  }
  aml_barrier();
  long from_neighbours = 0;
  for (int p = 0; p < pes; ++p) from_neighbours += counted[p];
  CHECK(from_neighbours == 2L * n_lengths, "uneven sizes: %ld messages handled, expected %d", from_neighbours,
        2 * n_lengths);
  CHECK(bad_bytes == 0, "uneven sizes: %ld messages with wrong bytes", bad_bytes);

  /* Handlers that send: each PE starts a relay of 3 x pes + 1 hops around the ring. */
  aml_register_handler(relay_handler, 5);
  relayed = 0;
  struct relay start = {3 * pes + 1, me};
  aml_send(&start, 5, (int)sizeof start, right);
  aml_barrier();
  const long total_relayed = sum_over_pes(relayed);
  CHECK(total_relayed == (long)pes * (3 * pes + 2), "relays: %ld handled in all, expected %ld", total_relayed,
        (long)pes * (3 * pes + 2));

  /* A handler's message to its own PE waits for a barrier: not nested. */
  aml_register_handler(self_sender, 6);
  self_reentered = 0;
  unsigned char one = 1;
  aml_send(&one, 6, 1, me);
  aml_barrier();
  CHECK(!self_reentered, "a handler's message to self ran nested in the handler");

  /* Registering an id again: messages before the barrier run the old handler, after it the new. */
  reset_counts();
  send_pattern(right, 4, 1);
  aml_register_handler(count_b, 1);
  send_pattern(right, 4, 1);
  aml_barrier();
  long old_handled = 0;
  for (int p = 0; p < pes; ++p) old_handled += counted[p];
  CHECK(old_handled == 1 && handled_by_b == 1, "re-registration: %ld by the old handler, %ld by the new", old_handled,
        handled_by_b);

  /* Mistakes: each reported once, naming the value; nothing is sent. */
  CHECK(errors_seen == 0, "%d unexpected errors, the last: %s", errors_seen, last_error);
  errors_seen = 0;
  reset_counts();
  char byte = 0;
  aml_send(&byte, 7, 1, right);
  expect_error("unregistered id", "handler id 7 is not registered");
  aml_send(&byte, 300, 1, right);
  expect_error("id above 255", "handler id 300 is outside [0, 255]");
  aml_send(&byte, 1, -1, right);
  expect_error("negative length", "length -1 is outside");
  aml_send(&byte, 1, TRANSIT_AML_MAX_LENGTH + 1, right);
  expect_error("length beyond the limit", "is outside [0, 1073741824]");
  aml_send(NULL, 1, 4, right);
  expect_error("NULL bytes", "srcaddr is NULL with length 4");
  aml_send(&byte, 1, 1, pes);
  {
    char needle[64];
    snprintf(needle, sizeof needle, "destination PE %d is outside [0, %d)", pes, pes);
    expect_error("destination", needle);
  }
  aml_send(&byte, 1, 1, -1);
  expect_error("negative destination", "destination PE -1 is outside");
  aml_register_handler(count_b, 256);
  expect_error("register 256", "handler id 256 is outside [0, 255]");
  short too_small = 1;
  aml_long_allsum(&too_small);
  expect_error("2-byte reduction", "the value has 2 bytes");
  aml_register_handler(barrier_from_handler, 8);
  barrier_in_handler_reported = 0;
  aml_send(&byte, 8, 1, me);
  CHECK(barrier_in_handler_reported, "aml_barrier from a handler was not reported");
  aml_barrier();
  long sent_by_mistakes = 0;
  for (int p = 0; p < pes; ++p) sent_by_mistakes += counted[p];
  CHECK(sent_by_mistakes == 0 && handled_by_b == 0, "mistaken sends delivered %ld messages", sent_by_mistakes);

  CHECK(errors_seen == 0, "%d unexpected errors, the last: %s", errors_seen, last_error);

  /* Everyone's verdict. */
  long all_failures = failures;
  aml_long_allsum(&all_failures);
  return (int)all_failures;
}
