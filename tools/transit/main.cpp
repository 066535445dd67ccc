// The transit command: `transit [--transit-* options] COMMAND ...`. Its commands (info, bench, demo,
// ...) register themselves from their files here, one file per command (cli.hpp); the kernels of
// `transit bench` register themselves from theirs in bench/ (bench/README.md).
//
// The whole command line is checked before any PE starts: the launch options by
// parse_run_options on a copy of argv (transit::run parses and strips them again), the rest by
// CLI11. A usage error is reported once (by the first process of an MPI launch), as
// "transit: error: <message>", with exit status 2 and no job; --help and -h work anywhere.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "transit/transit.hpp"

namespace {

/// False in every process but the first of an MPI launch, so that what every rank finds before
/// MPI starts (a usage error, the help) is printed once.
bool first_process() {
  if (!transit::started_by_mpi_launcher()) return true;  // a stray variable, no launch
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (const char* rank = std::getenv(name)) return std::strcmp(rank, "0") == 0;
  }
  return true;
}

/// Reports a usage error. Under a launcher only the first process reports it and fails: were the
/// others to fail too, the launcher could kill the first before it has written the message.
int usage_error(const std::string& message) {
  if (!first_process()) return 0;
  std::fprintf(stderr, "transit: error: %s\n", message.c_str());
  return 2;
}

bool help_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return false;
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  }
  return false;
}

/// The deepest command CLI11 got to, and its command line ("transit bench histogram").
const CLI::App& deepest_command(const CLI::App& app, std::string& path) {
  const CLI::App* sub = &app;
  path = app.get_name();
  while (!sub->get_subcommands().empty()) {
    sub = sub->get_subcommands().front();
    path += " " + sub->get_name();
  }
  return *sub;
}

/// "one of --scheme, --grid, ..." for the options of `command`.
std::string options_of(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options())
    if (option != command.get_help_ptr() && !option->get_lnames().empty())
      names.push_back("--" + option->get_lnames().front());
  return names.empty() ? "no option but --help" : "one of " + transit::cli::join(names);
}

/// The names of the commands (kernels, ...) under `command`, and what they are called.
std::vector<std::string> subcommands_of(const CLI::App& command, std::string& label) {
  label = command.get_formatter()->get_label("SUBCOMMAND");  // COMMAND, KERNEL
  for (char& c : label) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<std::string> names;
  for (const CLI::App* sub : command.get_subcommands({})) names.push_back(sub->get_name());
  return names;
}

/// A word CLI11 could not place under `command`: an unknown option, command or kernel, or a
/// stray argument.
std::string unexpected_word(const std::string& word, const CLI::App& command, const std::string& path) {
  if (word.size() > 1 && word[0] == '-' && word != "--")
    return "option: got '" + word.substr(0, word.find('=')) + "', expected " + options_of(command) + " (for '" +
           path + "')";
  std::string label;
  const auto names = subcommands_of(command, label);
  if (!names.empty() && command.get_subcommands().empty())
    return label + ": got '" + word + "', expected one of " + transit::cli::join(names);
  return "argument: got '" + word + "', expected nothing more after '" + path + "'";
}

/// CLI11's own messages, in transit's form ("<what>: got '<value>', expected <what was expected>"),
/// where they are not already (the value checks of cli.hpp produce that form themselves).
std::string message_of(const CLI::ParseError& e, const CLI::App& app, const std::vector<std::string>& args) {
  std::string path;
  const CLI::App& command = deepest_command(app, path);
  const std::string what = e.what(), see = "; see '" + path + " --help'";
  const auto words = app.remaining(true);  // what CLI11 could not place, in order
  const auto ends_with = [&](std::string_view tail) {
    return what.size() >= tail.size() && what.compare(what.size() - tail.size(), tail.size(), tail) == 0;
  };
  const bool unplaced = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr ||
                        (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && what.find("subcommand") != std::string::npos);
  // After "--" every word is an argument, and no transit command takes arguments.
  if (const auto dashes = std::find(args.begin(), args.end(), "--"); unplaced && dashes != args.end() && dashes + 1 != args.end())
    return "--: got '" + *(dashes + 1) + "' after it, expected nothing (no transit command takes arguments after '--')" + see;
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !words.empty()) return unexpected_word(words.front(), command, path) + see;
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && what.find("subcommand") != std::string::npos) {
    if (!words.empty()) return unexpected_word(words.front(), command, path) + see;
    std::string label;
    const auto names = subcommands_of(command, label);
    return label + ": got nothing, expected one of " + transit::cli::join(names) + " after '" + path + "'" + see;
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    if (const auto at = what.find(" was given a disallowed flag override"); at != std::string::npos) {
      const std::string flag = "--" + what.substr(0, at);
      std::string value;
      for (const auto& arg : args)
        if (arg.rfind(flag + "=", 0) == 0) value = arg.substr(flag.size() + 1);
      return flag + ": got '" + value + "', expected no value (a flag: give " + flag + " alone)" + see;
    }
    if (const auto at = what.find(": At Most "); at != std::string::npos)
      return what.substr(0, at) + ": given " + what.substr(what.rfind(' ') + 1) + " times, expected once" + see;
    if (const auto at = what.find(": "); at != std::string::npos && ends_with(" missing"))
      return what.substr(0, at) + ": got no value, expected a value after it" + see;
  }
  return what + see;
}

