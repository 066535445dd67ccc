#pragma once
// The calibrated profile file moved to its own module, below tuning and protocols: this path
// keeps programs that include it working.
#include "transit/profile/profile.hpp"
