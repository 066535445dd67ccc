// The C API's streamer: transit_streamer_* on byte_streamer.
#include <memory>

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
    *out = new transit_streamer{ctx, byte_streamer(pe, options, item_bytes, deliver, user)};
    ++ctx->objects;
  });
}

const byte_streamer& streamer_of(const transit_streamer* s) { return s->s; }

}  // namespace transit::c_api

using namespace transit::c_api;

extern "C" {

transit_status transit_streamer_create(transit_context* ctx, size_t item_bytes, transit_deliver_fn deliver, void* user,
                                       transit_streamer** out) {
  transit::streamer_options automatic;
  automatic.buffer_items = 0;  // sized from the calibrated profile, or a built-in 16 KiB without one
  return create_streamer(ctx, item_bytes, deliver, user, automatic, out);
}

transit_status transit_streamer_destroy(transit_streamer* s) { return destroy(s); }

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
