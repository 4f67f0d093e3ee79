// Sparse matrices on the host (xgpu/sparse.hpp) and their trip to the device and back: CSR
// validation, COO with duplicates, row statistics, transpose and diagonal against plain host
// references; Matrix Market files (tests/data/sparse, and the SuiteSparse matrices in
// tests/data/matrices) read against an independent triplet parser and written back bit
// for bit; every malformed case refused with a message naming the file and the line; Csr round
// trips on every backend on fresh random matrices; Csr's one pass (checks, row statistics,
// diagonal) over many blocks of rows against serial references, errors planted in several blocks
// reported as the serial checks report the first.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <unistd.h>

#include <xgpu/sparse.hpp>

#include "support.hpp"

using namespace xgpu;
using namespace xgpu::sparse;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const fs::path data_dir = XGPU_SPARSE_DATA_DIR;

template <class T, class I> struct Combo {
    using value = T;
    using index = I;
};

template <class T> T random_value() {
    std::uniform_real_distribution<double> d(-10, 10);
    if constexpr (std::is_floating_point_v<T>)
        return T(d(test::rng()));
    else
        return T(typename T::value_type(d(test::rng())), typename T::value_type(d(test::rng())));
}

// A random canonical matrix, built row by row (not through from_coo): empty rows, at times the
// first and last ones, and rows of very different lengths.
template <class T, class I> HostCsr<T, I> random_csr(std::int64_t rows, std::int64_t cols) {
    HostCsr<T, I> a;
    a.rows = rows;
    a.cols = cols;
    std::uniform_real_distribution<double> u(0, 1);
    for (std::int64_t r = 0; r < rows; ++r) {
        const double density = u(test::rng()) < 0.2 ? 0.0 : u(test::rng()) < 0.1 ? 0.9 : 0.1;
        for (std::int64_t c = 0; c < cols; ++c)
            if (u(test::rng()) < density) {
                a.col_idx.push_back(I(c));
                a.values.push_back(random_value<T>());
            }
        a.row_ptr.push_back(I(a.col_idx.size()));
    }
    return a;
}

template <class T, class I> std::map<std::pair<std::int64_t, std::int64_t>, T> entries(const HostCsr<T, I>& a) {
    std::map<std::pair<std::int64_t, std::int64_t>, T> m;
    for (std::int64_t r = 0; r < a.rows; ++r)
        for (auto k = a.row_ptr[std::size_t(r)]; k < a.row_ptr[std::size_t(r) + 1]; ++k)
            m[{r, a.col_idx[std::size_t(k)]}] += a.values[std::size_t(k)];
    return m;
}

template <class T, class I> HostCsr<T, I> round_trip(const HostCsr<T, I>& a, const WriteOptions& w = {}) {
    std::stringstream s;
    write_matrix_market(s, a, w);
    return read_matrix_market<T, I>(s, "round trip");
}

WriteOptions stored(MmSymmetry s) {
    WriteOptions w;
    w.symmetry = s;
    return w;
}

// The message a refused file gives, with the file name and line checked.
template <class T = double, class I = std::int32_t>
std::string refusal(const std::string& name, std::size_t line, const ReadOptions& opt = {}) {
    const std::string path = (data_dir / "malformed" / name).string();
    try {
        read_matrix_market<T, I>(path, opt);
    } catch (const ParseError& e) {
        CHECK(e.file() == path);
        CHECK(e.line() == line);
        CHECK_THAT(e.what(), Contains(path + ":" + std::to_string(line) + ": "));
        return e.what();
    }
    FAIL(name << " was not refused");
    return {};
}

} // namespace

TEST_CASE("validate names what is wrong with CSR arrays", "[sparse]") {
    HostCsr<double, std::int32_t> a;
    a.rows = 3;
    a.cols = 4;
    a.row_ptr = {0, 1, 1, 3};
    a.col_idx = {2, 0, 3};
    a.values = {1, 2, 3};
    REQUIRE_NOTHROW(a.validate());
    CHECK(a.is_canonical());

    auto bad = a;
    bad.row_ptr = {1, 1, 1, 3};
    CHECK_THROWS_WITH(bad.validate(), Contains("row_ptr[0] is 1") && Contains("start at 0"));
    bad = a;
    bad.row_ptr = {0, 2, 1, 3};
    CHECK_THROWS_WITH(bad.validate(), Contains("must not fall") && Contains("row_ptr[1] = 2"));
    bad = a;
    bad.row_ptr = {0, 1, 1, 2};
    CHECK_THROWS_WITH(bad.validate(), Contains("ends at 2 but there are 3 entries"));
    bad = a;
    bad.col_idx = {2, 0, 4};
    CHECK_THROWS_WITH(bad.validate(), Contains("col_idx[2] = 4 (row 2) is out of range for 4 columns"));
    bad.col_idx = {2, -1, 3};
    CHECK_THROWS_AS(bad.validate(), InvalidArgument);
    bad = a;
    bad.row_ptr = {0, 1, 3};
    CHECK_THROWS_WITH(bad.validate(), Contains("row_ptr has 3 entries; a matrix of 3 rows needs 4"));
    bad = a;
    bad.values.pop_back();
    CHECK_THROWS_WITH(bad.validate(), Contains("col_idx has 3 entries and values 2"));
    bad = a;
    bad.rows = -1;
    CHECK_THROWS_WITH(bad.validate(), Contains("negative shape"));

    // Unsorted columns are valid CSR, but not canonical.
    auto unsorted = a;
    unsorted.col_idx = {2, 3, 0};
    unsorted.values = {1, 3, 2};
    CHECK_NOTHROW(unsorted.validate());
    CHECK_FALSE(unsorted.is_canonical());
}

