// Protocol profiles: lookup, the built-in rule, the "protocols" section of the profile file
// (JSON through nlohmann-json, through the profile module below: src/profile/; the file's other
// sections are kept as they are), and what `automatic` takes (automatic_protocol.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/floor_log2.hpp"
#include "one_sided/automatic_protocol.hpp"
#include "profile/profile_json.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/one_sided/protocol_profile.hpp"
#include "transit/profile/profile.hpp"
#include "transit/runtime/context.hpp"

namespace transit {

using nlohmann::json;

namespace {

constexpr const char* format_name = "transit profile";
constexpr int format_version = 1;
constexpr std::array<transfer_protocol, 3> fixed_protocols = {transfer_protocol::blocking, transfer_protocol::pipelined,
                                                              transfer_protocol::packed};

using detail::floor_log2;

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& problem) {
  throw protocol_profile_error(detail::concat("profile file ", path.string(), ": ", problem));
}

// Field readers that name the field (entry path) and what was expected.
const json& field(const std::filesystem::path& path, const json& object, const std::string& where, const char* name) {
  if (!object.is_object()) fail(path, detail::concat(where, ": expected a JSON object"));
  const auto it = object.find(name);
  if (it == object.end()) fail(path, detail::concat(where, ".", name, ": missing"));
  return *it;
}
std::string text(const std::filesystem::path& path, const json& object, const std::string& where, const char* name) {
  const json& v = field(path, object, where, name);
  if (!v.is_string()) fail(path, detail::concat(where, ".", name, ": got ", v.dump(), ", expected a string"));
  return v.get<std::string>();
}
std::size_t count(const std::filesystem::path& path, const json& object, const std::string& where, const char* name,
                  bool positive) {
  const json& v = field(path, object, where, name);
  if (!v.is_number_integer() || v.get<long long>() < (positive ? 1 : 0))
    fail(path, detail::concat(where, ".", name, ": got ", v.dump(), ", expected a ", positive ? "positive" : "non-negative",
                              " integer"));
  return v.get<std::size_t>();
}
double seconds(const std::filesystem::path& path, const json& object, const std::string& where, const char* name) {
  const json& v = field(path, object, where, name);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    fail(path, detail::concat(where, ".", name, ": got ", v.dump(), ", expected a time in seconds (a number >= 0)"));
  return v.get<double>();
}

protocol_table read_table(const std::filesystem::path& path, const json& entry, const std::string& where,
                          const char* name) {
  protocol_table t;
  const std::string here = detail::concat(where, ".", name);
  const json& j = field(path, entry, where, name);
  const json& measured = field(path, j, here, "measured");
  if (!measured.is_boolean()) fail(path, detail::concat(here, ".measured: got ", measured.dump(), ", expected true or false"));
  t.measured = measured.get<bool>();
  const json& points = field(path, j, here, "points");
  if (!points.is_array()) fail(path, detail::concat(here, ".points: expected an array"));
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string at = detail::concat(here, ".points[", i, "]");
    protocol_point p;
    p.region_bytes = count(path, points[i], at, "region_bytes", true);
    p.regions = count(path, points[i], at, "regions", true);
    const std::string sec = at + ".seconds";
    const json& s = field(path, points[i], at, "seconds");
    p.blocking = seconds(path, s, sec, "blocking");
    p.pipelined = seconds(path, s, sec, "pipelined");
    p.packed = seconds(path, s, sec, "packed");
    t.points.push_back(p);
  }
  if (t.measured && t.points.empty()) fail(path, detail::concat(here, ": measured, but no points"));
  return t;
}

json write_table(const protocol_table& t) {
  json points = json::array();
  for (const auto& p : t.points)
    points.push_back({{"region_bytes", p.region_bytes},
                      {"regions", p.regions},
                      {"seconds", {{"blocking", p.blocking}, {"pipelined", p.pipelined}, {"packed", p.packed}}},
                      {"fastest", to_string(p.fastest())},
                      {"chosen", to_string(t.smoothed_fastest(p))}});
  return {{"measured", t.measured}, {"points", std::move(points)}};
}

json to_json(const protocol_profile& e) {
  return {{"backend", e.backend}, {"pes_per_node", e.pes_per_node}, {"host", e.host}, {"pes", e.pes},
          {"created", e.created}, {"intra", write_table(e.intra)},    {"inter", write_table(e.inter)}};
}

