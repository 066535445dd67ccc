// bale's sparse matrices on transit (apps/spmat): the generators draw bale's graphs bit for bit,
// MatrixMarket files pass both ways between bale and transit, bad files are refused on every PE
// with a message naming the file, and the helpers (tril/triu, the triangular checks, transposes,
// compare_matrix, direct_undirected_graph, the Kronecker triangle count) do what bale's do.
//
// The reference checksums are bale's: `bench/bale/spmat_reference.sh /work/bale-install 1 2 3`
// runs `bale-oshrun -n P transpose_matrix ARGS -M 0 -D` (bale generates the graph with its graph
// options and dumps it as transpose_inmat) and sums the file with bench/bale/mm_checksum.py as
// matrix_checksum sums a matrix. data/bale_*_pes2.mtx are two such dumps at 2 PEs (-N 50 -z 4 and
// -N 30 -z 5 -l -w), kept whole.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include "spmat/generators.hpp"
#include "spmat/graph_input.hpp"
#include "spmat/matrix_market.hpp"
#include "spmat/spmat.hpp"
#include "test_support.hpp"

namespace {

using namespace transit;
using namespace transit::apps;
using transit::testing::run_spmd;

struct reference {
  std::uint64_t structure;
  std::int64_t nnz;
  double value_sum;  // from bale's "%lf" dump: 6 decimals per value
};

// spmat_reference.sh's lines "PES | ARGS | structure nnz value_sum".
const std::map<std::pair<int, std::string>, reference> bale_checksums = {
    {{1, "-N 50 -z 4"}, {0x2f1ea294d7c92a45, 170, 0}},
    {{1, "-N 40 -z 3 -d"}, {0x7e45c36ef630fce3, 107, 0}},
    {{1, "-N 40 -e 0.1 -d -l -w"}, {0x4e5a6b571553a0f2, 169, 86.160478}},
    {{1, "-N 30 -z 5 -l -w"}, {0xa9561bf885ea8b6d, 136, 69.185847}},
    {{1, "-N 64 -z 6 -w -s 7"}, {0xa3e17a74696a08ad, 388, 184.193554}},
    {{1, "-n 20 -z 4 -d -l"}, {0xd6ecb06332e1429d, 77, 0}},
    {{2, "-N 50 -z 4"}, {0x1949c511d83c42c7, 171, 0}},
    {{2, "-N 40 -z 3 -d"}, {0xb54ac9b26aa1c6b2, 111, 0}},
    {{2, "-N 40 -e 0.1 -d -l -w"}, {0x369eafae0c1724fa, 176, 95.775825}},
    {{2, "-N 30 -z 5 -l -w"}, {0xbf485258828b15c5, 142, 79.242939}},
    {{2, "-N 64 -z 6 -w -s 7"}, {0x1d7fcbf9916d776a, 380, 187.035641}},
    {{2, "-n 20 -z 4 -d -l"}, {0x3baee52d7096c489, 147, 0}},
    {{3, "-N 50 -z 4"}, {0xe22986f8b0c32dcd, 179, 0}},
    {{3, "-N 40 -z 3 -d"}, {0x864523e2b069cd33, 112, 0}},
    {{3, "-N 40 -e 0.1 -d -l -w"}, {0x678fc9263920c4bb, 180, 97.651611}},
    {{3, "-N 30 -z 5 -l -w"}, {0xcec1f0dfc2cc19b3, 140, 76.833021}},
    {{3, "-N 64 -z 6 -w -s 7"}, {0x262877e2a8dc55eb, 383, 188.276776}},
    {{3, "-n 20 -z 4 -d -l"}, {0x19eba90b17d46ec3, 221, 0}},
};

// The Kronecker graphs do not depend on the PE count (same at 1, 2 and 3 PEs in bale).
const std::map<std::string, reference> bale_kronecker = {
    {"0:2x3x4", {0xc914fdce9ff9a74d, 96, 0}},
    {"1:2x3x4", {0x85dfa0219c2816c4, 157, 0}},
    {"2:3x3x2x2", {0x60246d10078211e0, 612, 0}},
};

/// The graph options of one case, parsed the way the command line gives them.
std::pair<bale_std_options, bale_graph_options> options_of(const std::string& args, int pes) {
  bale_std_options s;
  bale_graph_options g;
  std::istringstream in(args);
  std::string flag;
  while (in >> flag) {
    if (flag == "-N") in >> g.numrows;
    else if (flag == "-n") in >> g.l_numrows;
    else if (flag == "-z") in >> g.nz_per_row;
    else if (flag == "-e") in >> g.edge_prob;
    else if (flag == "-s") in >> s.seed;
    else if (flag == "-d") g.directed = true;
    else if (flag == "-l") g.loops = true;
    else if (flag == "-w") g.weighted = true;
    else ADD_FAILURE() << "unknown flag " << flag;
  }
  return {s, resolve_graph_options(g, pes)};
}

void expect_checksum(context& ctx, const sparse_matrix& m, const reference& ref, const std::string& what) {
  const matrix_checksum_t sum = matrix_checksum(ctx, m);
  EXPECT_EQ(sum.structure, ref.structure) << what;
  EXPECT_EQ(sum.nnz, ref.nnz) << what;
  EXPECT_EQ(m.nnz, ref.nnz) << what;
  // Each of bale's values is printed rounded to 6 decimals.
  EXPECT_NEAR(sum.value_sum, ref.value_sum, 5e-7 * static_cast<double>(ref.nnz) + 1e-9) << what;
}

/// Collective: a file name every PE agrees on (PE 0's pid), unique among concurrent runs.
std::string shared_temp(context& ctx, const std::string& stem) {
  const int pid = ctx.broadcast(static_cast<int>(getpid()), 0);
  return ::testing::TempDir() + "transit_spmat_" + stem + "_" + std::to_string(pid) + ".mtx";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Collective: the triangles of an undirected graph held strictly lower triangular, counted
/// the plain way on a gathered copy (for the closed form's check).
std::int64_t count_triangles(context& ctx, const sparse_matrix& lower) {
  const sparse_matrix l = gather_matrix(ctx, lower);
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < l.lnumrows; ++i)
    for (const std::int64_t j : l.row(i))
      for (const std::int64_t k : l.row(j))  // k < j < i; is k a neighbour of i?
        for (const std::int64_t c : l.row(i)) count += c == k ? 1 : 0;
  return count;
}

TEST(Spmat, FlatGraphsAreBales) {
  run_spmd([](context& ctx) {
    int checked = 0;
    for (const auto& [key, ref] : bale_checksums) {
      if (key.first != ctx.size()) continue;
      const auto [s, g] = options_of(key.second, ctx.size());
      const sparse_matrix m = make_input_graph(ctx, s, g);
      expect_checksum(ctx, m, ref, key.second);
      EXPECT_EQ(m.lnumrows, cyclic_local_count(m.numrows, ctx.rank(), ctx.size()));
      // Rows tidy, as bale's generator leaves them; undirected graphs lower triangular.
      sparse_matrix sorted = m;
      sort_nonzeros(sorted);
      EXPECT_TRUE(compare_matrix(ctx, sorted, m)) << key.second;
      if (!g.directed) {
        EXPECT_TRUE(is_lower_triangular(ctx, m, g.loops)) << key.second;
      }
      ++checked;
    }
    if (ctx.size() <= 3) {
      EXPECT_EQ(checked, 6);
    }
  });
}

TEST(Spmat, KroneckerGraphsAreBalesWithTheirTriangles) {
  run_spmd([](context& ctx) {
    for (const auto& [text, ref] : bale_kronecker) {
      const kronecker_spec spec = parse_kronecker_spec(text);
      const sparse_matrix m = generate_kronecker_graph_from_spec(ctx, spec);
      expect_checksum(ctx, m, ref, text);
      EXPECT_TRUE(is_lower_triangular(ctx, m, false)) << text;
      EXPECT_EQ(count_triangles(ctx, m), calc_num_tri_kron_graph(spec)) << text;
    }
    // bale's triangles app prints these (bale-oshrun -n 2 triangles -K SPEC -M 8).
    EXPECT_EQ(calc_num_tri_kron_graph(parse_kronecker_spec("1:2x3x4")), 122);
    EXPECT_EQ(calc_num_tri_kron_graph(parse_kronecker_spec("2:3x3x2x2")), 35);
    EXPECT_EQ(calc_num_tri_kron_graph(parse_kronecker_spec("0:2x3x4")), 0);
  });
}

TEST(Spmat, KroneckerSpecErrorsNameTheSpec) {
  std::string too_many = "0:1";
  for (int i = 0; i < 64; ++i) too_many += "x1";  // 65 stars, bale takes 64
  for (const std::string& bad : {std::string(), std::string("3:2x3x4"), std::string("1:2x3"), std::string("1-2x3x4"),
                                std::string("1:2x3x"), std::string("1:2xx3x4"), std::string("1:2x0x4"),
                                std::string("1:2x3x4y"), std::string("1:2x3x9999999"), too_many}) {
    try {
      parse_kronecker_spec(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const input_error& e) {
      EXPECT_NE(std::string(e.what()).find("--kronecker (-K): got '" + bad + "', expected"), std::string::npos) << e.what();
    }
  }
  const kronecker_spec spec = parse_kronecker_spec("2:3x10x2x2");
  EXPECT_EQ(spec.mode, 2);
  EXPECT_EQ(spec.stars, (std::vector<std::int64_t>{3, 10, 2, 2}));
}

TEST(Spmat, BalesFilesReadAsBalesGraphs) {
  run_spmd([](context& ctx) {
    const std::string dir = TRANSIT_SPMAT_TEST_DATA;
    const sparse_matrix pattern = read_matrix_mm_to_dist(ctx, dir + "/bale_flat_N50_z4_pes2.mtx");
    expect_checksum(ctx, pattern, bale_checksums.at({2, "-N 50 -z 4"}), "bale's pattern file");
    const sparse_matrix real = read_matrix_mm_to_dist(ctx, dir + "/bale_flat_N30_z5_l_w_pes2.mtx");
    expect_checksum(ctx, real, bale_checksums.at({2, "-N 30 -z 5 -l -w"}), "bale's real file");
    EXPECT_TRUE(real.weighted);
    if (ctx.size() != 2) return;
    // At bale's PE count the file is the very matrix transit generates, and transit writes it
    // byte for byte as bale wrote it.
    const auto [s, g] = options_of("-N 50 -z 4", 2);
    const sparse_matrix generated = make_input_graph(ctx, s, g);
    EXPECT_TRUE(compare_matrix(ctx, pattern, generated));
    const std::string path = shared_temp(ctx, "pattern");
    write_matrix_mm(ctx, generated, path);
    if (ctx.rank() == 0) {
      EXPECT_EQ(slurp(path), slurp(dir + "/bale_flat_N50_z4_pes2.mtx"));
    }
    const auto [sw, gw] = options_of("-N 30 -z 5 -l -w", 2);
    const std::string wpath = shared_temp(ctx, "real");
    write_matrix_mm(ctx, make_input_graph(ctx, sw, gw), wpath);
    if (ctx.rank() == 0) {
      EXPECT_EQ(slurp(wpath), slurp(dir + "/bale_flat_N30_z5_l_w_pes2.mtx"));
    }
    ctx.barrier();
    if (ctx.rank() == 0) {
      std::remove(path.c_str());
      std::remove(wpath.c_str());
    }
  });
}

TEST(Spmat, WrittenFilesReadBack) {
  run_spmd([](context& ctx) {
    for (const char* args : {"-N 40 -e 0.1 -d -l -w", "-N 50 -z 4"}) {
      const auto [s, g] = options_of(args, ctx.size());
      const sparse_matrix m = make_input_graph(ctx, s, g);
      const std::string path = shared_temp(ctx, "roundtrip");
      write_matrix_mm(ctx, m, path);
      const sparse_matrix back = read_matrix_mm_to_dist(ctx, path);
      ctx.barrier();
      if (ctx.rank() == 0) std::remove(path.c_str());
      EXPECT_EQ(back.nonzero, m.nonzero) << args;
      EXPECT_EQ(back.offset, m.offset) << args;
      ASSERT_EQ(back.value.size(), m.value.size()) << args;
      for (std::size_t j = 0; j < m.value.size(); ++j) EXPECT_NEAR(back.value[j], m.value[j], 5e-7) << args;
    }
  });
}

TEST(Spmat, BadFilesAreRefusedOnEveryPe) {
  run_spmd([](context& ctx) {
    const std::string path = shared_temp(ctx, "bad");
    const std::pair<std::string, std::string> cases[] = {
        {"hello\n", "is not a MatrixMarket coordinate matrix: line 1 is 'hello'"},
        {"", "is empty, expected a MatrixMarket header"},
        {"%%MatrixMarket matrix array real\n2 2\n", "is not a MatrixMarket coordinate matrix"},
        {"%%MatrixMarket matrix coordinate complex\n", "has the field 'complex', expected pattern, real or integer"},
        {"%%MatrixMarket matrix coordinate pattern symmetric\n", "has the symmetry 'symmetric', expected general"},
        {"%%MatrixMarket matrix coordinate pattern\n", "ends before its size line"},
        {"%%MatrixMarket matrix coordinate pattern\n3 x 2\n", "line 2 is '3 x 2', expected 'rows columns nonzeros'"},
        {"%%MatrixMarket matrix coordinate pattern\n% a comment\n3 3 2\n1 2\n", "is truncated: 1 entries, its size line announces 2"},
        {"%%MatrixMarket matrix coordinate pattern\n3 3 2\n1 2\n4 1\n", "line 4: entry (4, 1) is outside the 3 x 3 matrix"},
        {"%%MatrixMarket matrix coordinate pattern\n3 3 1\n1 0\n", "line 3: entry (1, 0) is outside the 3 x 3 matrix"},
        {"%%MatrixMarket matrix coordinate real\n3 3 1\n1 2\n", "line 3 is '1 2', expected 'row column value'"},
        {"%%MatrixMarket matrix coordinate pattern\n3 3 1\n1 2\n2 3\n", "line 4: more entries than the 1 its size line announces"},
    };
    for (const auto& [text, message] : cases) {
      if (ctx.rank() == 0) std::ofstream(path) << text;
      ctx.barrier();
      try {
        read_matrix_mm_to_dist(ctx, path);
        ADD_FAILURE() << "read '" << text << "'";
      } catch (const input_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("matrix file '" + path + "': " + message), std::string::npos) << what;
      }
    }
    ctx.barrier();
    if (ctx.rank() == 0) std::remove(path.c_str());
    EXPECT_THROW(read_matrix_mm_to_dist(ctx, path), input_error);  // gone: cannot open it
    EXPECT_THROW(write_matrix_mm(ctx, read_matrix_mm_to_dist(ctx, std::string(TRANSIT_SPMAT_TEST_DATA) +
                                                                 "/bale_flat_N50_z4_pes2.mtx"),
                                 "/nonexistent/dir/x.mtx"),
                 input_error);
  });
}

TEST(Spmat, TransposesAgreeWithTheLocalReference) {
  run_spmd([](context& ctx) {
    const auto [s, g] = options_of("-N 40 -e 0.1 -d -l -w", ctx.size());
    const sparse_matrix m = make_input_graph(ctx, s, g);
    const sparse_matrix whole = gather_matrix(ctx, m);
    EXPECT_EQ(whole.nnz, m.nnz);
    EXPECT_TRUE(compare_matrix(ctx, distribute_local(whole, ctx.rank(), ctx.size()), m));
    const sparse_matrix t = transpose_local(whole);
    const sparse_matrix tt = transpose_local(t);
    EXPECT_EQ(tt.nonzero, whole.nonzero);
    EXPECT_EQ(tt.value, whole.value);
    // Every (row, col, value) of A is (col, row, value) of A^T.
    for (std::int64_t r = 0; r < t.numrows; ++r)
      for (std::int64_t j = t.offset[static_cast<std::size_t>(r)]; j < t.offset[static_cast<std::size_t>(r) + 1]; ++j) {
        const std::int64_t c = t.nonzero[static_cast<std::size_t>(j)];
        bool found = false;
        for (std::int64_t k = whole.offset[static_cast<std::size_t>(c)]; k < whole.offset[static_cast<std::size_t>(c) + 1]; ++k)
          found = found || (whole.nonzero[static_cast<std::size_t>(k)] == r &&
                            whole.value[static_cast<std::size_t>(k)] == t.value[static_cast<std::size_t>(j)]);
        EXPECT_TRUE(found) << r << " " << c;
      }
    sparse_matrix spread;
    spread.pes = 2;
    EXPECT_THROW(transpose_local(spread), std::invalid_argument);
  });
}

TEST(Spmat, TrilTriuAndTheTriangularChecks) {
  run_spmd([](context& ctx) {
    const auto [s, g] = options_of("-N 40 -z 6 -d -l", ctx.size());
    const sparse_matrix m = make_input_graph(ctx, s, g);
    EXPECT_FALSE(is_lower_triangular(ctx, m, false));
    EXPECT_FALSE(is_upper_triangular(ctx, m, false));
    sparse_matrix lower = m, upper = m, strict = m;
    const std::int64_t above = tril(ctx, lower, 0);
    const std::int64_t below = triu(ctx, upper, 0);
    const std::int64_t off = triu(ctx, strict, 1);
    EXPECT_TRUE(is_lower_triangular(ctx, lower, true));
    EXPECT_TRUE(is_upper_triangular(ctx, upper, true));
    EXPECT_TRUE(is_upper_triangular(ctx, strict, false));
    EXPECT_FALSE(is_upper_triangular(ctx, strict, true));  // the diagonal is gone
    // Every nonzero is below, on (one per row: loops) or above the diagonal.
    EXPECT_EQ(above + below + m.numrows, m.nnz);
    EXPECT_EQ(off, below + m.numrows);
    EXPECT_EQ(lower.nnz + upper.nnz - m.numrows, m.nnz);
    EXPECT_FALSE(compare_matrix(ctx, lower, m));
    EXPECT_TRUE(compare_matrix(ctx, m, m));
  });
}

TEST(Spmat, DirectingAnUndirectedGraphOrientsEachEdgeOnce) {
  run_spmd([](context& ctx) {
    for (const char* args : {"-N 300 -z 8 -w", "-N 60 -z 4"}) {
      const auto [s, g] = options_of(args, ctx.size());
      const sparse_matrix lower = make_input_graph(ctx, s, g);
      knuth_ranf rng = knuth_ranf::for_pe(99, ctx.rank());
      const sparse_matrix d = direct_undirected_graph(ctx, lower, rng);
      EXPECT_EQ(d.nnz, lower.nnz);
      // Folding each edge back below the diagonal gives the undirected graph again.
      const sparse_matrix whole = gather_matrix(ctx, d);
      std::vector<matrix_entry> folded;
      for (std::int64_t r = 0; r < whole.numrows; ++r)
        for (std::int64_t j = whole.offset[static_cast<std::size_t>(r)]; j < whole.offset[static_cast<std::size_t>(r) + 1]; ++j) {
          const std::int64_t c = whole.nonzero[static_cast<std::size_t>(j)];
          folded.push_back({std::max(r, c), std::min(r, c), whole.weighted ? whole.value[static_cast<std::size_t>(j)] : 0});
        }
      sparse_matrix back = matrix_from_entries(whole.numrows, whole.numcols, 0, 1, whole.weighted, folded);
      sort_nonzeros(back);
      const sparse_matrix lower_whole = gather_matrix(ctx, lower);
      EXPECT_EQ(back.nonzero, lower_whole.nonzero) << args;
      EXPECT_EQ(back.value, lower_whole.value) << args;
      // Both orientations occur (a fair coin over hundreds of edges).
      sparse_matrix below = d;
      EXPECT_GT(tril(ctx, below, -1), 0) << args;
      EXPECT_GT(below.nnz, 0) << args;
    }
  });
}

TEST(Spmat, GraphOptionsResolveAsBales) {
  bale_graph_options g;
  g.l_numrows = 100;
  auto r = resolve_graph_options(g, 4);
  EXPECT_EQ(r.numrows, 400);
  EXPECT_DOUBLE_EQ(r.edge_prob, 10.0 / 399 * 2);  // undirected: twice z / (n - 1)
  g.directed = g.loops = true;
  g.numrows = 51;
  r = resolve_graph_options(g, 4);
  EXPECT_EQ(r.numrows, 51);
  EXPECT_DOUBLE_EQ(r.edge_prob, 9.0 / 50);
  g.edge_prob = 0.3;
  r = resolve_graph_options(g, 4);
  EXPECT_DOUBLE_EQ(r.nz_per_row, 0.3 * 25);  // bale's e * (n - 1) / 2, directed or not
  g.edge_prob = 0;
  g.nz_per_row = 500;
  EXPECT_DOUBLE_EQ(resolve_graph_options(g, 4).edge_prob, 1.0);
}

}  // namespace
