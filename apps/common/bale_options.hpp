#pragma once
// bale's standard options (std_options.upc's std_args: -b -c -D -j -M -s) as an option table, and
// the check of bale's counts, which every application's own options share.
#include <cstdint>
#include <string>

#include "common/bale_report.hpp"
#include "common/option_table.hpp"

namespace transit::apps {

/// Local: bale's standard options, bound to `options`.
option_table bale_std_option_table(bale_std_options& options);

/// Local: "-b 1024 -M 15 -s 122222 [-D] [-j FILE]": the standard options as taken, for the banner.
std::string bale_std_line(const bale_std_options& options);

/// Local: a count option of an application (-n, -N, -T, ...) bound to `target`: bale_count(what,
/// min), its value named `type_name` in the help.
option_spec bale_count_option(std::string names, std::string help, std::int64_t& target, const std::string& what,
                              std::int64_t min = 0, std::string type_name = "NUM");

/// Local: "transit app NAME -n PER_PE [-N TOTAL]": the start of the banner of an application that
/// takes a count per PE and one over all PEs (-N, shown when given).
std::string bale_counts_line(const std::string& name, std::int64_t per_pe, std::int64_t total);

/// Local: a count option's check: integers from `min` to 2^46 (far beyond memory), "`what` from ...".
integer_range bale_count(const std::string& what, std::int64_t min = 0);

}  // namespace transit::apps
