// Sparse products on the device (multiply, multiply_values, transpose, Csr from device arrays)
// against host references in double precision (complex<double> for the complex types), on every
// backend, on fresh random matrices: empty rows and matrices, rows of more than 10^4 entries (the
// work-group path), rows of up to thousands of products over few columns (the sorting
// work-groups), rectangular shapes, int64 indices, products of the multigrid kind (A * P,
// P^T * A * P); the results canonical and the same on two runs; bad input refused with its reason.
#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <numeric>
#include <random>
#include <string>

#include <xgpu/sparse.hpp>

#include "support.hpp"

using namespace xgpu;
using namespace xgpu::sparse;
using Catch::Matchers::Contains;

namespace {

// The host reference's element type: double, or std::complex<double> for complex T.
template <class T> struct Wide { using type = double; };
template <class R> struct Wide<std::complex<R>> { using type = std::complex<double>; };
template <class T> using wide_t = typename Wide<T>::type;
// Whether T's parts are single precision.
template <class T> constexpr bool single = std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>;

// A random value in (-1, 1), both parts for complex T.
template <class T> T random_value(std::uniform_real_distribution<double>& d, std::mt19937_64& g) {
    if constexpr (std::is_same_v<wide_t<T>, double>) {
        return T(d(g));
    } else {
        const double re = d(g);
        return T(typename T::value_type(re), typename T::value_type(d(g)));
    }
}

template <class T, class I>
HostCsr<T, I> generate(std::int64_t rows, std::int64_t cols, const std::vector<std::int64_t>& len) {
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<I> r, c;
    std::vector<T> v;
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t k = 0; k < std::min(len[std::size_t(i)], cols); ++k) {
            r.push_back(I(i));
            c.push_back(I(std::int64_t(test::rng()() % std::uint64_t(cols))));
            v.push_back(random_value<T>(d, test::rng()));
        }
    return from_coo<T, I>(rows, cols, r, c, v);
}

// C = A * B on the host, in double (complex<double>), row by row through a map (sorted columns).
template <class T, class U, class I>
HostCsr<wide_t<T>, I> host_product(const HostCsr<T, I>& a, const HostCsr<U, I>& b) {
    using W = wide_t<T>;
    HostCsr<W, I> c;
    c.rows = a.rows;
    c.cols = b.cols;
    c.row_ptr.assign(std::size_t(a.rows) + 1, 0);
    for (std::int64_t i = 0; i < a.rows; ++i) {
        std::map<I, W> row;
        for (auto k = std::size_t(a.row_ptr[std::size_t(i)]); k < std::size_t(a.row_ptr[std::size_t(i) + 1]); ++k) {
            const auto j = std::size_t(a.col_idx[k]);
            for (auto m = std::size_t(b.row_ptr[j]); m < std::size_t(b.row_ptr[j + 1]); ++m)
                row[b.col_idx[m]] += W(a.values[k]) * W(b.values[m]);
        }
        for (const auto& [col, v] : row) {
            c.col_idx.push_back(col);
            c.values.push_back(v);
        }
        c.row_ptr[std::size_t(i) + 1] = I(c.values.size());
    }
    return c;
}

// The device's result has the reference's pattern exactly and its values within rounding.
template <class T, class I> void check_equal(const Csr<T, I>& got, const HostCsr<wide_t<T>, I>& want, double tol) {
    const HostCsr<T, I> h = got.to_host();
    REQUIRE(h.rows == want.rows);
    REQUIRE(h.cols == want.cols);
    REQUIRE(h.row_ptr == want.row_ptr);
    REQUIRE(h.col_idx == want.col_idx);
    CHECK(h.is_canonical());
    CHECK(got.canonical());
    double worst = 0;
    for (std::size_t k = 0; k < h.values.size(); ++k)
        worst = std::max(worst, std::abs(wide_t<T>(h.values[k]) - want.values[k]) / (1 + std::abs(want.values[k])));
    CHECK(worst <= tol);
    // The diagonal and row statistics computed on the device.
    const std::vector<T> d = got.diagonal().get();
    const std::vector<T> hd = sparse::diagonal(h);
    REQUIRE(d.size() == hd.size());
    for (std::size_t i = 0; i < d.size(); ++i)
        CHECK(d[i] == hd[i]);
    const RowStats s = got.row_stats(), hs = row_stats(h);
    CHECK(s.min == hs.min);
    CHECK(s.max == hs.max);
    CHECK(std::abs(s.mean - hs.mean) <= 1e-12 * (1 + hs.mean));
    CHECK(std::abs(s.stddev - hs.stddev) <= 1e-9 * (1 + hs.stddev));
}

