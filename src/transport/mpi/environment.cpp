#include "transport/mpi/environment.hpp"

#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "transit/detail/core/error.hpp"
#include "transport/mpi/transport.hpp"

namespace transit::detail {

std::size_t max_message_bytes_from_environment() {
  const char* text = std::getenv("TRANSIT_MAX_MESSAGE_BYTES");
  if (text == nullptr || *text == '\0') return mpi_transport::default_max_message_bytes;
  constexpr std::size_t lowest = 64, highest = std::size_t{INT_MAX} - 64;
  std::size_t value = 0;
  const std::string_view view(text);
  const auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (ec != std::errc() || end != view.data() + view.size() || value < lowest || value > highest)
    throw_invalid("TRANSIT_MAX_MESSAGE_BYTES", view,
                  concat("an integer from ", lowest, " to ", highest, " (bytes sent as one MPI message)"));
  return value;
}

mpi_transport::receive_mode mpi_transport::receive_mode_from_environment() {
  const char* text = std::getenv("TRANSIT_MPI_RECEIVE");
  if (text == nullptr || *text == '\0') {
    return simulated_build ? receive_mode::posted : receive_mode::probe;
  }
  const std::string_view view(text);
  if (view == "probe") return receive_mode::probe;
  if (view == "posted") return receive_mode::posted;
  throw_invalid("TRANSIT_MPI_RECEIVE", view,
                "'probe' (probe, then receive each message at its size) or 'posted' (receives posted ahead)");
}

mpi_transport::collectives_mode mpi_transport::collectives_from_environment() {
  const char* text = std::getenv("TRANSIT_MPI_COLLECTIVES");
  if (text == nullptr || *text == '\0') return collectives_mode::automatic;
  const std::string_view view(text);
  if (view == "automatic") return collectives_mode::automatic;
  if (view == "point-to-point") return collectives_mode::point_to_point;
  if (view == "mpi") return collectives_mode::mpi;
  throw_invalid("TRANSIT_MPI_COLLECTIVES", view,
                "'point-to-point' (recursive doubling on point-to-point messages), 'mpi' (MPI's own "
                "non-blocking collectives) or 'automatic'");
}

}  // namespace transit::detail
