#pragma once
// The protocols' calibration, under a name that says which (tuning/ calibrates the streamer): this
// path keeps programs that include it working.
#include "transit/protocols/calibrate_protocols.hpp"
