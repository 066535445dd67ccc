// transit info: what a launch gives (backend, PEs, nodes, physical topology), the profiles in use
// and, on the mpi backend, the Open MPI settings in effect, to check an install and a launch line.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifdef TRANSIT_WITH_MPI
#include <mpi.h>
#endif

#include "cli.hpp"

namespace transit::cli {

namespace {

#ifdef TRANSIT_WITH_MPI
/// Open MPI's value of one of its parameters (MCA variable) as this process runs with it, read
/// through MPI_T after MPI_Init: an enumerated value by its name ("cma") when by_name, otherwise
/// (bit flags) and for plain integers its digits, a string as it is; "" when this MPI has no such
/// variable or has not loaded the component that registers it. Local; never throws. Asked of Open
/// MPI itself (MPI_T control variables) rather than inferred from the environment, so that info
/// shows the mechanism in effect.
std::string open_mpi_setting(const char* name, bool by_name = true);

#ifdef TRANSIT_SIMGRID
// SimGrid's SMPI has no MPI_T interface, and no Open MPI settings to report.
std::string open_mpi_setting(const char*, bool) { return {}; }
#else
std::string read_variable(int index, bool by_name) {
  char name[256];
  char description[1024];
  int name_length = sizeof name, description_length = sizeof description;
  int verbosity = 0, binding = 0, scope = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumeration = MPI_T_ENUM_NULL;
  if (MPI_T_cvar_get_info(index, name, &name_length, &verbosity, &type, &enumeration, description,
                          &description_length, &binding, &scope) != MPI_SUCCESS)
    return {};
  MPI_T_cvar_handle handle;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count) != MPI_SUCCESS) return {};
  std::string out;
  if (type == MPI_CHAR) {
    std::vector<char> text(static_cast<std::size_t>(count) + 1, '\0');
    if (MPI_T_cvar_read(handle, text.data()) == MPI_SUCCESS) out = text.data();
  } else if (type == MPI_INT || type == MPI_UNSIGNED) {
    int value = 0;
    if (MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) {
      out = std::to_string(value);
      int items = 0;
      char enum_name[256];
      int enum_name_length = sizeof enum_name;
      if (by_name && enumeration != MPI_T_ENUM_NULL &&
          MPI_T_enum_get_info(enumeration, &items, enum_name, &enum_name_length) == MPI_SUCCESS) {
        for (int i = 0; i < items; ++i) {
          int item_value = 0;
          char item[256];
          int item_length = sizeof item;
          if (MPI_T_enum_get_item(enumeration, i, &item_value, item, &item_length) == MPI_SUCCESS &&
              item_value == value)
            out = item;
        }
      }
    }
  }
  MPI_T_cvar_handle_free(&handle);
  return out;
}

std::string open_mpi_setting(const char* name, bool by_name) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return {};
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return {};
  std::string out;
  int index = 0;
  if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS) out = read_variable(index, by_name);
  MPI_T_finalize();
  return out;
}
#endif
#endif  // TRANSIT_WITH_MPI

/// The calibrated profile this job's streamers use (buffer_items = 0, tune = true).
void print_profile(const context& ctx) {
  const profile_status status = profile_in_use(ctx);
  if (!status.error.empty()) {
    std::printf("profile: %s\n", status.error.c_str());
    return;
  }
  if (!status.streamer) {
    std::printf("profile: %s (%s); built-in defaults: buffer_items = 0 means 16 KiB messages "
                "(2046 items of 8 bytes); run 'transit calibrate'\n",
                status.path.c_str(), status.file_exists ? "no entry for this backend and host" : "none yet");
    return;
  }
  const streamer_profile& p = *status.streamer;
  std::printf("profile: %s, streamer entry %s / %d PEs per node / %s of %s%s\n", status.path.c_str(),
              p.backend.c_str(), p.pes_per_node, p.host.c_str(), p.created.c_str(),
              status.exact ? "" : " (the closest: none for this job's PEs per node)");
  std::printf("buffer_items = 0: %zu items of 8 bytes (per-message cost at most 2%% of an item's; 75%% of the "
              "peak %.3g GB/s at %zu-byte messages)\n",
              automatic_buffer_items(p, 8), p.peak_bytes_per_second / 1e9, p.buffer_bytes_75);
  std::printf("costs: alpha %.3g us/message, beta %.3g ns/byte, %.3g ns/item (intra-node)\n", p.intra.costs.alpha * 1e6,
              p.intra.costs.beta * 1e9, p.intra.costs.per_item * 1e9);
}