const char* launch_options_help =
    "Launch options, anywhere on the line (also TRANSIT_* environment variables, see README):\n"
    "  --transit-backend=local|mpi  --transit-pes=N  --transit-pes-force  --transit-pes-per-node=K\n"
    "  --transit-physical=SPEC  --transit-watchdog=SECONDS  --transit-mpi-threads=multiple|funneled\n"
    "  --transit-threads-per-rank=T  --transit-comm-thread=1|0  --transit-trace=DIR  --transit-trace-events=N\n";

}  // namespace

int main(int argc, char** argv) {
  // The launch options, checked on a copy without starting anything.
  std::vector<char*> args(argv, argv + argc + 1);
  int command_argc = argc;
  char** command_argv = args.data();
  transit::run_options launch;
  try {
    launch = transit::parse_run_options(command_argc, command_argv);
  } catch (const std::invalid_argument& e) {
    if (!help_requested(argc, argv)) return usage_error(e.what());
    // Help wins: CLI11 finds the command whose help to show, without the launch options.
    args.assign(1, argv[0]);
    for (int i = 1; i < argc; ++i)
      if (std::strncmp(argv[i], "--transit-", 10) != 0) args.push_back(argv[i]);
    command_argc = static_cast<int>(args.size());
    args.push_back(nullptr);
    command_argv = args.data();
  }

  // The parser holds every command's options (about 250 KB): it is gone before the job starts,
  // which keeps what was parsed in the commands' own variables. A simulated job runs thousands of
  // ranks in one process, each parsing its own command line (docs/simulation.md).
  const transit::cli::command_entry* command = nullptr;
  {
    CLI::App app("transit: aggregated fine-grained communication on parallel machines", "transit");
    app.footer(launch_options_help);
    app.set_version_flag("--version", std::string("transit ") + transit::version(), "print the version and exit");
    transit::cli::add_commands(app);
    try {
      app.parse(command_argc, command_argv);
    } catch (const CLI::ParseError& e) {
      // Help wins wherever it stands, even beside a mistake; help and --version exit with 0.
      const bool help = e.get_exit_code() == 0 || help_requested(command_argc, command_argv);
      if (!help)
        return usage_error(message_of(e, app, std::vector<std::string>(command_argv + 1, command_argv + command_argc)));
      if (first_process()) {
        if (dynamic_cast<const CLI::CallForVersion*>(&e) != nullptr) std::cout << e.what() << "\n";
        else std::cout << app.help();
      }
      return 0;
    }
    command = transit::cli::parsed_command(app);
  }
  if (command == nullptr) return usage_error("no command given; see 'transit --help'");

  // The command's default job on the local backend, unless the user chose (flag or environment).
  // Inserted before the user's arguments, so that a "--" among them cannot hide them.
  std::vector<char*> run_args{argv[0]};
  std::string pes = "--transit-pes=" + std::to_string(command->local_pes),
              per_node = "--transit-pes-per-node=" + std::to_string(command->local_pes_per_node);
  const bool local = launch.backend == "local" || (launch.backend.empty() && !transit::started_by_mpi_launcher());
  if (local && command->local_pes > 0 && launch.pes == 0) run_args.push_back(pes.data());
  if (local && command->local_pes_per_node > 0 && launch.pes_per_node == 0) run_args.push_back(per_node.data());
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!command->traced && arg.rfind("--transit-trace", 0) == 0) {
      if (arg.find('=') == std::string_view::npos && i + 1 < argc) ++i;  // "--transit-trace DIR"
      continue;
    }
    if (arg == "--") {  // what follows is not an option
      run_args.insert(run_args.end(), argv + i, argv + argc);
      break;
    }
    run_args.push_back(argv[i]);
  }
  if (!command->traced) ::unsetenv("TRANSIT_TRACE");
  int run_argc = static_cast<int>(run_args.size());
  run_args.push_back(nullptr);
  char** run_argv = run_args.data();

  std::atomic<int> status{0};
  const int run_status = transit::run(run_argc, run_argv, [&](transit::context& ctx) {
    const int mine = command->run(ctx);
    for (int seen = status.load(); mine > seen && !status.compare_exchange_weak(seen, mine);) {
    }
  });
  return run_status != 0 ? run_status : status.load();
}
