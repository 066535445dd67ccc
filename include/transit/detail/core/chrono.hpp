#pragma once
// std::chrono's durations, clocks and literals, without the rest of <chrono>. In libstdc++ (GCC
// 12) <chrono> brings the C++20 calendar, time zones and their formatting: 46,000 preprocessed
// lines, a third of what the umbrella header costs. The parts transit's headers use (duration,
// time_point, steady_clock, the duration literals) are in <bits/chrono.h>, which libstdc++ itself
// includes from <thread> and <mutex> for the same reason. Any other standard library: <chrono>.
// A program that wants the calendar includes <chrono> itself, as it would anyway.
#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h>
#else
#include <chrono>
#endif
