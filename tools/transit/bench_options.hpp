#pragma once
// The command line of `transit bench KERNEL` (tools/transit/bench.cpp), which `transit model
// KERNEL` shares: the options every kernel takes, then the kernel's own.
#include <functional>

#include <CLI/CLI.hpp>

#include "bench.hpp"

namespace transit::cli {

/// Adds every kernel as a subcommand of `command` (bench, model) with the common options and its
/// own, parsed into `opt`; `extra` adds options of the command's own to each kernel.
void add_kernel_commands(CLI::App& command, bench::options& opt, const std::function<void(CLI::App&)>& extra = {});

}  // namespace transit::cli