template <class T, class I> HostCsr<wide_t<T>, I> widen(const HostCsr<T, I>& a) {
    HostCsr<wide_t<T>, I> w;
    w.rows = a.rows;
    w.cols = a.cols;
    w.row_ptr = a.row_ptr;
    w.col_idx = a.col_idx;
    w.values.assign(a.values.begin(), a.values.end());
    return w;
}

template <class T, class I> void products(const Context& ctx) {
    INFO("T size " << sizeof(T) << " I size " << sizeof(I));
    const double tol = single<T> ? 1e-5 : 1e-13;
    auto& g = test::rng();
    const auto lengths = [&](std::int64_t rows, std::int64_t most, bool empty_rows) {
        std::vector<std::int64_t> len(static_cast<std::size_t>(rows));
        for (auto& l : len)
            l = empty_rows && g() % 5 == 0 ? 0 : std::int64_t(g() % std::uint64_t(most + 1));
        return len;
    };
    SECTION("random rectangular products with empty rows") {
        const std::int64_t m = 50 + std::int64_t(g() % 200), k = 30 + std::int64_t(g() % 200),
                           n = 1 + std::int64_t(g() % 150);
        const auto a = generate<T, I>(m, k, lengths(m, 12, true)), b = generate<T, I>(k, n, lengths(k, 9, true));
        const Csr<T, I> da(ctx, a), db(ctx, b);
        const Csr<T, I> c = multiply(da, db);
        check_equal(c, host_product(a, b), tol);
        // The same again, bit for bit.
        CHECK(multiply(da, db).to_host().identical(c.to_host()));
        // New values on the same patterns.
        HostCsr<T, I> a2 = a;
        for (auto& v : a2.values)
            v = T(2) * v + T(1);
        const Csr<T, I> c2 = multiply_values(Csr<T, I>(ctx, a2), db, c);
        check_equal(c2, host_product(a2, b), tol);
    }
    SECTION("rows of every length the sorting work-groups take and beyond, few columns") {
        // Products per row from 0 to several thousand over 100 columns: each column summed from
        // many products, rows below, at and above the sort's capacity.
        const std::int64_t m = 300, k = 500, n = 100;
        auto len_a = lengths(m, 400, true);
        const auto a = generate<T, I>(m, k, len_a), b = generate<T, I>(k, n, lengths(k, 16, true));
        const Csr<T, I> da(ctx, a), db(ctx, b);
        const double within = single<T> ? 1e-4 : 1e-12;
        const auto want = host_product(a, b);
        // The device's own choice of kernels (on CPUs neither sorts nor teams), then every row
        // that the sorting work-group holds, every row that a team holds, and every row that a
        // work-item's merge holds (short rows in registers), on every device.
        for (const auto path : {sparse::detail::ProductPath::automatic, sparse::detail::ProductPath::sort,
                                sparse::detail::ProductPath::team, sparse::detail::ProductPath::merge}) {
            sparse::detail::set_product_path(path);
            const Csr<T, I> c = multiply(da, db);
            check_equal(c, want, within);
            CHECK(multiply(da, db).to_host().identical(c.to_host()));
            check_equal(multiply_values(da, db, c), want, within);
        }
        sparse::detail::set_product_path(sparse::detail::ProductPath::automatic);
    }
    SECTION("rows of more than 10^4 entries") {
        // Row 3 of A is dense (the work-group path), and B has a dense row too.
        const std::int64_t m = 40, k = 30000, n = 20000;
        auto len_a = lengths(m, 6, true);
        len_a[3] = 40000;
        auto len_b = lengths(k, 3, true);
        len_b[7] = 20000;
        const auto a = generate<T, I>(m, k, len_a), b = generate<T, I>(k, n, len_b);
        REQUIRE(row_stats(a).max > 10000);
        const Csr<T, I> c = multiply(Csr<T, I>(ctx, a), Csr<T, I>(ctx, b));
        check_equal(c, host_product(a, b), tol);
        CHECK(c.row_stats().max > 10000);
    }
    SECTION("transpose") {
        const std::int64_t m = 1 + std::int64_t(g() % 300), n = 1 + std::int64_t(g() % 300);
        auto len = lengths(m, 10, true);
        len[0] = std::min<std::int64_t>(n, 200); // a long column for every row's first entries
        const auto a = generate<T, I>(m, n, len);
        // Many empty columns (empty rows of the transpose) between short ones.
        auto sparse_cols = lengths(2000, 3, true);
        const auto wide = generate<T, I>(2000, 60000, sparse_cols);
        // A column of more than 10^4 entries (heapsort of the row).
        const auto tall = generate<T, I>(15000, 3, std::vector<std::int64_t>(15000, 2));
        // Columns (rows of the transpose) on both sides of a batch's window and of a work-group's
        // capacity (256 to 2048 entries, as the element size gives), between short ones: column
        // j has entries in hits[j] distinct random rows.
        const std::vector<std::int64_t> hits = {3, 700, 0, 5, 1500, 2, 257, 4000, 1, 513, 9, 255, 2048, 2049, 1025, 7};
        std::vector<I> mr, mc;
        std::vector<T> mv;
        std::vector<std::int64_t> order(5000);
        std::uniform_real_distribution<double> d(-1, 1);
        for (std::size_t j = 0; j < hits.size(); ++j) {
            std::iota(order.begin(), order.end(), std::int64_t(0));
            std::shuffle(order.begin(), order.end(), g);
            for (std::int64_t k = 0; k < hits[j]; ++k) {
                mr.push_back(I(order[std::size_t(k)]));
                mc.push_back(I(j));
                mv.push_back(random_value<T>(d, g));
            }
        }
        const auto mixed = from_coo<T, I>(5000, std::int64_t(hits.size()), mr, mc, mv);
        // The device's own way to sort the rows (a work-item per row on CPUs), then batches of
        // rows and long rows sorted by work-groups on every device.
        for (const auto path : {sparse::detail::ProductPath::automatic, sparse::detail::ProductPath::sort}) {
            sparse::detail::set_product_path(path);
            check_equal(transpose(Csr<T, I>(ctx, a)), widen(sparse::transpose(a)), 0);
            check_equal(transpose(Csr<T, I>(ctx, wide)), widen(sparse::transpose(wide)), 0);
            check_equal(transpose(Csr<T, I>(ctx, tall)), widen(sparse::transpose(tall)), 0);
            check_equal(transpose(Csr<T, I>(ctx, mixed)), widen(sparse::transpose(mixed)), 0);
        }
        sparse::detail::set_product_path(sparse::detail::ProductPath::automatic);
    }
    SECTION("the products of a multigrid hierarchy: A P and P^T (A P)") {
        const auto a = poisson<T, I>(17, 13);
        // An aggregation of the grid into blocks of 3 x 3 nodes, smoothed once by A's pattern.
        const std::int64_t nc = ((17 + 2) / 3) * ((13 + 2) / 3);
        std::vector<I> r, c;
        std::vector<T> v;
        for (std::int64_t i = 0; i < a.rows; ++i) {
            const std::int64_t x = i % 17, y = i / 17, agg = (y / 3) * ((17 + 2) / 3) + x / 3;
            for (auto k = a.row_ptr[std::size_t(i)]; k < a.row_ptr[std::size_t(i) + 1]; ++k) {
                const std::int64_t j = a.col_idx[std::size_t(k)], xj = j % 17, yj = j / 17;
                r.push_back(I(i));
                c.push_back(I((yj / 3) * ((17 + 2) / 3) + xj / 3));
                v.push_back(T(agg == c.back() ? 0.5 : 0.1));
            }
        }
        const auto p = from_coo<T, I>(a.rows, nc, r, c, v);
        const Csr<T, I> da(ctx, a), dp(ctx, p);
        for (const auto path : {sparse::detail::ProductPath::automatic, sparse::detail::ProductPath::sort,
                                sparse::detail::ProductPath::team, sparse::detail::ProductPath::merge}) {
            sparse::detail::set_product_path(path);
            const Csr<T, I> ap = multiply(da, dp);
            check_equal(ap, host_product(a, p), tol);
            const Csr<T, I> rap = multiply(transpose(dp), ap);
            check_equal(rap, host_product(sparse::transpose(p), host_product(a, p)), tol * 10);
        }
        sparse::detail::set_product_path(sparse::detail::ProductPath::automatic);
    }
    SECTION("empty operands") {
        const Csr<T, I> none(ctx, HostCsr<T, I>{7, 5, std::vector<I>(8, 0), {}, {}});
        const Csr<T, I> b(ctx, generate<T, I>(5, 4, lengths(5, 3, false)));
        const Csr<T, I> c = multiply(none, b);
        CHECK(c.rows() == 7);
        CHECK(c.cols() == 4);
        CHECK(c.nnz() == 0);
        CHECK(transpose(none).rows() == 5);
        CHECK(transpose(none).nnz() == 0);
    }
}

} // namespace

