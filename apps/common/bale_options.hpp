#pragma once
// bale's standard options (std_options.upc's std_args: -b -c -D -j -M -s) as an option table, the
// check of bale's counts, which every application's own options share, and bale's pair of counts
// -n/-N with the entry of the applications whose own options are that pair (histo, ig, randperm).
#include <cstdint>
#include <string>
#include <utility>

#include "common/app_entry.hpp"
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

/// Local: -a,--NAME: which algorithms an application runs (sssp, triangles), bound to `target`,
/// the values `check` takes.
option_spec bale_alg_option(const std::string& name, std::string help, int& target, integer_range check);

/// Local: a count option's check: integers from `min` to 2^46 (far beyond memory), "`what` from ...".
integer_range bale_count(const std::string& what, std::int64_t min = 0);

/// bale's pair of counts (histo's updates, ig's reads, randperm's entries, a generated matrix's
/// rows): -n,--PER_PE_NAME per PE and -N,--TOTAL_NAME over all PEs, which takes precedence when
/// given (nonzero).
struct bale_counts {
  std::string per_pe_name, total_name;  ///< the long names: "l_num_updates", "num_updates"
  std::string per_pe_help, total_help;  ///< "updates per PE", "updates over all PEs"
  std::string what;                     ///< a value, in a usage error: "a number of updates"
  std::int64_t* per_pe = nullptr;       ///< -n's variable; its value before parsing is the default
  std::int64_t* total = nullptr;        ///< -N's variable, 0 unless given
  std::int64_t min = 0;                 ///< the smallest count either takes
};

/// Local: the pair's two options, -n's help saying its default and -N's that it takes precedence.
option_table bale_count_options(const bale_counts& counts);

/// -T,--NAME: the table entries per PE of histo and ig, bound to `table_per_pe` (none: no -T).
struct bale_table_size {
  std::string name{};                    ///< the long name: "table_size"
  std::int64_t* table_per_pe = nullptr;  ///< its value before parsing is the default
};

/// Local: the entry (`transit app NAME`) of an application whose own options are bale's pair of
/// counts and, when `table` names one, -T: its table (own options, then the standard ones) bound
/// to `args`, and `program` with the banner echoing them ("transit app NAME -n X [-N Y] [-T Z]
/// -b ..."). `Options` has `std`; `counts` and `table` bind to members of `args`, which lives as
/// long as the process.
template <class Options>
app_entry bale_counts_app(std::string name, std::string summary,
                          int (*program)(context&, const Options&, const std::string&), Options& args,
                          const bale_counts& counts, bale_table_size table = {}) {
  option_table own = bale_count_options(counts);
  if (table.table_per_pe != nullptr)
    own.push_back(bale_count_option("-T,--" + table.name,
                                    "table entries per PE (default " + std::to_string(*table.table_per_pe) + ")",
                                    *table.table_per_pe, "a number of entries", 1, "SIZE"));
  return {.name = name,
          .summary = std::move(summary),
          .options = own + bale_std_option_table(args.std),
          .run = [name, program, &args, per_pe = counts.per_pe, total = counts.total,
                  table_per_pe = table.table_per_pe](context& ctx) {
            // The options as they were taken, for the banner (bale echoes its argv).
            std::string line = "transit app " + name + " -n " + std::to_string(*per_pe);
            if (*total != 0) line += " -N " + std::to_string(*total);
            if (table_per_pe != nullptr) line += " -T " + std::to_string(*table_per_pe);
            return program(ctx, args, line + " " + bale_std_line(args.std));
          }};
}

}  // namespace transit::apps
