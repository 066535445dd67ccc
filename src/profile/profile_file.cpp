// The profile file: JSON through nlohmann-json (never a hand-written parser), checked field by
// field on reading so that a damaged file is named with what is wrong, never a crash.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <system_error>

#include "profile/profile_json.hpp"
#include "transit/detail/core/error.hpp"

namespace transit {

namespace {

using nlohmann::json;

constexpr const char* format_name = "transit profile";
constexpr int format_version = 1;

[[noreturn]] void fail(const std::filesystem::path& path, std::string_view problem) {
  throw profile_error(detail::concat("profile ", path.string(), ": ", problem,
                                     "; fix or delete the file, or run 'transit calibrate' to write a new one"));
}

/// Reads the fields of one JSON object, naming the path of a field that is missing or mistyped.
class reader {
 public:
  reader(const std::filesystem::path& file, const json& value, std::string where)
      : file_(file), value_(value), where_(std::move(where)) {
    if (!value_.is_object()) fail(file_, detail::concat(where_, ": expected an object"));
  }
  const json& at(const char* key) const {
    const auto it = value_.find(key);
    if (it == value_.end()) fail(file_, detail::concat(where_, ".", key, ": missing"));
    return *it;
  }
  std::string text(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(file_, detail::concat(where_, ".", key, ": expected a string"));
    return v.get<std::string>();
  }
  double number(const char* key, double min = 0) const {
    const json& v = at(key);
    if (!v.is_number() || !(v.get<double>() >= min))
      fail(file_, detail::concat(where_, ".", key, ": expected a number of at least ", min));
    return v.get<double>();
  }
  long long integer(const char* key, long long min = 0) const {
    const json& v = at(key);
    if (!v.is_number_integer() || v.get<long long>() < min)
      fail(file_, detail::concat(where_, ".", key, ": expected an integer of at least ", min));
    return v.get<long long>();
  }
  bool flag(const char* key) const {
    const json& v = at(key);
    if (!v.is_boolean()) fail(file_, detail::concat(where_, ".", key, ": expected true or false"));
    return v.get<bool>();
  }
  bool has(const char* key) const { return value_.contains(key); }
  reader object(const char* key) const { return reader(file_, at(key), detail::concat(where_, ".", key)); }
  const json& array(const char* key) const {
    const json& v = at(key);
    if (!v.is_array()) fail(file_, detail::concat(where_, ".", key, ": expected an array"));
    return v;
  }
  const std::string& where() const noexcept { return where_; }
  const std::filesystem::path& file() const noexcept { return file_; }

