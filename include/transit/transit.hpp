#pragma once
// transit: aggregated, topology-aware fine-grained communication. The one header to include.
#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"
#include "transit/runtime/run.hpp"
#include "transit/topology/machine.hpp"
#include "transit/grid/router.hpp"
#include "transit/grid/virtual_grid.hpp"
#include "transit/streamer/options.hpp"
#include "transit/streamer/streamer.hpp"
#include "transit/streamer/object_streamer.hpp"
#include "transit/tuning/calibrate.hpp"
#include "transit/tuning/model.hpp"
#include "transit/tuning/profile.hpp"
