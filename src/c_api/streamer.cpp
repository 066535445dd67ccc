// The C API's streamer: transit_streamer_* on byte_streamer.
#include <memory>
#include <string>

#include "c_api/byte_streamer.hpp"
#include "c_api/handles.hpp"

struct transit_streamer {
  transit_context* owner;
  transit::c_api::byte_streamer s;
};

namespace transit::c_api {

transit_status create_streamer(transit_context* ctx, std::size_t item_bytes, transit_deliver_fn deliver, void* user,
                               const streamer_options& options, transit_streamer** out) {
  return guarded([&] {
    constexpr const char* call = "transit_streamer_create";
    require(out, call, "out");
    *out = nullptr;
    context& pe = pe_of(ctx, call);
    check_item_bytes(item_bytes, call);
    require(reinterpret_cast<const void*>(deliver), call, "deliver");
    std::unique_ptr<transit_streamer> made(
        new transit_streamer{ctx, byte_streamer(pe, options, item_bytes, deliver, user)});
    ctx->streamers.push_back(made.get());
    *out = made.release();
    ++ctx->objects;
  });
}

const byte_streamer& streamer_of(const transit_streamer* s) { return s->s; }

namespace {

// Frees `s` without ending the job: what it lost ("" when nothing), from its context's lists too.
std::string release(transit_streamer* s) {
  std::unique_ptr<transit_streamer> freed(s);
  std::erase(s->owner->streamers, s);
  --s->owner->objects;
  return s->s.release_reporting_loss();
}

}  // namespace

std::string free_streamers_left(transit_context& c) {
  std::string said;
  while (!c.streamers.empty()) {
    transit_streamer* s = c.streamers.front();
    const std::string name = s->s.name();
    const std::string lost = release(s);
    said += detail::concat(said.empty() ? "" : "; ", lost.empty() ? name + " (finished: nothing lost)" : lost);
  }
  return said;
}

}  // namespace transit::c_api

using namespace transit::c_api;

extern "C" {

transit_status transit_streamer_create(transit_context* ctx, size_t item_bytes, transit_deliver_fn deliver, void* user,
                                       transit_streamer** out) {
  transit::streamer_options automatic;
  automatic.buffer_items = 0;  // sized from the calibrated profile, or a built-in 16 KiB without one
  return create_streamer(ctx, item_bytes, deliver, user, automatic, out);
}

// A streamer destroyed mid-step: the caller's error, not the end of the job (README "From C").
transit_status transit_streamer_destroy(transit_streamer* s) {
  if (s == nullptr) return TRANSIT_OK;
  std::string lost;
  if (const transit_status status = guarded([&] { lost = release(s); }); status != TRANSIT_OK) return status;
  if (lost.empty()) return TRANSIT_OK;
  return fail(TRANSIT_LOGIC_ERROR,
              transit::detail::concat("transit_streamer_destroy: ", lost,
                                      " (the streamer is freed; its peers still in this step fail instead of "
                                      "waiting for it; the context stays usable)"));
}

transit_status transit_streamer_insert(transit_streamer* s, const int* dests, const void* items, size_t count) {
  return guarded([&] {
    constexpr const char* call = "transit_streamer_insert";
    checked(s, call, "streamer");
    if (count == 0) return;
    require(dests, call, "dests");
    require(items, call, "items");
    s->s.insert(dests, static_cast<const std::byte*>(items), count);
  });
}

transit_status transit_streamer_finish(transit_streamer* s) {
  return guarded([&] { checked(s, "transit_streamer_finish", "streamer").s.finish(); });
}

transit_status transit_streamer_quiesce(transit_streamer* s) {
  return guarded([&] { checked(s, "transit_streamer_quiesce", "streamer").s.quiesce(); });
}

}