TEST_CASE("int32 indices refuse a shape or nnz that does not fit, before allocating", "[sparse]") {
    // A fake huge dimension: only the row pointers of an empty matrix would be needed, and are not built.
    HostCsr<float, std::int32_t> a;
    a.rows = 3'000'000'000;
    a.cols = 10;
    CHECK_THROWS_WITH(a.validate(), Contains("3000000000 does not fit int32 indices: use int64"));
    a.rows = 10;
    a.cols = std::int64_t(1) << 31;
    CHECK_THROWS_WITH(a.validate(), Contains("2147483648 does not fit int32") && Contains("int64"));
    const std::vector<std::int32_t> none;
    const std::vector<float> nov;
    CHECK_THROWS_WITH((from_coo<float, std::int32_t>(std::int64_t(1) << 40, 1, none, none, nov)),
                      Contains("use int64"));
    CHECK_THROWS_WITH(check_index_width<std::int32_t>(5, 5, std::uint64_t(1) << 31), Contains("(nnz) of 2147483648"));
    CHECK_NOTHROW(check_index_width<std::int32_t>(std::numeric_limits<std::int32_t>::max(), 1, 0));
    CHECK_NOTHROW(check_index_width<std::int64_t>(3'000'000'000, 3'000'000'000, std::uint64_t(1) << 40));

    const auto path = (data_dir / "malformed" / "huge_dimension.mtx").string();
    CHECK_THROWS_WITH((read_matrix_market<double, std::int32_t>(path)),
                      Contains(path + ":2: ") && Contains("does not fit int32 indices: use int64"));
    const auto h = read_matrix_market_header(path);
    CHECK(h.rows == 3'000'000'000);
    CHECK(h.entries == 0);
}

TEST_CASE("from_coo sorts and sums duplicates as scipy does", "[sparse]") {
    // Rows 0, 2 and 5 empty (start, middle, end).
    const std::vector<std::int64_t> r{4, 1, 3, 1, 4, 1, 3, 4};
    const std::vector<std::int64_t> c{2, 6, 0, 0, 2, 6, 5, 0};
    const std::vector<double> v{1.0, 2.0, 3.0, 4.0, 0.5, -2.0, 6.0, 7.0};
    const auto a = from_coo<double, std::int64_t>(6, 7, r, c, v);
    REQUIRE_NOTHROW(a.validate());
    CHECK(a.is_canonical());
    CHECK(a.row_ptr == std::vector<std::int64_t>{0, 0, 2, 2, 4, 6, 6});
    CHECK(a.col_idx == std::vector<std::int64_t>{0, 6, 0, 5, 0, 2});
    CHECK(a.values == std::vector<double>{4.0, 0.0, 3.0, 6.0, 7.0, 1.5}); // 2 - 2 stays an explicit zero

    CHECK_THROWS_WITH((from_coo<double, std::int64_t>(6, 7, r, c, std::vector<double>(3))),
                      Contains("8 row indices, 8 column indices and 3 values"));
    auto rr = r;
    rr[2] = 6;
    CHECK_THROWS_WITH((from_coo<double, std::int64_t>(6, 7, rr, c, v)), Contains("row[2] = 6 is out of range"));
    auto cc = c;
    cc[1] = -1;
    CHECK_THROWS_WITH((from_coo<double, std::int64_t>(6, 7, r, cc, v)), Contains("col[1] = -1 is out of range"));

    // 0x0, 1x1, and random triplets against a map.
    const std::vector<std::int32_t> e32;
    const auto z = from_coo<float, std::int32_t>(0, 0, e32, e32, std::vector<float>{});
    CHECK(z.row_ptr == std::vector<std::int32_t>{0});
    CHECK(z.nnz() == 0);
    const auto one = from_coo<std::complex<float>, std::int32_t>(1, 1, std::vector<std::int32_t>{0, 0},
                                                                 std::vector<std::int32_t>{0, 0},
                                                                 std::vector<std::complex<float>>{{1, 2}, {3, -1}});
    CHECK(one.values == std::vector<std::complex<float>>{{4, 1}});

    const std::int64_t rows = 57, cols = 31;
    const auto ri = test::random_vector<std::int32_t>(2000, 0, rows - 1);
    const auto ci = test::random_vector<std::int32_t>(2000, 0, cols - 1);
    const auto vi = test::random_vector<double>(2000, -1, 1);
    const auto b = from_coo<double, std::int32_t>(rows, cols, ri, ci, vi);
    CHECK(b.is_canonical());
    std::map<std::pair<std::int64_t, std::int64_t>, double> want;
    for (std::size_t k = 0; k < ri.size(); ++k)
        want[{ri[k], ci[k]}] += vi[k]; // the same input order, so the same sums to the bit
    CHECK(entries(b) == want);
    CHECK(b.nnz() == want.size());
}

TEST_CASE("row statistics, transpose and diagonal", "[sparse]") {
    for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {1, 1}, {40, 40}, {90, 13}, {7, 120}}) {
        const auto a = random_csr<std::complex<double>, std::int32_t>(rows, cols);
        REQUIRE_NOTHROW(a.validate());
        const auto s = row_stats(a);
        std::vector<double> len;
        for (std::int64_t r = 0; r < rows; ++r)
            len.push_back(double(a.row_ptr[std::size_t(r) + 1] - a.row_ptr[std::size_t(r)]));
        if (rows > 0) {
            double mean = 0, var = 0;
            for (double l : len)
                mean += l / double(rows);
            for (double l : len)
                var += (l - mean) * (l - mean) / double(rows);
            CHECK(s.min == std::int64_t(*std::min_element(len.begin(), len.end())));
            CHECK(s.max == std::int64_t(*std::max_element(len.begin(), len.end())));
            CHECK(s.mean == Approx(mean));
            CHECK(s.stddev == Approx(std::sqrt(var)).margin(1e-12));
        } else {
            CHECK((s.min == 0 && s.max == 0 && s.mean == 0 && s.stddev == 0));
        }

        const auto t = transpose(a);
        REQUIRE_NOTHROW(t.validate());
        CHECK(t.is_canonical());
        CHECK((t.rows == cols && t.cols == rows));
        std::map<std::pair<std::int64_t, std::int64_t>, std::complex<double>> want;
        for (const auto& [rc, v] : entries(a))
            want[{rc.second, rc.first}] = v;
        CHECK(entries(t) == want);
        CHECK(transpose(t).identical(a));

        const auto d = diagonal(a);
        REQUIRE(d.size() == std::size_t(std::min(rows, cols)));
        const auto m = entries(a);
        for (std::size_t i = 0; i < d.size(); ++i) {
            const auto it = m.find({std::int64_t(i), std::int64_t(i)});
            CHECK(d[i] == (it == m.end() ? std::complex<double>(0) : it->second));
        }
    }
}

