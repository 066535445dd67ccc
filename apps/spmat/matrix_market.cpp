#include "spmat/matrix_market.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace transit::apps {

namespace {

/// What PE 0 tells every PE about the file: its shape, or the message of what was wrong.
struct file_header {
  std::int64_t numrows = 0;
  std::int64_t numcols = 0;
  int weighted = 0;
  int failed = 0;
  std::array<char, 480> message{};  // what() of the input_error every PE throws
};

struct file_closer {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using file_ptr = std::unique_ptr<std::FILE, file_closer>;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// The whitespace-separated words of a line.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

/// Reads lines with their numbers; false at the end of the file.
class line_reader {
 public:
  explicit line_reader(std::FILE* file) : file_(file) {}
  ~line_reader() { std::free(buffer_); }
  line_reader(const line_reader&) = delete;
  line_reader& operator=(const line_reader&) = delete;
  bool next() {
    const ssize_t got = getline(&buffer_, &capacity_, file_);
    if (got < 0) return false;
    ++number_;
    length_ = static_cast<std::size_t>(got);
    while (length_ > 0 && (buffer_[length_ - 1] == '\n' || buffer_[length_ - 1] == '\r')) --length_;
    buffer_[length_] = '\0';
    return true;
  }
  const char* text() const { return buffer_; }
  std::string str() const { return std::string(buffer_, length_); }
  std::int64_t number() const { return number_; }
  /// Blank lines and comments (%...) are skipped between the header and the entries.
  bool skippable() const {
    const char* p = buffer_;
    while (*p != '\0' && std::isspace(static_cast<unsigned char>(*p))) ++p;
    return *p == '\0' || *p == '%';
  }

