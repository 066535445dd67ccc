#pragma once
// object_streamer<T, Index>: items addressed to objects rather than PEs. The home PE of an object
// is looked up once, at the source, and travels with the item (thesis spec 7). This header
// declares and documents; the bodies are in transit/detail/streamer/object_streamer_impl.hpp.
#include <cstdint>
#include <functional>
#include <type_traits>

#include "transit/streamer/streamer.hpp"

namespace transit {

/// Streams items of type T to objects named by an `Index`: a streamer<T> whose destination is the
/// home PE of the object, looked up at the source. Delivery, re-entrancy, exceptions and life cycle
/// are streamer's (see there); `deliver(object, item)` runs on the object's home PE.
template <class T, class Index = std::int64_t>
class object_streamer {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_copyable_v<Index>,
                "transit::object_streamer requires trivially copyable item and index types");

  struct addressed {
    Index object;
    T item;
  };

 public:
  /// Collective. `home_pe` maps an object to the PE that owns it; `deliver` runs there. Throws
  /// as streamer's constructor.
  object_streamer(context& ctx, streamer_options options, std::function<int(const Index&)> home_pe,
                  std::function<void(const Index&, const T&)> deliver);
  /// Collective, as above, with `deliver(object, item, source)` also taking the PE that inserted
  /// the item (see streamer: no source travels on a direct route).
  object_streamer(context& ctx, streamer_options options, std::function<int(const Index&)> home_pe,
                  std::function<void(const Index&, const T&, int)> deliver);

  /// Local. Throws std::out_of_range when home_pe returns a PE outside the job.
  void insert(const T& item, const Index& object);
  /// Local: streamer::done().
  void done() { stream_.done(); }
  /// Collective: streamer::wait().
  void wait() { stream_.wait(); }
  /// Collective: streamer::finish().
  void finish() { stream_.finish(); }
  /// Collective: streamer::quiesce().
  void quiesce() { stream_.quiesce(); }
  /// Local: streamer::progress().
  bool progress() { return stream_.progress(); }
  /// Local: streamer::stats() (items are counted as (object, item) pairs).
  streamer_stats stats() const { return stream_.stats(); }
  /// Local: streamer::current_options().
  streamer_options current_options() const { return stream_.current_options(); }

 private:
  std::function<int(const Index&)> home_pe_;
  std::function<void(const Index&, const T&)> deliver_;  // one of these two is set
  std::function<void(const Index&, const T&, int)> deliver_from_;  // or this one, when sources are asked for
  streamer<addressed> stream_;
};

}  // namespace transit

#include "transit/detail/streamer/object_streamer_impl.hpp"
