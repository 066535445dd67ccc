#pragma once
// A program's options as plain data: each option's names, help line, the variable it sets (whose
// value before parsing is the default) and the values it accepts. An application (apps/*) and a
// benchmark kernel (bench/) describe their options with it and parse nothing themselves: the
// transit command (tools/transit) builds its command line from the table, so that every usage
// error reads alike ("transit: error: <option>: got '<value>', expected <what>").
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace transit::apps {

/// Decimal integers from min to max; `expected` completes "got 'x', expected ...". The value is
/// read as the bound variable's type.
struct integer_range {
  std::int64_t min = 0, max = 0;
  std::string expected{};
};

/// Finite real numbers from min to max.
struct real_range {
  double min = 0, max = 0;
  std::string expected{};
};

/// One of the names ("got 'x', expected one of a, b, c").
struct one_of_names {
  std::vector<std::string> names{};
};

/// Any other check: the whole error message for a bad value, empty for a good one.
using custom_check = std::function<std::string(const std::string&)>;

/// What an option accepts; monostate: any value of its type.
using option_check = std::variant<std::monostate, integer_range, real_range, one_of_names, custom_check>;

/// The variable an option sets. A bool makes a flag. None (monostate): the option only calls
/// its `on_parse`.
using option_target =
    std::variant<std::monostate, int*, std::int64_t*, std::uint64_t*, double*, std::string*, bool*>;

enum class option_kind {
  value,           ///< takes a value
  flag,            ///< takes none and may be given once
  repeatable_flag  ///< takes none and may be repeated
};

/// One option of a program.
struct option_spec {
  std::string names;        ///< "-n,--l_numrows" or "--ops": short and long spellings
  std::string help;         ///< one line for --help, which says the default
  option_target target{};   ///< set by the option (its value before parsing is the default)
  option_check check{};     ///< the values it accepts
  std::string type_name{};  ///< the value's name in the help ("NUM"); empty: the parser's (INT, TEXT, ...)
  option_kind kind = option_kind::value;
  /// Optional: called with the value (empty for a flag) as the option is parsed, in command-line
  /// order (bale's -F, -G, -K: the last given wins). Takes the place of `target`.
  std::function<void(const std::string&)> on_parse{};
};

/// A program's options, in the order its --help lists them.
using option_table = std::vector<option_spec>;

/// Local: `table` followed by `more` (an application's options, then bale's standard ones).
inline option_table operator+(option_table table, const option_table& more) {
  table.insert(table.end(), more.begin(), more.end());
  return table;
}

}  // namespace transit::apps
