#pragma once
// transit/base.hpp: the light entry header, for a program that only streams items: transit::run,
// context (with machine, the collectives and reduce_op), run_options, streamer_options and
// streamer<T>. Named after {fmt}'s base.h, which plays the same role beside format.h: the base
// every transit program stands on, and nothing more. transit/transit.hpp (the umbrella) adds
// object_streamer, active messages, sparse exchange, one-sided arrays, topology, mapping, tuning
// and protocols; a program that includes this header may include those it needs one by one.
// scripts/header-weight measures what each costs to include: this one about two fifths of the
// umbrella (BENCHMARKS.md), nearly all of it <string>, <vector>, <span> and <optional>, because the
// streaming path keeps <memory>, <functional>, <thread>, <mutex>, <atomic>, the containers and
// full <chrono> out of its headers (owned state behind plain pointers, function references,
// compiled waits; detail/core/chrono.hpp).
#include "transit/detail/core/cxx20.hpp"  // first: "transit needs C++20" instead of a std::span error
#include "transit/runtime/options.hpp"
#include "transit/runtime/run.hpp"
#include "transit/streamer/options.hpp"
#include "transit/streamer/streamer.hpp"