TEST_CASE("Matrix Market: the formats, fields and symmetries", "[sparse]") {
    const auto g = read_matrix_market<double>((data_dir / "general.mtx").string());
    CHECK((g.rows == 4 && g.cols == 5));
    CHECK(g.row_ptr == std::vector<std::int32_t>{0, 0, 2, 5, 5});
    CHECK(g.col_idx == std::vector<std::int32_t>{0, 3, 0, 1, 4});
    CHECK(g.values == std::vector<double>{7, 1e-3, 1.25e300, 1.5, -2.5});
    // 1.25e300 does not fit a float.
    const auto gpath = (data_dir / "general.mtx").string();
    CHECK_THROWS_WITH((read_matrix_market<float, std::int64_t>(gpath)),
                      Contains(gpath + ":10: '1.25e+300' is out of the range of float"));
    const auto gf = read_matrix_market<float>((data_dir / "pattern.mtx").string());
    CHECK(gf.values == std::vector<float>(3, 1.0f));
    const auto gc = read_matrix_market<std::complex<double>, std::int64_t>(gpath);
    CHECK(gc.values[1] == std::complex<double>(1e-3));

    using C = std::complex<double>;
    const auto h = read_matrix_market<C>((data_dir / "hermitian.mtx").string());
    CHECK(entries(h) == std::map<std::pair<std::int64_t, std::int64_t>, C>{{{0, 0}, {2, 0}},
                                                                           {{1, 0}, {1.5, -0.25}},
                                                                           {{0, 1}, {1.5, 0.25}},
                                                                           {{2, 1}, {0, 1}},
                                                                           {{1, 2}, {0, -1}},
                                                                           {{2, 2}, {-1, 0}}});
    const auto sk = read_matrix_market<float>((data_dir / "skew.mtx").string());
    CHECK(entries(sk) == std::map<std::pair<std::int64_t, std::int64_t>, float>{
                             {{1, 0}, 4}, {{0, 1}, -4}, {{2, 0}, -0.5f}, {{0, 2}, 0.5f}});
    const auto p =
        read_matrix_market<std::complex<float>>((data_dir / "pattern.mtx").string()); // pattern as complex: 1s
    CHECK(p.col_idx == std::vector<std::int32_t>{0, 2, 1});
    CHECK(p.values == std::vector<std::complex<float>>(3, {1, 0}));
    const auto in = read_matrix_market<double, std::int64_t>((data_dir / "integer_symmetric.mtx").string());
    CHECK(entries(in) == std::map<std::pair<std::int64_t, std::int64_t>, double>{
                             {{0, 0}, 5}, {{1, 0}, -3}, {{0, 1}, -3}, {{2, 2}, 17}, {{2, 1}, 2}, {{1, 2}, 2}});

    const auto ar = read_matrix_market<double>((data_dir / "array.mtx").string());
    CHECK(entries(ar) == std::map<std::pair<std::int64_t, std::int64_t>, double>{
                             {{0, 0}, 1}, {{2, 0}, -2}, {{0, 1}, 0.5}, {{1, 1}, 3}});
    const auto as = read_matrix_market<double>((data_dir / "array_symmetric.mtx").string());
    CHECK(entries(as) ==
          std::map<std::pair<std::int64_t, std::int64_t>, double>{
              {{0, 0}, 1}, {{1, 0}, 2}, {{0, 1}, 2}, {{2, 0}, 3}, {{0, 2}, 3}, {{1, 1}, 4}, {{2, 2}, 6}});
    const auto ac = read_matrix_market<C>((data_dir / "array_complex.mtx").string());
    CHECK(entries(ac) == std::map<std::pair<std::int64_t, std::int64_t>, C>{{{0, 0}, {1, -1}}, {{0, 1}, {0, 2.5}}});
    const auto e = read_matrix_market<double>((data_dir / "empty_0x0.mtx").string());
    CHECK((e.rows == 0 && e.cols == 0 && e.row_ptr == std::vector<std::int32_t>{0}));

    // Each one written and read back: the same bits; in symmetric storage where it has the symmetry.
    CHECK(round_trip(g).identical(g));
    CHECK(round_trip(gf).identical(gf));
    CHECK(round_trip(gc).identical(gc));
    CHECK(round_trip(h).identical(h));
    CHECK(round_trip(h, stored(MmSymmetry::hermitian)).identical(h));
    CHECK(round_trip(sk).identical(sk));
    CHECK(round_trip(sk, stored(MmSymmetry::skew_symmetric)).identical(sk));
    CHECK(round_trip(in, {.symmetry = MmSymmetry::symmetric, .comment = "two\nlines"}).identical(in));
    CHECK(round_trip(ar).identical(ar));
    CHECK(round_trip(e).identical(e));
    CHECK_THROWS_WITH(round_trip(g, stored(MmSymmetry::symmetric)), Contains("cannot be symmetric"));
    CHECK_THROWS_WITH(round_trip(in, stored(MmSymmetry::skew_symmetric)), Contains("not exactly skew-symmetric"));
    CHECK_THROWS_WITH(round_trip(h, stored(MmSymmetry::symmetric)), Contains("not exactly symmetric"));

    // Awkward values: extremes, denormals, -0, values that need all 17 digits.
    HostCsr<double, std::int32_t> x;
    x.rows = 1;
    x.cols = 8;
    x.values = {std::numeric_limits<double>::max(),
                std::numeric_limits<double>::denorm_min(),
                -0.0,
                0.1 + 0.2,
                1.0 / 3.0,
                -std::numeric_limits<double>::min(),
                1e-310,
                123456789012345678.0};
    x.row_ptr = {0, 8};
    x.col_idx = {0, 1, 2, 3, 4, 5, 6, 7};
    CHECK(round_trip(x).identical(x));
    HostCsr<float, std::int32_t> xf;
    xf.rows = 1;
    xf.cols = 5;
    xf.values = {std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(), 0.1f, 1.0f / 3.0f,
                 -16777217.0f};
    xf.row_ptr = {0, 5};
    xf.col_idx = {0, 1, 2, 3, 4};
    CHECK(round_trip(xf).identical(xf));

    // Values out of a type's range: refused for overflow, rounded for underflow.
    std::stringstream big("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e39\n");
    CHECK_THROWS_WITH((read_matrix_market<float>(big, "big")), Contains("big:3: '1e39' is out of the range of float"));
    std::stringstream tiny("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e-400\n");
    CHECK(read_matrix_market<double>(tiny, "tiny").values == std::vector<double>{0.0});
}

