#pragma once
// The streamer's calibration, under a name that says which (protocols/ calibrates too): this path
// keeps programs that include it working.
#include "transit/tuning/calibrate_streamer.hpp"
