#pragma once
// The protocol calibration as a piece of a command (bench/protocols.cpp): `transit calibrate
// protocols` and `transit calibrate all` (bench/calibrate.cpp) call these two functions.
#include <filesystem>

#include "transit/runtime/context.hpp"

namespace CLI {
class App;
}

namespace transit::bench {

/// Adds --max-region-bytes, --max-regions, --max-transfer-bytes, --iterations, --one-pair and
/// --dry-run (bound to bench/protocols.cpp's settings).
void add_protocol_calibration_options(CLI::App& app);
/// Collective: calibrates the protocol profiles (calibrate_protocols), writes the entry into the
/// "protocols" section of `path` (unless --dry-run) and prints the winner maps, or the entry as
/// JSON. Returns the exit status (2: bad options, 1: the file could not be written).
int run_protocol_calibration(context& ctx, const std::filesystem::path& path, bool json_output);

}  // namespace transit::bench