TEST_CASE("Matrix Market: malformed files are refused naming the file and the line", "[sparse]") {
    CHECK_THAT(refusal("no_banner.mtx", 1), Contains("missing banner"));
    CHECK_THAT(refusal("wrong_banner.mtx", 1), Contains("wrong banner") && Contains("'unsymmetric'"));
    CHECK_THAT(refusal("bad_size_line.mtx", 3), Contains("bad size line '3 3'"));
    CHECK_THAT(refusal("too_few.mtx", 4),
               Contains("fewer entries than declared") && Contains("declares 3, the file has 2"));
    CHECK_THAT(refusal("too_many.mtx", 5), Contains("more entries than declared"));
    CHECK_THAT(refusal("index_zero.mtx", 4), Contains("row index 0 is out of range 1..3"));
    CHECK_THAT(refusal("index_past.mtx", 4), Contains("column index 4 is out of range 1..3"));
    CHECK_THAT(refusal("non_numeric.mtx", 4), Contains("'two' is not a number"));
    CHECK_THAT(refusal("nan.mtx", 5), Contains("'nan' is not finite") && Contains("allow_nonfinite"));
    CHECK_THAT(refusal("inf.mtx", 3), Contains("'-inf' is not finite"));
    CHECK_THAT(refusal("complex.mtx", 1), Contains("a complex matrix cannot be read as double"));
    CHECK_THAT((refusal<float, std::int64_t>("complex.mtx", 1)), Contains("read it as std::complex<float>"));
    CHECK_THAT((refusal<double, std::int32_t>("huge_dimension.mtx", 2)), Contains("use int64"));

    // NaN and Inf are accepted when asked for.
    const ReadOptions lax{.allow_nonfinite = true};
    const auto n = read_matrix_market<double>((data_dir / "malformed" / "nan.mtx").string(), lax);
    CHECK(std::isnan(n.values[2]));
    const auto i = read_matrix_market<float>((data_dir / "malformed" / "inf.mtx").string(), lax);
    CHECK(i.values[0] == -std::numeric_limits<float>::infinity());
    // The complex file itself is fine as complex.
    CHECK(read_matrix_market<std::complex<double>>((data_dir / "malformed" / "complex.mtx").string()).nnz() == 2);

    // The rest, from memory.
    const auto refused = [](const std::string& text, std::size_t line, const std::string& what) {
        std::stringstream s(text);
        try {
            read_matrix_market<std::complex<double>, std::int64_t>(s, "mem.mtx");
            FAIL("accepted: " << text);
        } catch (const ParseError& e) {
            CHECK(e.line() == line);
            CHECK_THAT(e.what(), Contains("mem.mtx:" + std::to_string(line) + ": ") && Contains(what));
        }
    };
    refused("", 1, "empty input");
    refused("%%MatrixMarket matrix coordinate real\n1 1 0\n", 1, "wrong banner");
    refused("%%MatrixMarket vector coordinate real general\n1 1 0\n", 1, "object 'vector'");
    refused("%%MatrixMarket matrix sparse real general\n1 1 0\n", 1, "format 'sparse'");
    refused("%%MatrixMarket matrix coordinate double general\n1 1 0\n", 1, "field 'double'");
    refused("%%MatrixMarket matrix array pattern general\n1 1\n", 1, "array file cannot have the pattern field");
    refused("%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", 1, "hermitian matrix must be complex");
    refused("%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n", 1, "pattern matrix cannot be skew");
    refused("%%MatrixMarket matrix coordinate real general\n% only a comment\n", 2, "no size line");
    refused("%%MatrixMarket matrix coordinate real general\n2 2 -1\n", 2, "bad size line");
    refused("%%MatrixMarket matrix coordinate real general\n2 x 2\n", 2, "bad size line");
    refused("%%MatrixMarket matrix coordinate real general\n2 2 1 7\n", 2, "bad size line");
    refused("%%MatrixMarket matrix array real general\n2 2 4\n", 2, "bad size line");
    refused("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", 2, "must be square, not 2 x 3");
    refused("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1\n", 3, "expected 3 fields");
    refused("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1\n", 3, "expected 4 fields");
    refused("%%MatrixMarket matrix coordinate real general\n2 2 1\n1.5 1 1\n", 3, "'1.5' is not an integer row index");
    refused("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 -1 1\n", 3, "column index -1 is out of range");
    refused("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3, "'1.5' is not an integer");
    refused("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 0x10\n", 3, "'0x10' is not a number");
    refused("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1e\n", 3, "'1e' is not a number");
    refused("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", 3, "zero diagonal");
    refused("%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n2 2 1 1\n", 3, "real diagonal");
    refused("%%MatrixMarket matrix array real general\n2 1\n1\n", 3, "fewer entries than declared");
    refused("%%MatrixMarket matrix array real general\n1 1\n1\n2\n", 4, "more entries than declared");
    refused("%%MatrixMarket matrix array real general\n9223372036854775807 2\n", 2, "too many entries");
    refused("%%MatrixMarket matrix array complex general\n1 1\n1 inf\n", 3, "'inf' is not finite");

    // Blank lines, comments between entries, CRLF line ends, tabs and a '+' are tolerated.
    std::stringstream ok("%%MatrixMarket matrix coordinate real general\r\n\r\n% c\r\n2 2 2\r\n1\t1 +1\r\n\r\n% c\r\n2 "
                         "2 -2\r\n\r\n");
    const auto a = read_matrix_market<double>(ok, "ok");
    CHECK(a.values == std::vector<double>{1, -2});
}

TEST_CASE("Matrix Market: the SuiteSparse test matrices", "[sparse]") {
    const fs::path dir = XGPU_MATRICES_DIR;
    std::vector<fs::path> files;
    for (const auto& f : fs::directory_iterator(dir))
        if (f.path().extension() == ".mtx") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    REQUIRE(!files.empty());
    for (const auto& f : files) {
        SECTION(f.filename().string()) {
            // An independent reading: the triplets by plain stream extraction, symmetry by hand.
            std::ifstream in(f);
            std::string line, banner;
            std::getline(in, banner);
            while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
            }
            std::int64_t rows = 0, cols = 0, declared = 0;
            std::istringstream(line) >> rows >> cols >> declared;
            const bool symmetric = banner.find("symmetric") != std::string::npos;
            std::map<std::pair<std::int64_t, std::int64_t>, double> want;
            std::int64_t diag = 0, count = 0;
            while (std::getline(in, line)) {
                if (line.empty() || line[0] == '%') continue;
                std::int64_t i = 0, j = 0;
                std::string v;
                std::istringstream(line) >> i >> j >> v;
                const double x = std::strtod(v.c_str(), nullptr);
                want[{i - 1, j - 1}] += x;
                if (symmetric && i != j) want[{j - 1, i - 1}] += x;
                diag += i == j;
                ++count;
            }
            REQUIRE(count == declared);

            const auto h = read_matrix_market_header(f.string());
            CHECK((h.rows == rows && h.cols == cols && h.entries == declared));
            const auto a = read_matrix_market<double>(f.string());
            REQUIRE_NOTHROW(a.validate());
            CHECK(a.is_canonical());
            CHECK((a.rows == rows && a.cols == cols));
            CHECK(a.nnz() == std::size_t(symmetric ? 2 * declared - diag : declared));
            CHECK(entries(a) == want);

            CHECK(round_trip(a).identical(a));
            if (symmetric) CHECK(round_trip(a, stored(MmSymmetry::symmetric)).identical(a));
            const auto wide = read_matrix_market<double, std::int64_t>(f.string());
            CHECK(std::equal(wide.row_ptr.begin(), wide.row_ptr.end(), a.row_ptr.begin(), a.row_ptr.end()));
            CHECK(wide.values == a.values);
            const auto af = read_matrix_market<float>(f.string());
            CHECK(round_trip(af).identical(af));
            const auto ac = read_matrix_market<std::complex<double>>(f.string());
            CHECK(round_trip(ac).identical(ac));
            for (std::size_t k = 0; k < a.nnz(); ++k)
                REQUIRE(ac.values[k] == std::complex<double>(a.values[k]));

            // Through a file on disk too.
            const auto tmp = fs::temp_directory_path() / ("xgpu-sparse-" + std::to_string(::getpid()) + ".mtx");
            write_matrix_market(tmp.string(), a, {.comment = "written by test_sparse_host"});
            CHECK(read_matrix_market<double>(tmp.string()).identical(a));
            fs::remove(tmp);
        }
    }
    // A real-world malformed file.
    const auto nb = dir / "malformed" / "bcsstk01-no-banner.mtx";
    REQUIRE(fs::exists(nb));
    CHECK_THROWS_WITH(read_matrix_market<double>(nb.string()), Contains(nb.string() + ":1: missing banner"));
}

