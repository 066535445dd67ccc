#pragma once
// Included first by the entry headers (transit/base.hpp, transit/transit.hpp, transit/mpi.hpp), so
// that a program compiled as C++17 or older gets one line saying what to change, instead of
// hundreds of errors about std::span or concepts deep inside the headers. MSVC reports its real
// standard in _MSVC_LANG (__cplusplus stays 199711L there without /Zc:__cplusplus).
#if defined(_MSVC_LANG) && _MSVC_LANG > __cplusplus
#define TRANSIT_DETAIL_CPLUSPLUS _MSVC_LANG
#else
#define TRANSIT_DETAIL_CPLUSPLUS __cplusplus
#endif
#if TRANSIT_DETAIL_CPLUSPLUS < 202002L
#error "transit needs C++20 (compile with -std=c++20 or later)"
// Compilers go on after #error; a missing include is the one error that stops GCC and Clang here.
#include "transit/detail/core/stop: the error above"
#endif
#undef TRANSIT_DETAIL_CPLUSPLUS
