#pragma once
// The measured protocol profiles that `automatic` chooses from moved to one_sided, which reads
// them (the protocols layer above keeps their calibration): this path keeps programs that
// include it working.
#include "transit/one_sided/protocol_profile.hpp"