TEMPLATE_TEST_CASE("Csr on the device and back", "[sparse]", (Combo<float, std::int32_t>),
                   (Combo<double, std::int32_t>), (Combo<std::complex<float>, std::int32_t>),
                   (Combo<std::complex<double>, std::int64_t>), (Combo<double, std::int64_t>)) {
    using T = typename TestType::value;
    using I = typename TestType::index;
    XGPU_FOR_EACH_CONTEXT(ctx) {
        std::uniform_int_distribution<std::int64_t> dim(1, 300);
        std::vector<std::pair<std::int64_t, std::int64_t>> shapes{{0, 0}, {1, 1}, {0, 5}, {5, 0}};
        for (int k = 0; k < 4; ++k)
            shapes.emplace_back(dim(test::rng()), dim(test::rng()));
        for (auto [rows, cols] : shapes) {
            INFO(rows << " x " << cols);
            const auto h = random_csr<T, I>(rows, cols);
            const Csr<T, I> a(ctx, h);
            CHECK((a.rows() == rows && a.cols() == cols && a.nnz() == h.nnz()));
            CHECK(a.shape() == Shape{std::size_t(rows), std::size_t(cols)});
            const auto back = a.to_host();
            CHECK(back.identical(h));
            const auto s = row_stats(h);
            CHECK((a.row_stats().min == s.min && a.row_stats().max == s.max && a.row_stats().mean == s.mean &&
                   a.row_stats().stddev == s.stddev));
            const auto d = diagonal(h);
            CHECK(a.diagonal().size() == d.size());
            if (!d.empty()) CHECK(a.diagonal().get() == d);
            if (h.nnz() > 0) CHECK(a.values().get() == h.values);

            const Csr<T, I> b(ctx, rows, cols, std::span<const I>(h.row_ptr), std::span<const I>(h.col_idx),
                              std::span<const T>(h.values));
            CHECK(b.to_host().identical(h));
        }
        // Refused before anything is uploaded.
        auto bad = random_csr<T, I>(10, 10);
        bad.row_ptr[5] = bad.row_ptr[4] - 1;
        CHECK_THROWS_WITH((Csr<T, I>(ctx, bad)), Contains("must not fall"));
        bad = random_csr<T, I>(10, 10);
        bad.col_idx.push_back(10);
        bad.values.push_back(T(1));
        bad.row_ptr.back() += 1;
        CHECK_THROWS_WITH((Csr<T, I>(ctx, bad)), Contains("out of range for 10 columns"));
    }
}

