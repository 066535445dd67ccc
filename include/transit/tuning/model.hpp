#pragma once
// The cost model moved to its own module, below the streamer that asks it: this path keeps
// programs that include it working.
#include "transit/model/model.hpp"