/// The file's JSON; a file that does not exist is nullopt.
std::optional<json> read_root(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot be opened for reading");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string content = buffer.str();
  json root;
  try {
    root = json::parse(content);
  } catch (const json::parse_error& e) {
    // nlohmann reports the end of input for a file cut short: say "truncated".
    const bool truncated = e.byte >= content.size();
    fail(path, detail::concat(truncated ? "truncated (the JSON ends early)" : "not JSON", " at byte ", e.byte, ": ",
                              e.what()));
  }
  if (!root.is_object()) fail(path, "expected a JSON object at the top");
  if (const auto f = root.find("format"); f != root.end() && (!f->is_string() || f->get<std::string>() != format_name))
    fail(path, detail::concat("format: got ", f->dump(), ", expected \"", format_name, "\""));
  if (const auto v = root.find("version"); v != root.end()) {
    if (!v->is_number_integer()) fail(path, detail::concat("version: got ", v->dump(), ", expected an integer"));
    if (v->get<long long>() > format_version)
      fail(path, detail::concat("version ", v->get<long long>(), " was written by a newer transit (this one reads version ",
                                format_version, ")"));
  }
  return root;
}

}  // namespace

double protocol_point::seconds(transfer_protocol p) const noexcept {
  return p == transfer_protocol::blocking ? blocking : p == transfer_protocol::pipelined ? pipelined : packed;
}

transfer_protocol protocol_point::fastest() const noexcept {
  transfer_protocol best = transfer_protocol::blocking;
  for (const auto p : fixed_protocols)
    if (seconds(p) < seconds(best)) best = p;
  return best;
}

const protocol_point* protocol_table::lookup(std::size_t region_bytes, std::size_t regions) const noexcept {
  const int s = floor_log2(std::max<std::size_t>(region_bytes, 1));
  const int n = floor_log2(std::max<std::size_t>(regions, 1));
  const protocol_point* best = nullptr;
  int best_distance = 0;
  for (const auto& p : points) {
    const int d = std::abs(floor_log2(p.region_bytes) - s) + std::abs(floor_log2(p.regions) - n);
    if (best == nullptr || d < best_distance) {
      best = &p;
      best_distance = d;
    }
  }
  return best;
}

namespace {
/// The largest lead one point's protocols count with in smoothing (log 1.5).
const double max_smoothing_lead = std::log(1.5);
}  // namespace

transfer_protocol protocol_table::smoothed_fastest(const protocol_point& at) const noexcept {
  const auto usable = [](const protocol_point& p) { return p.blocking > 0 && p.pipelined > 0 && p.packed > 0; };
  if (!usable(at)) return at.fastest();
  const int s = floor_log2(at.region_bytes), n = floor_log2(at.regions);
  std::array<double, fixed_protocols.size()> score{};
  for (const auto& p : points) {
    const int ds = std::abs(floor_log2(p.region_bytes) - s), dn = std::abs(floor_log2(p.regions) - n);
    if (ds + dn > 1 || !usable(p)) continue;
    const double weight = ds + dn == 0 ? 2.0 : 1.0;
    // Each protocol's log time over the point's fastest (the same ranking as relative to the
    // point's mean), capped at log 1.5: one point's burst (a median 8 times its neighbours', seen
    // on a loaded machine) says "this protocol lost here", not "by 8x", so it cannot outvote a
    // clear lead of the point itself.
    const double fastest = p.seconds(p.fastest());
    for (std::size_t i = 0; i < fixed_protocols.size(); ++i)
      score[i] += weight * std::min(std::log(p.seconds(fixed_protocols[i]) / fastest), max_smoothing_lead);
  }
  std::size_t best = 0;  // blocking on ties, then pipelined, as fastest()
  for (std::size_t i = 1; i < score.size(); ++i)
    if (score[i] < score[best]) best = i;
  return fixed_protocols[best];
}

transfer_protocol builtin_protocol_choice(std::size_t region_bytes, std::size_t regions) noexcept {
  return regions >= 2 && region_bytes <= 512 ? transfer_protocol::packed : transfer_protocol::pipelined;
}

transfer_protocol protocol_profile::choose(std::size_t region_bytes, std::size_t regions, bool same_node) const noexcept {
  const protocol_table* first = same_node ? &intra : &inter;
  const protocol_table* second = same_node ? &inter : &intra;
  for (const auto* t : {first, second})
    if (t->measured)
      if (const protocol_point* p = t->lookup(region_bytes, regions)) return t->smoothed_fastest(*p);
  return builtin_protocol_choice(region_bytes, regions);
}

// The file and the host key are the profile module's (transit/profile/profile.hpp): one path rule
// and one host rule for every section of the file.
std::filesystem::path protocol_profile_path() { return default_profile_path(); }

std::string protocol_profile_host() { return this_host(); }