namespace {

// validate_csr's checks done the plain way, one after another: the message of the first that
// fails (empty when none does).
template <class I>
std::string serial_error(std::int64_t rows, std::int64_t cols, const std::vector<I>& row_ptr,
                         const std::vector<I>& col_idx, std::size_t nvalues) {
    const std::string at = "xgpu: sparse: ";
    for (std::int64_t r = 0; r < rows; ++r)
        if (row_ptr[std::size_t(r) + 1] < row_ptr[std::size_t(r)])
            return at + "row pointers must not fall: row_ptr[" + std::to_string(r) +
                   "] = " + std::to_string(row_ptr[std::size_t(r)]) + " but row_ptr[" + std::to_string(r + 1) +
                   "] = " + std::to_string(row_ptr[std::size_t(r) + 1]);
    if (std::uint64_t(row_ptr.back()) != nvalues)
        return at + "row_ptr ends at " + std::to_string(row_ptr.back()) + " but there are " + std::to_string(nvalues) +
               " entries (nnz)";
    for (std::size_t k = 0; k < col_idx.size(); ++k)
        if (col_idx[k] < 0 || col_idx[k] >= cols) {
            std::int64_t r = 0;
            while (std::size_t(row_ptr[std::size_t(r) + 1]) <= k)
                ++r;
            return at + "col_idx[" + std::to_string(k) + "] = " + std::to_string(col_idx[k]) + " (row " +
                   std::to_string(r) + ") is out of range for " + std::to_string(cols) + " columns";
        }
    return {};
}

template <class F> std::string thrown(F&& f) {
    try {
        f();
    } catch (const InvalidArgument& e) {
        return e.what();
    }
    return {};
}

// Rows of 0 to 6 entries (a fifth empty), a diagonal entry in some, repeated in a few (the
// diagonal sums them), columns otherwise at random.
template <class T, class I> HostCsr<T, I> long_csr(std::int64_t rows, std::int64_t cols) {
    HostCsr<T, I> a;
    a.rows = rows;
    a.cols = cols;
    std::uniform_int_distribution<std::int64_t> len(0, 6), col(0, cols - 1);
    for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t n = test::rng()() % 5 == 0 ? 0 : len(test::rng());
        for (std::int64_t k = 0; k < n; ++k) {
            const bool diag = r < cols && test::rng()() % 4 == 0;
            a.col_idx.push_back(I(diag ? r : col(test::rng())));
            a.values.push_back(random_value<T>());
        }
        a.row_ptr.push_back(I(a.col_idx.size()));
    }
    return a;
}

} // namespace