/// The mpi backend: Open MPI's single-copy mechanism the profile chose, the one in effect as Open
/// MPI reports it ("default" is cma on Open MPI 4.1 here), and whether its emulated shared-memory
/// atomics are off (run.cpp turns them off: osc rdma's compare-and-swap over them crashes).
void print_single_copy(const context& ctx) {
  if (ctx.backend() != "mpi") return;
  std::string in_effect = "unknown: no shared-memory transport loaded";
  std::string atomics;
#ifdef TRANSIT_WITH_MPI
  if (const std::string mechanism = open_mpi_setting("btl_vader_single_copy_mechanism"); !mechanism.empty())
    in_effect = mechanism;
  if (const std::string flags = open_mpi_setting("btl_vader_flags", false); !flags.empty()) {
    // The flag bits of Open MPI 4.1's btl.h: MCA_BTL_FLAGS_ATOMIC_OPS, MCA_BTL_FLAGS_ATOMIC_FOPS.
    const unsigned long bits = std::stoul(flags);
    atomics = (bits & (0x08000UL | 0x10000UL)) != 0 ? "; shared-memory atomics: on (emulated)"
                                                   : "; shared-memory atomics: off";
  }
#endif
  try {
    const auto t = profile_file::load(default_profile_path()).find_transport("mpi", this_host());
    std::printf("single-copy mechanism: %s (in effect: %s%s)\n",
                t && !t->single_copy_choice.empty() ? t->single_copy_choice.c_str()
                                                    : "not chosen yet (calibrate measures one mechanism per run)",
                in_effect.c_str(), atomics.c_str());
  } catch (const profile_error&) {
    // print_profile has named the damaged file.
  }
}

/// Collective: how one-sided operations (global_array, polling mode, the default) reach the
/// elements of their own node in this job: loads, stores and atomics in the node's shared memory,
/// or requests to the owner where a node could not share memory (docs/one_sided.md, "Inside a
/// node"). Asked of a small global array on every PE; the node's first PE answers for its node.
std::string one_sided_path(context& ctx) {
  global_array<std::uint64_t> probe(ctx, static_cast<std::size_t>(ctx.size()));
  const machine& m = ctx.machine();
  const bool answers = m.local_rank(ctx.rank()) == 0;
  const std::uint64_t shared =
      ctx.allreduce(answers && probe.stats().node_memory_shared != 0 ? std::uint64_t{1} : std::uint64_t{0}, reduce_op::sum);
  const auto nodes = static_cast<std::uint64_t>(m.num_nodes());
  if (shared == nodes)
    return detail::concat("shared memory (loads, stores and atomics, no message) on all ", nodes, " node",
                       nodes == 1 ? "" : "s");
  if (shared == 0) return "requests to the owner: no node could share memory";
  return detail::concat("shared memory on ", shared, " of ", nodes, " nodes, requests to the owner on the others");
}

int info(context& ctx) {
  const std::string same_node = one_sided_path(ctx);
  ctx.barrier();
  if (ctx.rank() != 0) return 0;
  const auto& m = ctx.machine();
  std::printf("transit %s\nbackend: %.*s\npes: %d\nnodes: %d\npes per node:", transit::version(),
              static_cast<int>(ctx.backend().size()), ctx.backend().data(), ctx.size(), m.num_nodes());
  for (int n = 0; n < m.num_nodes(); ++n) std::printf(" %d", m.pes_on_node(n));
  std::printf("\nphysical: %s\n", ctx.topology().physical().str().c_str());
  print_profile(ctx);
  print_single_copy(ctx);
  std::printf("protocol profile: %s\n", protocol_profile_in_use(ctx).description.c_str());
  std::printf("one-sided inside a node: %s\n", same_node.c_str());
  return 0;
}

const bool registered = register_command({
    .name = "info",
    .summary = "print backend, PEs, nodes, PEs per node, the physical topology, the profiles in use and the one-sided path inside a node",
    .run = info,
});

}  // namespace

}  // namespace transit::cli
