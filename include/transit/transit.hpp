#pragma once
// transit: aggregated, topology-aware fine-grained communication. The one header to include.
#include "transit/detail/core/cxx20.hpp"  // first: "transit needs C++20" instead of a std::span error
#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"
#include "transit/runtime/run.hpp"
#include "transit/runtime/session.hpp"
#include "transit/topology/machine.hpp"
#include "transit/mapping/mapping.hpp"
#include "transit/mapping/patterns.hpp"
#include "transit/topology/simgrid_platform.hpp"
#include "transit/topology/topology_manager.hpp"
#include "transit/grid/router.hpp"
#include "transit/grid/virtual_grid.hpp"
#include "transit/streamer/options.hpp"
#include "transit/streamer/streamer.hpp"
#include "transit/streamer/object_streamer.hpp"
#include "transit/active/active_messages.hpp"
#include "transit/exchange/options.hpp"
#include "transit/exchange/sparse_exchange.hpp"
#include "transit/one_sided/options.hpp"
#include "transit/one_sided/request.hpp"
#include "transit/one_sided/global_array.hpp"
#include "transit/one_sided/global_mutexes.hpp"
#include "transit/tuning/calibrate_streamer.hpp"
#include "transit/model/model.hpp"
#include "transit/profile/profile.hpp"
#include "transit/one_sided/protocol_profile.hpp"

/// \namespace transit
/// transit: aggregated, topology-aware fine-grained communication. Every public name lives here;
/// `transit::detail` is the implementation's. The main page of the reference lists the layers.