TEMPLATE_TEST_CASE("Csr's one pass over many blocks of rows: the serial checks' first error, row statistics and "
                   "diagonal",
                   "[sparse]", (Combo<double, std::int32_t>), (Combo<std::complex<float>, std::int64_t>)) {
    using T = typename TestType::value;
    using I = typename TestType::index;
    XGPU_FOR_EACH_CONTEXT(ctx) {
        // Past 2^16 rows: several blocks of the pass, however many threads run it.
        for (const auto& shape :
             {std::pair<std::int64_t, std::int64_t>{300001, 300001}, {200003, 1000}, {70000, 250000}}) {
            const std::int64_t rows = shape.first, cols = shape.second; // lambdas below capture them
            INFO(rows << " x " << cols);
            const auto h = long_csr<T, I>(rows, cols);
            const Csr<T, I> a(ctx, h);
            // Statistics from integers and long double; the diagonal summed row by row.
            std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = 0;
            long double sq = 0;
            const long double mean = (long double)h.nnz() / (long double)rows;
            std::vector<T> diag(std::size_t(std::min(rows, cols)), T(0));
            for (std::int64_t r = 0; r < rows; ++r) {
                const std::int64_t n = h.row_ptr[std::size_t(r) + 1] - h.row_ptr[std::size_t(r)];
                lo = std::min(lo, n);
                hi = std::max(hi, n);
                sq += (n - mean) * (n - mean);
                for (auto k = h.row_ptr[std::size_t(r)]; k < h.row_ptr[std::size_t(r) + 1]; ++k)
                    if (h.col_idx[std::size_t(k)] == r) diag[std::size_t(r)] += h.values[std::size_t(k)];
            }
            const RowStats s = a.row_stats();
            CHECK(s.min == lo);
            CHECK(s.max == hi);
            CHECK(s.mean == double(h.nnz()) / double(rows));
            CHECK(s.stddev == Approx(double(std::sqrt(sq / rows))).epsilon(1e-10));
            const RowStats t = row_stats(h); // the host's figures are the same bits
            CHECK((t.min == s.min && t.max == s.max && t.mean == s.mean && t.stddev == s.stddev));
            CHECK(a.diagonal().get() == diag);
            CHECK(a.to_host().identical(h));

            // Errors planted in several blocks: the one the serial checks meet first is reported.
            const auto expect = [&](const HostCsr<T, I>& bad, const char* what) {
                INFO(what);
                const std::string want =
                    serial_error<I>(bad.rows, bad.cols, bad.row_ptr, bad.col_idx, bad.values.size());
                REQUIRE(!want.empty());
                CHECK(thrown([&] { bad.validate(); }) == want);
                CHECK(thrown([&] { Csr<T, I> b(ctx, bad); }) == want);
            };
            const auto at = [&](double share) { return std::size_t(double(rows) * share); };
            const auto with_col = [&](double share) { // an entry in a row near that share of the rows
                std::size_t r = at(share);
                while (h.row_ptr[r + 1] == h.row_ptr[r])
                    ++r;
                return std::size_t(h.row_ptr[r]);
            };
            auto bad = h;
            bad.col_idx[with_col(0.9)] = I(cols);
            bad.col_idx[with_col(0.4)] = I(-1);
            expect(bad, "two columns out of range: the lower one");
            bad.row_ptr[at(0.7)] = bad.row_ptr[at(0.7) + 1] + 1;
            expect(bad, "a fall after the bad columns: the fall");
            bad.row_ptr[at(0.5)] = I(h.nnz() + 50); // far past the entries, then falling
            expect(bad, "a fall from past the entries, and a later one: the first");
            bad = h;
            for (std::size_t r = at(0.3); r < at(0.6); ++r) // a run of blocks past the entries
                bad.row_ptr[r] = I(h.nnz() + 7);
            bad.col_idx[with_col(0.1)] = I(cols + 3);
            expect(bad, "pointers past the entries over whole blocks");
            bad = h;
            bad.row_ptr[1] = I(-5);
            expect(bad, "a negative pointer");
            bad = h;
            bad.row_ptr.back() = I(h.nnz() - 1);
            bad.col_idx[with_col(0.2)] = I(cols);
            expect(bad, "the end short of the entries, and a bad column");
        }
    }
}

