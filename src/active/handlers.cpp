// The process's handler table and code references (see detail/calls.hpp and the top of
// active_messages.hpp): ids from the place of each handler's code in its loaded object, which
// every process of one binary shares whatever ASLR does.
#include <link.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "call_error.hpp"
#include "transit/detail/active/calls.hpp"
#include "transit/detail/core/error.hpp"
#include "transit/detail/core/simulation.hpp"

namespace transit::detail {

namespace {

std::uint32_t fnv1a32(std::string_view text) {
  std::uint32_t hash = 0x811c9dc5u;
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 0x01000193u;
  return hash;
}

std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
  for (int i = 0; i < 8; ++i, value >>= 8) hash = (hash ^ (value & 0xff)) * 0x100000001b3ULL;
  return hash;
}

// A loaded object (the executable or a shared library) and where its code is.
struct code_object {
  std::string name;          // file name without directories; "" for the executable
  std::uint32_t name_hash = 0;
  std::uintptr_t base = 0;   // load bias: addresses in the file plus this
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> code;  // executable segments [begin, end)
  bool ambiguous = false;    // another loaded object's name has the same hash
};

int add_object(dl_phdr_info* info, std::size_t, void* data) {
  auto& objects = *static_cast<std::vector<code_object>*>(data);
  code_object o;
  // glibc visits the executable first, with an empty or path name; it is "" in every process.
  if (!objects.empty() && info->dlpi_name != nullptr) {
    const std::string_view path = info->dlpi_name;
    const auto slash = path.rfind('/');
    o.name = std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
  }
  o.name_hash = fnv1a32(o.name);
  o.base = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0)
      o.code.emplace_back(o.base + ph.p_vaddr, o.base + ph.p_vaddr + ph.p_memsz);
  }
  objects.push_back(std::move(o));
  return 0;
}

// The loaded object whose code holds `address`, if any.
const code_object* object_holding(const std::vector<code_object>& objects, std::uintptr_t address) {
  for (const auto& o : objects)
    for (const auto& [begin, end] : o.code)
      if (address >= begin && address < end) return &o;
  return nullptr;
}

// SMPI's dlopen privatization loads one copy of the program per simulated rank, all in one
// process, named <program>_<pid>_<rank>.so. A rank's handlers are in its own copy (the one holding
// this code): that copy is known by the program's name, as on every other rank, and the other
// ranks' copies are not this PE's code.
std::string smpi_copy_stem(const std::string& name) {
  if (!name.ends_with(".so")) return {};
  std::string stem = name.substr(0, name.size() - 3);
  for (int part = 0; part < 2; ++part) {
    const auto underscore = stem.rfind('_');
    if (underscore == std::string::npos || underscore + 1 == stem.size() ||
        stem.find_first_not_of("0123456789", underscore + 1) != std::string::npos)
      return {};
    stem.resize(underscore);
  }
  return stem;
}

void keep_own_smpi_copy(std::vector<code_object>& objects) {
  const code_object* own = object_holding(objects, reinterpret_cast<std::uintptr_t>(&fnv1a32));
  if (own == nullptr) return;
  const std::string stem = smpi_copy_stem(own->name);
  if (stem.empty()) return;  // not a privatized copy
  const std::string own_name = own->name;
  std::erase_if(objects, [&](const code_object& o) { return o.name != own_name && smpi_copy_stem(o.name) == stem; });
  for (auto& o : objects)
    if (o.name == own_name) {
      o.name = stem;
      o.name_hash = fnv1a32(stem);
    }
}

// Handlers and loaded objects of this process; objects are re-read when an address is in none
// of them (a library loaded since).
struct registry {
  std::mutex lock;
  std::vector<handler_entry*> queued;
  std::vector<handler_entry*> by_id;
  std::vector<std::uint64_t> references;  // by id
  std::uint64_t signature = 0xcbf29ce484222325ULL;
  std::vector<code_object> objects;

