// netdelay: holds every packet of one netfilter queue for a constant time before accepting it.
//
// The emulated cluster (scripts/cluster, docs/cluster.md) needs one-way latency on the links
// between its hosts, and this kernel has no netem qdisc. So the switch namespace sends every IPv4
// packet it bridges to an NFQUEUE (iptables FORWARD through br_netfilter), and this program
// accepts each packet `delay` after it reached the switch. How it stays honest and cheap:
// - Copy mode "meta": the kernel keeps the packet and sends only its id and metadata, so a 64 KiB
//   GSO packet costs the same as a 60-byte ACK. F_GSO keeps GSO packets whole.
// - The delay is constant, so packets leave in arrival order: a FIFO of (id, deadline) suffices,
//   and one batch verdict (accept every id up to N) releases all packets that are due.
// - Arrival time: the kernel's receive timestamp of the packet when it has one (it does once any
//   socket asks for timestamps, which this program does), else the time it is read here. So the
//   time the packet waited in the queue before this program woke counts towards the delay.
// - Waiting: ppoll with a timeout to the next deadline, timer slack 1 ns (PR_SET_TIMERSLACK), and
//   SCHED_FIFO when allowed, so a loaded machine (the hosts' ranks share its cores) wakes it on
//   time. Never a busy loop: the machine may have 2 cores.
// - Timer wake-ups come late by a fairly constant amount (about 20 us in the VM this was written
//   on), which would add to every crossing. The program learns that lateness (a moving average of
//   how late its timed waits return) and asks to wake that much earlier, so packets leave on
//   average at their due time. A latency shorter than one wake-up cannot be met exactly without
//   spinning: packets then leave within half a wake-up of their time. It reports the release
//   error when it exits.
// On SIGTERM or SIGINT it accepts everything still held and exits 0.
// <netinet/in.h> before the netfilter headers: they pull in <linux/in.h>, which clashes after.
#include <arpa/inet.h>
#include <netinet/in.h>
// clang-format off
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
// clang-format on
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <string>
#include <string_view>

namespace {

volatile sig_atomic_t stop_requested = 0;
void on_signal(int) { stop_requested = 1; }

std::int64_t now_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct held_packet {
  std::uint32_t id;
  std::int64_t due_ns;  // CLOCK_MONOTONIC
};

struct state {
  std::int64_t delay_ns = 0;
  std::deque<held_packet> fifo;
  std::uint64_t packets = 0;
  std::uint64_t kernel_stamped = 0;
  std::int64_t wake_lead_ns = 0;  // how much earlier than due to ask the timer to wake us
  std::uint64_t released = 0;
  std::int64_t error_sum_ns = 0;  // over released packets: release time - due time (signed)
  std::int64_t error_abs_sum_ns = 0;
  std::int64_t late_max_ns = 0;
};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "netdelay: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

int on_packet(nfq_q_handle*, nfgenmsg*, nfq_data* data, void* opaque) {
  auto& s = *static_cast<state*>(opaque);
  const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(data);
  if (header == nullptr) return 0;
  const std::uint32_t id = ntohl(header->packet_id);
  std::int64_t arrived = now_ns(CLOCK_MONOTONIC);
  // The kernel's receive stamp is wall-clock time: convert it, and trust it only when it is recent
  // (a packet can have waited for this program, never for a second).
  timeval stamp{};
  if (nfq_get_timestamp(data, &stamp) == 0 && stamp.tv_sec != 0) {
    const std::int64_t stamp_ns = static_cast<std::int64_t>(stamp.tv_sec) * 1'000'000'000 + stamp.tv_usec * 1000;
    const std::int64_t waited = now_ns(CLOCK_REALTIME) - stamp_ns;
    if (waited >= 0 && waited < 1'000'000'000) {
      arrived -= waited;
      ++s.kernel_stamped;
    }
  }
  s.fifo.push_back({id, arrived + s.delay_ns});
  ++s.packets;
  return 0;
}

// Accepts every held packet that is due (all of them when `everything`): one batch verdict for the
// highest due id accepts every id up to it, and ids grow in arrival order. "Due" means within half
// a timer wake-up's lateness of its time: sleeping again would overshoot by more than leaving now
// comes early, so the error stays within lead/2 either way, and averages out.
void release_due(nfq_q_handle* queue, state& s, bool everything) {
  const std::int64_t now = now_ns(CLOCK_MONOTONIC);
  bool any = false;
  std::uint32_t last = 0;
  while (!s.fifo.empty() && (everything || s.fifo.front().due_ns - s.wake_lead_ns / 2 <= now)) {
    last = s.fifo.front().id;
    const std::int64_t error = now - s.fifo.front().due_ns;
    s.error_sum_ns += error;
    s.error_abs_sum_ns += error < 0 ? -error : error;
    s.late_max_ns = std::max(s.late_max_ns, error);
    ++s.released;
    any = true;
    s.fifo.pop_front();
  }
  if (any && nfq_set_verdict_batch(queue, last, NF_ACCEPT) < 0) fail("batch verdict");
}

std::int64_t parse_number(std::string_view text, const char* what) {
  char* end = nullptr;
  const std::string copy(text);
  errno = 0;
  const long long value = std::strtoll(copy.c_str(), &end, 10);
  if (copy.empty() || *end != '\0' || errno != 0 || value < 0) {
    std::fprintf(stderr, "netdelay: %s must be a non-negative integer, got '%s'\n", what, copy.c_str());
    std::exit(2);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  int queue_number = -1;
  state s;
  bool have_delay = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg.starts_with("--queue=")) {
      queue_number = static_cast<int>(parse_number(arg.substr(8), "--queue"));
    } else if (arg.starts_with("--delay-ns=")) {
      s.delay_ns = parse_number(arg.substr(11), "--delay-ns");
      have_delay = true;
    } else {
      std::fprintf(stderr,
                   "usage: netdelay --queue=N --delay-ns=D\n"
                   "  accepts each packet of netfilter queue N D nanoseconds after it arrived\n");
      return 2;
    }
  }
  if (queue_number < 0 || queue_number > 65535 || !have_delay) {
    std::fprintf(stderr, "netdelay: --queue=N (0..65535) and --delay-ns=D are required\n");
    return 2;
  }

