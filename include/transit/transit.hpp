#pragma once
// transit: aggregated, topology-aware fine-grained communication. The one header to include.
#include "transit/runtime/context.hpp"
#include "transit/runtime/options.hpp"
#include "transit/runtime/run.hpp"
#include "transit/topology/machine.hpp"