 private:
  std::FILE* file_;
  char* buffer_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t length_ = 0;
  std::int64_t number_ = 0;
};

/// One integer of an entry line; false when there is none.
bool read_int(const char*& p, std::int64_t& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(p, &end, 10);
  if (end == p || errno != 0) return false;
  p = end;
  return true;
}

bool at_end(const char* p) {
  while (*p != '\0' && std::isspace(static_cast<unsigned char>(*p))) ++p;
  return *p == '\0';
}

/// PE 0: the whole file as entries sorted by (row, column), as bale sorts them before spreading
/// them. Throws input_error naming the file, the line and what was wrong.
std::vector<matrix_entry> read_entries(const std::string& path, file_header& header) {
  const std::string where = "matrix file '" + path + "'";
  file_ptr file(std::fopen(path.c_str(), "r"));
  if (!file) throw input_error(where + ": cannot open it (" + std::strerror(errno) + ")");
  line_reader line(file.get());
  const std::string banner_form = "'%%MatrixMarket matrix coordinate pattern|real|integer [general]'";
  if (!line.next()) throw input_error(where + ": is empty, expected a MatrixMarket header " + banner_form);
  const std::vector<std::string> banner = words(lower(line.str()));
  if (banner.size() < 4 || banner[0] != "%%matrixmarket" || banner[1] != "matrix" || banner[2] != "coordinate")
    throw input_error(where + ": is not a MatrixMarket coordinate matrix: line 1 is '" + line.str() +
                      "', expected " + banner_form);
  if (banner[3] != "pattern" && banner[3] != "real" && banner[3] != "integer")
    throw input_error(where + ": has the field '" + banner[3] + "', expected pattern, real or integer");
  if (banner.size() > 4 && banner[4] != "general")
    throw input_error(where + ": has the symmetry '" + banner[4] + "', expected general (bale stores every nonzero)");
  header.weighted = banner[3] != "pattern" ? 1 : 0;

  do {
    if (!line.next()) throw input_error(where + ": ends before its size line 'rows columns nonzeros'");
  } while (line.skippable());
  std::int64_t nnz = 0;
  {
    const char* p = line.text();
    if (!read_int(p, header.numrows) || !read_int(p, header.numcols) || !read_int(p, nnz) || !at_end(p) ||
        header.numrows < 1 || header.numcols < 1 || nnz < 0)
      throw input_error(where + ": line " + std::to_string(line.number()) + " is '" + line.str() +
                        "', expected 'rows columns nonzeros' (rows and columns at least 1)");
  }

  std::vector<matrix_entry> entries;
  entries.reserve(static_cast<std::size_t>(std::min<std::int64_t>(nnz, std::int64_t{1} << 24)));
  const bool weighted = header.weighted != 0;
  while (line.next()) {
    if (line.skippable()) continue;
    const char* p = line.text();
    matrix_entry e;
    bool ok = read_int(p, e.row) && read_int(p, e.col);
    if (ok && weighted) {
      char* end = nullptr;
      e.val = std::strtod(p, &end);
      ok = end != p;
      p = end;
    }
    if (!ok || !at_end(p))
      throw input_error(where + ": line " + std::to_string(line.number()) + " is '" + line.str() + "', expected '" +
                        (weighted ? "row column value'" : "row column'"));
    if (e.row < 1 || e.row > header.numrows || e.col < 1 || e.col > header.numcols)
      throw input_error(where + ": line " + std::to_string(line.number()) + ": entry (" + std::to_string(e.row) + ", " +
                        std::to_string(e.col) + ") is outside the " + std::to_string(header.numrows) + " x " +
                        std::to_string(header.numcols) + " matrix (indices from 1)");
    if (static_cast<std::int64_t>(entries.size()) == nnz)
      throw input_error(where + ": line " + std::to_string(line.number()) + ": more entries than the " +
                        std::to_string(nnz) + " its size line announces");
    --e.row;  // MatrixMarket counts from 1
    --e.col;
    entries.push_back(e);
  }
  if (static_cast<std::int64_t>(entries.size()) != nnz)
    throw input_error(where + ": is truncated: " + std::to_string(entries.size()) + " entries, its size line announces " +
                      std::to_string(nnz));
  std::stable_sort(entries.begin(), entries.end(), [](const matrix_entry& a, const matrix_entry& b) {
    return a.row != b.row ? a.row < b.row : a.col < b.col;
  });
  return entries;
}

}  // namespace

void write_matrix_mm(context& ctx, const sparse_matrix& mat, const std::string& path) {
  int failed = 0;
  if (ctx.rank() == 0) {
    file_ptr file(std::fopen(path.c_str(), "w"));
    if (!file) {
      failed = 1;
    } else {
      std::fprintf(file.get(), "%%%%MatrixMarket matrix coordinate %s\n", mat.weighted ? "real" : "pattern");
      std::fprintf(file.get(), "%" PRId64 " %" PRId64 " %" PRId64 "\n", mat.numrows, mat.numcols, mat.nnz);
    }
  }
  if (ctx.allreduce(failed, reduce_op::max) == 0) {
    // PE after PE, as bale writes: each appends its rows in its turn.
    for (int turn = 0; turn < ctx.size(); ++turn) {
      if (turn == ctx.rank()) {
        file_ptr file(std::fopen(path.c_str(), "a"));
        if (!file) {
          failed = 1;
        } else {
          for (std::int64_t i = 0; i < mat.lnumrows; ++i) {
            const std::int64_t row = mat.global_row(i) + 1;
            for (std::int64_t j = mat.offset[static_cast<std::size_t>(i)]; j < mat.offset[static_cast<std::size_t>(i) + 1]; ++j) {
              const std::int64_t col = mat.nonzero[static_cast<std::size_t>(j)] + 1;
              if (mat.weighted)
                std::fprintf(file.get(), "%" PRId64 " %" PRId64 " %lf\n", row, col, mat.value[static_cast<std::size_t>(j)]);
              else
                std::fprintf(file.get(), "%" PRId64 " %" PRId64 "\n", row, col);
            }
          }
          if (std::fflush(file.get()) != 0) failed = 1;
        }
      }
      ctx.barrier();
    }
  }
  if (ctx.allreduce(failed, reduce_op::max) != 0)
    throw input_error("--dump_files (-D): cannot write the matrix file '" + path + "'");
}

sparse_matrix read_matrix_mm_to_dist(context& ctx, const std::string& path) {
  const int pes = ctx.size();
  file_header header;
  std::vector<parcel<matrix_entry>> outgoing;
  if (ctx.rank() == 0) {
    try {
      std::vector<matrix_entry> entries = read_entries(path, header);
      outgoing.resize(static_cast<std::size_t>(pes));
      for (int pe = 0; pe < pes; ++pe) outgoing[static_cast<std::size_t>(pe)].peer = pe;
      for (const matrix_entry& e : entries) outgoing[static_cast<std::size_t>(e.row % pes)].items.push_back(e);
    } catch (const input_error& e) {
      header.failed = 1;
      std::snprintf(header.message.data(), header.message.size(), "%s", e.what());
    }
  }
  header = ctx.broadcast(header, 0);
  if (header.failed != 0) throw input_error(header.message.data());
  sparse_exchange<matrix_entry> exchange(ctx);
  std::vector<matrix_entry> mine;
  for (const auto& in : exchange.run(std::move(outgoing))) mine = in.items;  // one source: PE 0
  sparse_matrix mat =
      matrix_from_entries(header.numrows, header.numcols, ctx.rank(), pes, header.weighted != 0, mine);
  finish_matrix(ctx, mat);
  return mat;
}

}  // namespace transit::apps
