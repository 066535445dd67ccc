#pragma once
// transit/base.hpp: the light entry header, for a program that only streams items: transit::run,
// context (with machine, the collectives and reduce_op), run_options, streamer_options and
// streamer<T>. Named after {fmt}'s base.h, which plays the same role beside format.h: the base
// every transit program stands on, and nothing more. transit/transit.hpp (the umbrella) adds
// object_streamer, active messages, sparse exchange, one-sided arrays, topology, mapping, tuning
// and protocols; a program that includes this header may include those it needs one by one.
// scripts/header-weight measures what each costs to include.
#include "transit/runtime/options.hpp"
#include "transit/runtime/run.hpp"
#include "transit/streamer/options.hpp"
#include "transit/streamer/streamer.hpp"