TEST_CASE("multiply and transpose on the device equal the host's", "[sparse][product]") {
    // A section each: Catch enters a section of one name once a run, so the sections of a
    // second products<...> call in the same section would never run.
    XGPU_FOR_EACH_CONTEXT(ctx) {
        SECTION("double, int32") {
            products<double, std::int32_t>(ctx);
        }
        SECTION("float, int32") {
            products<float, std::int32_t>(ctx);
        }
        SECTION("double, int64") {
            products<double, std::int64_t>(ctx);
        }
        SECTION("complex<float>, int32") {
            products<std::complex<float>, std::int32_t>(ctx);
        }
        SECTION("complex<double>, int32") {
            products<std::complex<double>, std::int32_t>(ctx);
        }
    }
}

TEST_CASE("sparse products refuse bad input before any work", "[sparse][product]") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto a = poisson<double>(4, 3);
        const Csr<double> da(ctx, a);
        const Csr<double> other(ctx, poisson<double>(5, 5));
        CHECK_THROWS_AS(multiply(da, other), ShapeError);
        CHECK_THROWS_WITH(multiply(da, other), Contains("A's columns must match B's rows"));
        // A right operand whose columns are not sorted.
        const std::vector<std::int32_t> ptr{0, 2, 3}, col{1, 0, 1};
        const std::vector<double> val{1, 2, 3};
        const Csr<double> unsorted(ctx, 2, 2, ptr, col, val);
        CHECK_FALSE(unsorted.canonical());
        const Csr<double> two(ctx, poisson<double>(2, 1));
        CHECK_THROWS_WITH(multiply(two, unsorted), Contains("must rise strictly"));
        // A product whose entry count does not fit int32: a dense column times a dense row
        // (70000 x 70000 entries), refused after the count, before C is allocated.
        const std::int64_t n = 70000;
        HostCsr<float> column{
            n, 1, {}, std::vector<std::int32_t>(std::size_t(n), 0), std::vector<float>(std::size_t(n), 1)};
        column.row_ptr.resize(std::size_t(n) + 1);
        for (std::int64_t i = 0; i <= n; ++i)
            column.row_ptr[std::size_t(i)] = std::int32_t(i);
        HostCsr<float> row{1, n, {0, std::int32_t(n)}, {}, std::vector<float>(std::size_t(n), 1)};
        for (std::int64_t i = 0; i < n; ++i)
            row.col_idx.push_back(std::int32_t(i));
        CHECK_THROWS_WITH(multiply(Csr<float>(ctx, column), Csr<float>(ctx, row)),
                          Contains("4900000000 entries") && Contains("int64"));
        // Device arrays that do not make a matrix.
        const Array<std::int32_t> p = to_device<std::int32_t>(ctx, std::vector<std::int32_t>{0, 2, 1});
        const Array<std::int32_t> c2 = to_device<std::int32_t>(ctx, std::vector<std::int32_t>{0, 5});
        const Array<double> v2 = to_device<double>(ctx, std::vector<double>{1, 2});
        CHECK_THROWS_WITH(Csr<double>(ctx, 2, 2, p, c2, v2), Contains("must run from 0"));
        const Array<std::int32_t> p2 = to_device<std::int32_t>(ctx, std::vector<std::int32_t>{0, 1, 2});
        CHECK_THROWS_WITH(Csr<double>(ctx, 2, 2, p2, c2, v2), Contains("columns outside 0 .. 1"));
        CHECK_THROWS_AS(Csr<double>(ctx, 3, 2, p2, c2, v2), ShapeError);
    }
}