 private:
  const std::filesystem::path& file_;
  const json& value_;
  std::string where_;
};

json to_json(const std::vector<bandwidth_point>& points) {
  json curve = json::array();
  for (const auto& p : points)
    curve.push_back({{"message_bytes", p.message_bytes},
                     {"seconds_per_message", p.seconds_per_message},
                     {"bytes_per_second", p.bytes_per_second}});
  return curve;
}

json to_json(const link_calibration& l) {
  return {{"measured", l.measured},
          {"from_pe", l.from_pe},
          {"to_pe", l.to_pe},
          {"alpha_seconds", l.costs.alpha},
          {"beta_seconds_per_byte", l.costs.beta},
          {"per_item_seconds", l.costs.per_item},
          {"curve", to_json(l.curve)},
          {"raw_curve", to_json(l.raw_curve)}};
}

// `min_bytes`: the curve's messages carry at least a byte; the raw curve's start at 0.
std::vector<bandwidth_point> points_from(const reader& r, const char* key, long long min_bytes) {
  std::vector<bandwidth_point> points;
  const json& curve = r.array(key);
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const reader p(r.file(), curve[i], detail::concat(r.where(), ".", key, "[", i, "]"));
    points.push_back({static_cast<std::size_t>(p.integer("message_bytes", min_bytes)), p.number("seconds_per_message"),
                      p.number("bytes_per_second")});
  }
  return points;
}

link_calibration link_from(const reader& r) {
  link_calibration l;
  l.measured = r.flag("measured");
  l.from_pe = static_cast<int>(r.integer("from_pe", -1));
  l.to_pe = static_cast<int>(r.integer("to_pe", -1));
  l.costs.alpha = r.number("alpha_seconds");
  l.costs.beta = r.number("beta_seconds_per_byte");
  l.costs.per_item = r.number("per_item_seconds");
  l.curve = points_from(r, "curve", 1);
  if (r.has("raw_curve")) l.raw_curve = points_from(r, "raw_curve", 0);  // absent before 2026-11-30
  return l;
}

json to_json(const streamer_profile& s) {
  return {{"backend", s.backend},
          {"pes_per_node", s.pes_per_node},
          {"host", s.host},
          {"pes", s.pes},
          {"hardware_threads", s.hardware_threads},
          {"created", s.created},
          {"single_copy", s.single_copy},
          {"links", {{"intra", to_json(s.intra)}, {"inter", to_json(s.inter)}}},
          {"peak_bytes_per_second", s.peak_bytes_per_second},
          {"buffer_bytes", {{"50", s.buffer_bytes_50}, {"75", s.buffer_bytes_75}, {"90", s.buffer_bytes_90}}}};
}

streamer_profile streamer_from(const reader& r) {
  streamer_profile s;
  s.backend = r.text("backend");
  s.pes_per_node = static_cast<int>(r.integer("pes_per_node", 1));
  s.host = r.text("host");
  s.pes = static_cast<int>(r.integer("pes", 1));
  s.hardware_threads = static_cast<int>(r.integer("hardware_threads", 0));
  s.created = r.text("created");
  s.single_copy = r.text("single_copy");
  const reader links = r.object("links");
  s.intra = link_from(links.object("intra"));
  s.inter = link_from(links.object("inter"));
  s.peak_bytes_per_second = r.number("peak_bytes_per_second");
  const reader sizes = r.object("buffer_bytes");
  s.buffer_bytes_50 = static_cast<std::size_t>(sizes.integer("50", 1));
  s.buffer_bytes_75 = static_cast<std::size_t>(sizes.integer("75", 1));
  s.buffer_bytes_90 = static_cast<std::size_t>(sizes.integer("90", 1));
  return s;
}

json to_json(const transport_profile& t) {
  json measured = json::object();
  for (const auto& [mechanism, bandwidth] : t.single_copy_bandwidth) measured[mechanism] = bandwidth;
  return {{"backend", t.backend},
          {"pes_per_node", t.pes_per_node},
          {"host", t.host},
          {"single_copy", {{"bytes_per_second", measured}, {"choice", t.single_copy_choice}}}};
}

transport_profile transport_from(const reader& r) {
  transport_profile t;
  t.backend = r.text("backend");
  t.pes_per_node = static_cast<int>(r.integer("pes_per_node", 1));
  t.host = r.text("host");
  const reader copy = r.object("single_copy");
  const json& measured = copy.at("bytes_per_second");
  if (!measured.is_object()) fail(r.file(), r.where() + ".single_copy.bytes_per_second: expected an object");
  const reader values(r.file(), measured, r.where() + ".single_copy.bytes_per_second");
  for (const auto& [mechanism, bandwidth] : measured.items())
    t.single_copy_bandwidth[mechanism] = values.number(mechanism.c_str());
  t.single_copy_choice = copy.text("choice");
  return t;
}

bool same_key(const json& entry, std::string_view backend, int pes_per_node, std::string_view host) {
  return entry.value("backend", "") == backend && entry.value("pes_per_node", -1) == pes_per_node &&
         entry.value("host", "") == host;
}

std::string strip_json_prefix(std::string what) {
  // "[json.exception.parse_error.101] parse error at line 1, column 7: ..." -> "parse error at ..."
  if (const auto end = what.find("] "); !what.empty() && what[0] == '[' && end != std::string::npos)
    return what.substr(end + 2);
  return what;
}

}  // namespace

