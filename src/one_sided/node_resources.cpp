#include "node_resources.hpp"

#include "transit/detail/runtime/context_access.hpp"
#include "transit/runtime/context.hpp"

namespace transit::detail {

std::unique_ptr<node_memory> make_node_resources(context& ctx, std::size_t part_bytes, bool helper,
                                                 std::string* why_not) {
  node_memory_setup setup;
  setup.m = &ctx.machine();
  setup.part_bytes = part_bytes;
  setup.helper = helper;
  setup.why_not = why_not;
  // The PE's wait loop: its transport keeps being polled (messages for later layers wait in the
  // mailbox), and a failing job unwinds it.
  setup.wait = [&ctx](const std::function<bool()>& done, const char* what) {
    context_access::wait_until(ctx, [&] { return done() ? step_result::done : step_result::idle; }, what);
  };
  return context_access::net(ctx).make_node_memory(setup);
}

}  // namespace transit::detail