  // The stop signals are blocked except inside ppoll, so one arriving between the check of
  // stop_requested and the wait still ends the wait.
  struct sigaction action{};
  action.sa_handler = on_signal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  sigset_t stop_signals, unblocked_in_wait;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, &unblocked_in_wait);
  sigdelset(&unblocked_in_wait, SIGTERM);
  sigdelset(&unblocked_in_wait, SIGINT);

  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  sched_param priority{};
  priority.sched_priority = 10;
  const bool realtime = sched_setscheduler(0, SCHED_FIFO, &priority) == 0;

  // Any socket asking for receive timestamps makes the kernel stamp every packet on arrival.
  const int stamp_socket = socket(AF_INET, SOCK_DGRAM, 0);
  const int on = 1;
  if (stamp_socket >= 0) setsockopt(stamp_socket, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);

  nfq_handle* handle = nfq_open();
  if (handle == nullptr) fail("nfq_open");
  nfq_q_handle* queue = nfq_create_queue(handle, static_cast<std::uint16_t>(queue_number), on_packet, &s);
  if (queue == nullptr) fail("binding netfilter queue " + std::to_string(queue_number));
  if (nfq_set_mode(queue, NFQNL_COPY_META, 0) < 0) fail("copy mode meta");
  nfq_set_queue_flags(queue, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO);
  if (nfq_set_queue_maxlen(queue, 65536) < 0) fail("queue length");
  const int fd = nfq_fd(handle);
  int buffer_size = 8 << 20;  // a burst of metadata messages must not overflow the socket
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_size, sizeof buffer_size);
  const int no_enobufs = 1;  // overflow would lose ids, not packets: report, never stall
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &no_enobufs, sizeof no_enobufs);

  std::fprintf(stderr, "netdelay: queue %d, delay %lld ns, %s\n", queue_number, static_cast<long long>(s.delay_ns),
               realtime ? "SCHED_FIFO" : "normal priority (SCHED_FIFO refused)");

  static char buffer[1 << 16];
  while (!stop_requested) {
    timespec timeout{};
    timespec* wait = nullptr;
    std::int64_t sleep_ns = 0, slept_from = 0;
    if (!s.fifo.empty()) {
      // Sleep until `lead` before the front packet is due (the wake-up comes about `lead` late);
      // not at all when it is already within lead/2 of due (release_due takes it).
      slept_from = now_ns(CLOCK_MONOTONIC);
      const std::int64_t due = s.fifo.front().due_ns;
      if (due - s.wake_lead_ns / 2 > slept_from) sleep_ns = std::max<std::int64_t>(1, due - s.wake_lead_ns - slept_from);
      timeout.tv_sec = sleep_ns / 1'000'000'000;
      timeout.tv_nsec = sleep_ns % 1'000'000'000;
      wait = &timeout;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ppoll(&p, 1, wait, &unblocked_in_wait);
    if (ready < 0 && errno != EINTR) fail("ppoll");
    if (ready == 0 && sleep_ns > 0) {  // a timed sleep ended: learn how late it woke, 1/16 per sample
      const std::int64_t late =
          std::clamp<std::int64_t>(now_ns(CLOCK_MONOTONIC) - slept_from - sleep_ns, 0, std::max<std::int64_t>(s.delay_ns, 1));
      s.wake_lead_ns += (late - s.wake_lead_ns) / 16;
    }
    if (ready > 0) {
      for (;;) {  // drain what is there without blocking
        const ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
          if (errno == ENOBUFS) {
            std::fprintf(stderr, "netdelay: netlink receive buffer overflowed\n");
            continue;
          }
          fail("recv");
        }
        nfq_handle_packet(handle, buffer, static_cast<int>(n));
      }
    }
    release_due(queue, s, false);
  }
  release_due(queue, s, true);
  const double per_packet = s.released ? 1e3 * static_cast<double>(s.released) : 1.0;
  std::fprintf(stderr,
               "netdelay: %llu packets delayed (%llu with the kernel's arrival stamp); release error: mean %+.1f us, "
               "mean absolute %.1f us, latest %.1f us; timer wake-up lead %.1f us\n",
               static_cast<unsigned long long>(s.packets), static_cast<unsigned long long>(s.kernel_stamped),
               static_cast<double>(s.error_sum_ns) / per_packet, static_cast<double>(s.error_abs_sum_ns) / per_packet,
               static_cast<double>(s.late_max_ns) / 1e3, static_cast<double>(s.wake_lead_ns) / 1e3);
  nfq_destroy_queue(queue);
  nfq_close(handle);
  return 0;
}