std::string to_json_text(const streamer_profile& entry) { return to_json(entry).dump(); }

std::filesystem::path default_profile_path() {
  if (const char* file = std::getenv("TRANSIT_PROFILE"); file != nullptr && *file != '\0') return file;
  // XDG Base Directory spec: a relative XDG_CACHE_HOME is invalid and ignored.
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache != nullptr && std::filesystem::path(cache).is_absolute())
    return std::filesystem::path(cache) / "transit" / "profile.json";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home != nullptr && *home != '\0' ? home : ".") / ".cache" / "transit" / "profile.json";
}

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

profile_file::profile_file(std::filesystem::path path, bool exists, std::shared_ptr<document> json)
    : path_(std::move(path)), exists_(exists), json_(std::move(json)) {}

profile_file profile_file::empty(const std::filesystem::path& path) {
  auto doc = std::make_shared<document>();
  doc->root = {{"format", format_name}, {"version", format_version}};
  return profile_file(path, false, std::move(doc));
}

profile_file profile_file::load(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return empty(path);
  auto doc = std::make_shared<document>();
  if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, expected a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot be opened for reading");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  if (content.find_first_not_of(" \t\r\n") == std::string::npos) fail(path, "is empty, expected a JSON object");
  try {
    doc->root = json::parse(content);
  } catch (const json::parse_error& e) {
    const bool truncated = e.byte >= content.size();
    fail(path, detail::concat(truncated ? "truncated JSON (" : "not valid JSON (", strip_json_prefix(e.what()), ")"));
  }
  const reader root(path, doc->root, "profile");
  if (root.text("format") != format_name)
    fail(path, detail::concat("format: got '", root.text("format"), "', expected '", format_name, "'"));
  if (const long long version = root.integer("version", 1); version > format_version)
    fail(path, detail::concat("version ", version, " was written by a newer transit (this one reads version ",
                              format_version, ")"));
  profile_file file(path, true, std::move(doc));
  // Check every entry now: a damaged entry is reported when the file is read, not when a
  // streamer happens to need it.
  for (const char* kind : {"streamer", "transport", "protocols"}) {
    const json* section = detail::profile_access::find_section(file, kind);
    if (section == nullptr) continue;
    if (!section->is_array()) fail(path, detail::concat(kind, ": expected an array of entries"));
    for (std::size_t i = 0; i < section->size(); ++i) {
      const reader entry(path, (*section)[i], detail::concat(kind, "[", i, "]"));
      entry.text("backend");
      entry.integer("pes_per_node", 1);
      entry.text("host");
      if (std::string_view(kind) == "streamer") streamer_from(entry);
      if (std::string_view(kind) == "transport") transport_from(entry);
    }
  }
  return file;
}

std::optional<streamer_profile> profile_file::find_streamer(std::string_view backend, int pes_per_node,
                                                            std::string_view host) const {
  const json* section = detail::profile_access::find_section(*this, "streamer");
  if (section == nullptr) return std::nullopt;
  for (std::size_t i = 0; i < section->size(); ++i) {
    if (same_key((*section)[i], backend, pes_per_node, host))
      return streamer_from(reader(path_, (*section)[i], detail::concat("streamer[", i, "]")));
  }
  return std::nullopt;
}

std::optional<streamer_profile> profile_file::closest_streamer(std::string_view backend, int pes_per_node,
                                                               std::string_view host, bool& exact) const {
  exact = false;
  std::optional<streamer_profile> best;
  for (auto& entry : streamer_entries()) {
    if (entry.backend != backend || entry.host != host) continue;
    const auto distance = [&](const streamer_profile& e) { return std::abs(e.pes_per_node - pes_per_node); };
    if (!best || distance(entry) < distance(*best) ||
        (distance(entry) == distance(*best) && entry.pes_per_node < best->pes_per_node))
      best = std::move(entry);
  }
  exact = best && best->pes_per_node == pes_per_node;
  return best;
}

