#pragma once
// The bodies of object_streamer<T, Index> (transit/streamer/object_streamer.hpp declares and
// documents them): a streamer<T> of (object, item) pairs addressed to the object's home PE.
#include <utility>

#include "transit/streamer/object_streamer.hpp"

namespace transit {

template <class T, class Index>
object_streamer<T, Index>::object_streamer(context& ctx, streamer_options options,
                                           std::function<int(const Index&)> home_pe,
                                           std::function<void(const Index&, const T&)> deliver)
    : home_pe_(std::move(home_pe)),
      deliver_(std::move(deliver)),
      stream_(ctx, std::move(options), [this](const addressed& a) { deliver_(a.object, a.item); }) {}

template <class T, class Index>
object_streamer<T, Index>::object_streamer(context& ctx, streamer_options options,
                                           std::function<int(const Index&)> home_pe,
                                           std::function<void(const Index&, const T&, int)> deliver)
    : home_pe_(std::move(home_pe)),
      deliver_from_(std::move(deliver)),
      stream_(ctx, std::move(options),
              [this](const addressed& a, int source) { deliver_from_(a.object, a.item, source); }) {}

template <class T, class Index>
void object_streamer<T, Index>::insert(const T& item, const Index& object) {
  stream_.insert(addressed{object, item}, home_pe_(object));
}

}  // namespace transit