std::optional<protocol_profile> load_protocol_profile(const std::filesystem::path& path, std::string_view backend,
                                                      int pes_per_node, std::string_view host) {
  const auto root = read_root(path);
  if (!root) return std::nullopt;
  const auto section = root->find("protocols");
  if (section == root->end()) return std::nullopt;
  if (!section->is_array()) fail(path, "protocols: expected an array of entries");
  const json* chosen = nullptr;
  int chosen_ppn = 0;
  for (std::size_t i = 0; i < section->size(); ++i) {
    const std::string where = detail::concat("protocols[", i, "]");
    const json& e = (*section)[i];
    if (text(path, e, where, "backend") != backend || text(path, e, where, "host") != host) continue;
    const int ppn = static_cast<int>(count(path, e, where, "pes_per_node", true));
    const int d = std::abs(ppn - pes_per_node);
    const int best = std::abs(chosen_ppn - pes_per_node);
    if (chosen == nullptr || d < best || (d == best && ppn < chosen_ppn)) {
      chosen = &e;
      chosen_ppn = ppn;
    }
  }
  if (chosen == nullptr) return std::nullopt;
  std::size_t index = 0;
  while (&(*section)[index] != chosen) ++index;
  const std::string where = detail::concat("protocols[", index, "]");
  protocol_profile p;
  p.backend = backend;
  p.host = host;
  p.pes_per_node = chosen_ppn;
  p.pes = static_cast<int>(count(path, *chosen, where, "pes", true));
  p.created = text(path, *chosen, where, "created");
  p.source = path.string();
  p.intra = read_table(path, *chosen, where, "intra");
  p.inter = read_table(path, *chosen, where, "inter");
  return p;
}

void save_protocol_profile(const std::filesystem::path& path, const protocol_profile& entry) {
  json root = read_root(path).value_or(json::object());
  root["format"] = format_name;
  if (!root.contains("version")) root["version"] = format_version;
  json& section = root["protocols"];
  if (!section.is_array()) section = json::array();
  json fresh = to_json(entry);
  bool replaced = false;
  for (auto& e : section) {
    if (e.is_object() && e.value("backend", "") == entry.backend && e.value("host", "") == entry.host &&
        e.value("pes_per_node", 0) == entry.pes_per_node) {
      e = fresh;
      replaced = true;
    }
  }
  if (!replaced) section.push_back(std::move(fresh));
  try {
    detail::write_profile_text(path, root.dump(1) + "\n");  // the file's one writer (src/profile/)
  } catch (const profile_error& e) {
    throw protocol_profile_error(e.what());
  }
}

std::string to_json_text(const protocol_profile& entry) { return to_json(entry).dump(); }

namespace {

struct cache_entry {
  std::shared_ptr<const protocol_profile> profile;
  std::string error;
};
std::mutex cache_mutex;
std::map<std::string, cache_entry>& cache() {
  static std::map<std::string, cache_entry> entries;
  return entries;
}

cache_entry cached(const context& ctx) {
  const auto path = protocol_profile_path();
  const std::string key = detail::concat(path.string(), '\n', ctx.backend(), '\n', ctx.machine().max_pes_per_node());
  std::lock_guard lock(cache_mutex);
  auto it = cache().find(key);
  if (it != cache().end()) return it->second;
  cache_entry e;
  try {
    auto p = load_protocol_profile(path, ctx.backend(), ctx.machine().max_pes_per_node(), protocol_profile_host());
    if (p) e.profile = std::make_shared<const protocol_profile>(std::move(*p));
  } catch (const protocol_profile_error& error) {
    e.error = error.what();
  }
  if (!e.profile && e.error.empty()) {
    protocol_profile builtin;
    builtin.source = "built-in";
    e.profile = std::make_shared<const protocol_profile>(std::move(builtin));
  }
  return cache().emplace(key, e).first->second;
}

}  // namespace

protocol_profile_status protocol_profile_in_use(const context& ctx) {
  protocol_profile_status s;
  s.path = protocol_profile_path();
  const cache_entry e = cached(ctx);
  s.error = e.error;
  if (!e.error.empty()) {
    s.description = e.error;
  } else if (e.profile->source == "built-in") {
    s.description = detail::concat("built-in rule (no protocols entry for ", ctx.backend(), ", ",
                                   ctx.machine().max_pes_per_node(), " PEs per node, host ", protocol_profile_host(),
                                   " in ", s.path.string(), ")");
  } else {
    s.from_file = true;
    s.description = detail::concat(s.path.string(), " (", e.profile->backend, ", ", e.profile->pes_per_node,
                                   " PEs per node, ", e.profile->created, ")");
  }
  return s;
}

namespace detail {

namespace {
/// `automatic` from a profile entry (or the built-in rule, an entry without tables).
class profile_choice final : public automatic_protocol {
 public:
  explicit profile_choice(std::shared_ptr<const protocol_profile> profile) : profile_(std::move(profile)) {}
  transfer_protocol choose(std::size_t region_bytes, std::size_t regions, bool same_node) const override {
    return profile_->choose(region_bytes, regions, same_node);
  }

 private:
  std::shared_ptr<const protocol_profile> profile_;
};
}  // namespace

std::shared_ptr<const automatic_protocol> automatic_protocol_for(const context& ctx) {
  cache_entry e = cached(ctx);
  if (!e.error.empty()) throw protocol_profile_error(e.error);
  return std::make_shared<const profile_choice>(std::move(e.profile));
}

}  // namespace detail
}  // namespace transit