std::optional<transport_profile> profile_file::find_transport(std::string_view backend, std::string_view host) const {
  const json* section = detail::profile_access::find_section(*this, "transport");
  if (section == nullptr) return std::nullopt;
  for (std::size_t i = 0; i < section->size(); ++i) {
    const json& e = (*section)[i];
    if (e.value("backend", "") == backend && e.value("host", "") == host)
      return transport_from(reader(path_, e, detail::concat("transport[", i, "]")));
  }
  return std::nullopt;
}

std::vector<streamer_profile> profile_file::streamer_entries() const {
  std::vector<streamer_profile> out;
  const json* section = detail::profile_access::find_section(*this, "streamer");
  if (section == nullptr) return out;
  for (std::size_t i = 0; i < section->size(); ++i)
    out.push_back(streamer_from(reader(path_, (*section)[i], detail::concat("streamer[", i, "]"))));
  return out;
}

void profile_file::put(const streamer_profile& entry) {
  json& section = detail::profile_access::section(*this, "streamer");
  for (auto& e : section) {
    if (same_key(e, entry.backend, entry.pes_per_node, entry.host)) {
      e = to_json(entry);
      return;
    }
  }
  section.push_back(to_json(entry));
}

void profile_file::put(const transport_profile& entry) {
  json& section = detail::profile_access::section(*this, "transport");
  for (auto& e : section) {
    if (e.value("backend", "") == entry.backend && e.value("host", "") == entry.host) {
      e = to_json(entry);
      return;
    }
  }
  section.push_back(to_json(entry));
}

void profile_file::save() const { detail::write_profile_text(path_, json_->root.dump(2) + "\n"); }

profile_status profile_in_use(std::string_view backend, int pes_per_node) {
  profile_status status;
  status.path = default_profile_path();
  try {
    const auto file = detail::cached_profile(status.path);
    status.file_exists = file->exists();
    status.streamer = file->closest_streamer(backend, pes_per_node, this_host(), status.exact);
  } catch (const profile_error& e) {
    status.error = e.what();
  }
  return status;
}

namespace detail {

void write_profile_text(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) fail(path, detail::concat("its directory cannot be created (", ec.message(), ")"));
  }
  std::filesystem::path temporary = path;
  temporary += detail::concat(".tmp.", getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, detail::concat("cannot be written (", temporary.string(), " cannot be created)"));
    out << text;
    if (!out.flush()) fail(path, "cannot be written (disk full?)");
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    fail(path, "cannot be replaced (rename failed)");
  }
}

nlohmann::json& profile_access::section(profile_file& file, std::string_view kind) {
  json& root = file.json_->root;
  json& s = root[std::string(kind)];
  if (!s.is_array()) s = json::array();
  return s;
}

const nlohmann::json* profile_access::find_section(const profile_file& file, std::string_view kind) {
  const json& root = file.json_->root;
  const auto it = root.find(std::string(kind));
  return it == root.end() ? nullptr : &*it;
}

std::shared_ptr<const profile_file> cached_profile(const std::filesystem::path& path) {
  struct entry {
    std::filesystem::file_time_type written{};
    std::uintmax_t size = 0;
    bool exists = false;
    std::shared_ptr<const profile_file> file;
  };
  static std::mutex mutex;
  static std::map<std::filesystem::path, entry> cache;
  std::error_code ec;
  entry now;
  now.exists = std::filesystem::exists(path, ec);
  if (now.exists) {
    now.written = std::filesystem::last_write_time(path, ec);
    now.size = std::filesystem::file_size(path, ec);
  }
  std::lock_guard lock(mutex);
  auto& cached = cache[path];
  if (cached.file && cached.exists == now.exists && cached.written == now.written && cached.size == now.size)
    return cached.file;
  now.file = std::make_shared<const profile_file>(profile_file::load(path));  // throws for a bad file
  cached = now;
  return cached.file;
}

}  // namespace detail
}  // namespace transit