  void read_objects() {
    objects.clear();
    dl_iterate_phdr(add_object, &objects);
    if constexpr (simulated_build) keep_own_smpi_copy(objects);
    for (auto& a : objects)
      for (const auto& b : objects)
        if (&a != &b && a.name_hash == b.name_hash) a.ambiguous = true;
  }
  const code_object* object_holding(std::uintptr_t address) const {
    return transit::detail::object_holding(objects, address);
  }
  const code_object* object_named(std::uint32_t name_hash) const {
    for (const auto& o : objects)
      if (o.name_hash == name_hash && !o.ambiguous) return &o;
    return nullptr;
  }
  std::uint64_t reference(std::uintptr_t address) {
    const code_object* o = object_holding(address);
    if (o == nullptr) {
      read_objects();
      o = object_holding(address);
    }
    if (o == nullptr)
      throw std::invalid_argument(concat("active_messages: handler code at 0x", std::hex, address,
                                         " is in no loaded object: expected a function of the program or of a "
                                         "shared library"));
    if (o->ambiguous)
      throw std::invalid_argument(concat("active_messages: handler code in ", o->name,
                                         ", whose name's hash equals another loaded object's: rename one of them"));
    const std::uintptr_t offset = address - o->base;
    TRANSIT_ASSERT(offset <= UINT32_MAX, "a loaded object larger than 4 GiB");
    return std::uint64_t{o->name_hash} << 32 | offset;
  }
};

registry& the_registry() {
  static registry r;
  return r;
}

}  // namespace

bool register_handler(handler_entry& entry) noexcept {
  registry& r = the_registry();
  std::lock_guard guard(r.lock);
  std::uint32_t expected = no_handler_id;
  if (entry.id.compare_exchange_strong(expected, queued_handler_id)) r.queued.push_back(&entry);
  return true;
}

handler_table current_handlers() {
  registry& r = the_registry();
  std::lock_guard guard(r.lock);
  if (!r.queued.empty()) {
    // Entries queued together (all of the executable's before main) are ordered by where their
    // code is; a later batch (a library loaded since) follows the earlier ones.
    std::vector<std::pair<std::uint64_t, handler_entry*>> batch;
    for (handler_entry* e : r.queued) batch.emplace_back(r.reference(reinterpret_cast<std::uintptr_t>(e->invoke)), e);
    std::sort(batch.begin(), batch.end(), [](const auto& a, const auto& b) {
      return std::tie(a.first, a.second->name) < std::tie(b.first, b.second->name);
    });
    for (const auto& [reference, e] : batch) {
      e->id.store(static_cast<std::uint32_t>(r.by_id.size()), std::memory_order_relaxed);
      r.by_id.push_back(e);
      r.references.push_back(reference);
      r.signature = mix(r.signature, reference);
    }
    r.queued.clear();
  }
  handler_table table;
  table.signature = mix(r.signature, r.by_id.size());
  for (const handler_entry* e : r.by_id) {
    table.invoke.push_back(e->invoke);
    table.run.push_back(e->run);
    table.names.push_back(e->name);
  }
  return table;
}

std::uint64_t code_reference(std::uintptr_t address) {
  registry& r = the_registry();
  std::lock_guard guard(r.lock);
  return r.reference(address);
}

std::uintptr_t code_address(std::uint64_t reference) {
  registry& r = the_registry();
  std::lock_guard guard(r.lock);
  const auto name_hash = static_cast<std::uint32_t>(reference >> 32);
  const auto offset = static_cast<std::uintptr_t>(reference & UINT32_MAX);
  const code_object* o = r.object_named(name_hash);
  if (o == nullptr || r.object_holding(o->base + offset) != o) {
    r.read_objects();
    o = r.object_named(name_hash);
  }
  if (o == nullptr || r.object_holding(o->base + offset) != o)
    throw call_record_error(concat("handler code at offset 0x", std::hex, offset, " of an object (name hash 0x",
                                   name_hash, ") that holds no such code on this PE: every PE must run the same binary"));
  return o->base + offset;
}

void record_reader::truncated(std::size_t size, std::size_t at, std::uint64_t wanted) {
  throw call_record_error(concat("a record of ", size, " bytes ends before its arguments do (", wanted,
                                 " bytes wanted at byte ", at, ")"));
}

}  // namespace transit::detail