TEST_CASE("the Poisson generator against a stencil written out and in row slices", "[sparse]") {
    const std::int64_t nx = 3 + std::int64_t(test::rng()() % 5), ny = 2 + std::int64_t(test::rng()() % 5);
    for (const std::int64_t nz : {std::int64_t(1), std::int64_t(4)}) {
        INFO(nx << " x " << ny << " x " << nz);
        const auto a = poisson<double, std::int64_t>(nx, ny, nz);
        const std::int64_t n = nx * ny * nz;
        REQUIRE(a.rows == n);
        // Each entry against the stencil: the diagonal 4 (2-D) or 6, -1 for each grid neighbour.
        std::map<std::pair<std::int64_t, std::int64_t>, double> want;
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int64_t x = i % nx, y = i / nx % ny, z = i / (nx * ny);
            want[{i, i}] = nz > 1 ? 6 : 4;
            if (x > 0) want[{i, i - 1}] = -1;
            if (x + 1 < nx) want[{i, i + 1}] = -1;
            if (y > 0) want[{i, i - nx}] = -1;
            if (y + 1 < ny) want[{i, i + nx}] = -1;
            if (z > 0) want[{i, i - nx * ny}] = -1;
            if (z + 1 < nz) want[{i, i + nx * ny}] = -1;
        }
        std::map<std::pair<std::int64_t, std::int64_t>, double> got;
        for (std::int64_t i = 0; i < n; ++i)
            for (auto k = a.row_ptr[std::size_t(i)]; k < a.row_ptr[std::size_t(i) + 1]; ++k) {
                if (k > a.row_ptr[std::size_t(i)]) CHECK(a.col_idx[std::size_t(k)] > a.col_idx[std::size_t(k) - 1]);
                got[{i, a.col_idx[std::size_t(k)]}] = a.values[std::size_t(k)];
            }
        CHECK(got == want);
        // Row slices (a distributed matrix's shares) put together are the whole.
        const std::int64_t cut = std::int64_t(test::rng()() % std::uint64_t(n + 1));
        const auto first = poisson_rows<double, std::int64_t>(nx, ny, nz, 0, cut);
        const auto second = poisson_rows<double, std::int64_t>(nx, ny, nz, cut, n - cut);
        CHECK(first.cols == n);
        CHECK(first.rows + second.rows == n);
        std::vector<std::int64_t> cols(first.col_idx);
        cols.insert(cols.end(), second.col_idx.begin(), second.col_idx.end());
        CHECK(cols == a.col_idx);
        CHECK_THROWS_WITH((poisson_rows<double, std::int64_t>(nx, ny, nz, cut, n - cut + 1)), Contains("rows"));
        CHECK_THROWS_WITH((poisson_rows<double, std::int64_t>(nx, ny, nz, -1, 1)), Contains("rows"));
    }
    CHECK_THROWS_WITH((poisson<double>(0, 3)), Contains("every side >= 1"));
}
