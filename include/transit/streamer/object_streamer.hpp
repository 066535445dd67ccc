#pragma once
// object_streamer<T, Index>: items addressed to objects rather than PEs. The home PE of an object
// is looked up once, at the source, and travels with the item (thesis spec 7).
#include <cstdint>
#include <functional>
#include <type_traits>

#include "transit/streamer/streamer.hpp"

namespace transit {

template <class T, class Index = std::int64_t>
class object_streamer {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_copyable_v<Index>,
                "transit::object_streamer requires trivially copyable item and index types");

  struct addressed {
    Index object;
    T item;
  };

 public:
  /// Collective. `home_pe` maps an object to the PE that owns it; `deliver` runs there.
  object_streamer(context& ctx, streamer_options options, std::function<int(const Index&)> home_pe,
                  std::function<void(const Index&, const T&)> deliver)
      : home_pe_(std::move(home_pe)),
        deliver_(std::move(deliver)),
        stream_(ctx, std::move(options), [this](const addressed& a) { deliver_(a.object, a.item); }) {}

  /// Local. Throws std::out_of_range when home_pe returns a PE outside the job.
  void insert(const T& item, const Index& object) { stream_.insert(addressed{object, item}, home_pe_(object)); }
  void done() { stream_.done(); }
  void wait() { stream_.wait(); }
  void finish() { stream_.finish(); }
  void quiesce() { stream_.quiesce(); }
  bool progress() { return stream_.progress(); }
  streamer_stats stats() const { return stream_.stats(); }
  streamer_options current_options() const { return stream_.current_options(); }

 private:
  std::function<int(const Index&)> home_pe_;
  std::function<void(const Index&, const T&)> deliver_;
  streamer<addressed> stream_;
};

}  // namespace transit
