#pragma once
// The calibrated profile file moved to its own module, below the runtime, and profile_in_use(ctx)
// to the cost model's: this path keeps programs that include it working.
#include "transit/model/model.hpp"
#include "transit/profile/profile.hpp"
