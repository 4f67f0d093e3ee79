// SpMV y = alpha*A*x + beta*y in every format against a host product in double precision, on
// every backend, on generated matrices (empty rows at the start, middle and end, one dense row
// among short ones, rectangular, all zeros, complex values, int64 indices) and on the shared
// Matrix Market files when present; bad input refused before any work.
#include <cmath>
#include <complex>
#include <filesystem>

#include <xgpu/sparse.hpp>

#include "support.hpp"

using namespace xgpu;
using namespace xgpu::sparse;
using Catch::Matchers::Contains;

namespace {

template <class T> T random_value(double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    if constexpr (std::is_floating_point_v<T>)
        return T(d(test::rng()));
    else {
        using R = typename T::value_type;
        return T(R(d(test::rng())), R(d(test::rng())));
    }
}

// A rows x cols matrix whose row r has lengths[r] entries at random distinct columns.
template <class T, class I>
HostCsr<T, I> generate(std::int64_t rows, std::int64_t cols, std::vector<std::int64_t> len) {
    std::vector<I> r, c;
    std::vector<T> v;
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t k = 0; k < std::min(len[std::size_t(i)], cols); ++k) {
            r.push_back(I(i));
            c.push_back(I(std::int64_t(test::rng()() % std::uint64_t(cols))));
            v.push_back(random_value<T>(-1, 1));
        }
    return from_coo<T, I>(rows, cols, r, c, v);
}

template <class T> using Wide = std::conditional_t<std::is_floating_point_v<T>, double, std::complex<double>>;

template <class T, class I>
void check(const Context& ctx, const HostCsr<T, I>& h, Format f, T alpha, T beta, const std::string& what) {
    INFO(what << ": " << h.rows << "x" << h.cols << ", nnz " << h.nnz() << ", format " << name(f) << ", alpha " << alpha
              << ", beta " << beta);
    Csr<T, I> a(ctx, h);
    std::vector<T> hx(std::size_t(h.cols)), hy(std::size_t(h.rows));
    for (auto& v : hx)
        v = random_value<T>(-1, 1);
    for (auto& v : hy)
        v = random_value<T>(-1, 1);
    auto x = to_device<T>(ctx, hx);
    auto y = to_device<T>(ctx, hy);
    if (h.rows == 0) y = Array<T>();
    if (h.cols == 0) x = Array<T>();
    if (h.rows > 0 || h.cols > 0) {
        if (h.rows == 0) y = empty<T>(ctx, {0});
        if (h.cols == 0) x = empty<T>(ctx, {0});
    }
    spmv(a, x, y, alpha, beta, f);
    const auto got = h.rows ? y.get() : std::vector<T>();
    // The unit roundoff of T's real type.
    const double eps = std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>> ? 0x1p-53 : 0x1p-24;
    for (std::int64_t r = 0; r < h.rows; ++r) {
        Wide<T> sum = 0;
        double magnitude = 0;
        for (I k = h.row_ptr[std::size_t(r)]; k < h.row_ptr[std::size_t(r) + 1]; ++k) {
            const Wide<T> p = Wide<T>(h.values[std::size_t(k)]) * Wide<T>(hx[std::size_t(h.col_idx[std::size_t(k)])]);
            sum += p;
            magnitude += std::abs(p);
        }
        const Wide<T> want =
            Wide<T>(alpha) * sum + (beta == T(0) ? Wide<T>(0) : Wide<T>(beta) * Wide<T>(hy[std::size_t(r)]));
        const double tol = 16 * eps * (std::abs(Wide<T>(alpha)) * magnitude + std::abs(Wide<T>(beta)) + 1);
        REQUIRE(std::abs(Wide<T>(got[std::size_t(r)]) - want) <= tol);
    }
}

template <class T, class I> void all_formats(const Context& ctx, const HostCsr<T, I>& h, const std::string& what) {
    for (Format f : {Format::automatic, Format::csr_scalar, Format::csr_vector}) {
        check<T, I>(ctx, h, f, T(1), T(0), what);
        check<T, I>(ctx, h, f, random_value<T>(-2, 2), random_value<T>(-2, 2), what);
    }
}

template <class T, class I> void generated_cases(const Context& ctx) {
    const std::int64_t n = 200 + std::int64_t(test::rng()() % 300);
    std::vector<std::int64_t> len(static_cast<std::size_t>(n));
    for (auto& l : len)
        l = std::int64_t(test::rng()() % 9);
    len[0] = len[std::size_t(n / 2)] = len[std::size_t(n - 1)] = 0; // empty rows at start, middle and end
    all_formats(ctx, generate<T, I>(n, n, len), "random rows");
    len[std::size_t(n / 3)] = n; // one dense row among short ones
    all_formats(ctx, generate<T, I>(n, n, len), "one dense row");
    all_formats(ctx, generate<T, I>(n, n / 7 + 1, len), "tall");
    all_formats(ctx, generate<T, I>(n / 5 + 1, n, std::vector<std::int64_t>(len.begin(), len.begin() + n / 5 + 1)),
                "wide");
    all_formats(ctx, generate<T, I>(n, n, std::vector<std::int64_t>(std::size_t(n), 0)), "all zeros");
    all_formats(ctx, generate<T, I>(1, 1, {1}), "1x1");
    std::vector<std::int64_t> long_rows(64, 100); // rows longer than the widest vector
    all_formats(ctx, generate<T, I>(64, 300, long_rows), "long rows");
}

} // namespace

TEST_CASE("spmv matches the host in every format, type and index width") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        generated_cases<double, std::int32_t>(ctx);
        generated_cases<float, std::int32_t>(ctx);
        generated_cases<std::complex<double>, std::int64_t>(ctx);
        generated_cases<std::complex<float>, std::int32_t>(ctx);
        generated_cases<double, std::int64_t>(ctx);
        // beta == 0 never reads y: a NaN there does not propagate.
        const auto h = generate<double, std::int32_t>(50, 50, std::vector<std::int64_t>(50, 3));
        Csr<double> a(ctx, h);
        auto x = full<double>(ctx, {50}, 1.0);
        auto y = full<double>(ctx, {50}, std::nan(""));
        spmv(a, x, y);
        for (double v : y.get())
            REQUIRE(std::isfinite(v));
    }
}

TEST_CASE("spmv on the shared matrices") {
    const std::filesystem::path dir = XGPU_MATRICES_DIR;
    if (!std::filesystem::exists(dir)) {
        WARN("no " << dir.string() << ": skipped");
        return;
    }
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const auto& e : std::filesystem::directory_iterator(dir)) {
            if (e.path().extension() != ".mtx") continue;
            const auto h = read_matrix_market<double>(e.path().string());
            all_formats(ctx, h, e.path().filename().string());
        }
    }
}

TEST_CASE("spmv refuses bad input before any work") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto h = generate<double, std::int32_t>(10, 8, std::vector<std::int64_t>(10, 2));
        Csr<double> a(ctx, h);
        auto x = zeros<double>(ctx, {8}), y = zeros<double>(ctx, {10}), bad = zeros<double>(ctx, {9});
        CHECK_THROWS_AS(spmv(a, bad, y), ShapeError);
        CHECK_THROWS_WITH(spmv(a, bad, y), Contains("10x8 matrix needs x of 8 and y of 10 elements"));
        CHECK_THROWS_AS(spmv(a, x, bad), ShapeError);
        auto both = zeros<double>(ctx, {18});
        auto xs = both(slice(0, 8)), ys = both(slice(8, 18));
        CHECK_THROWS_WITH(spmv(a, xs, ys), Contains("y shares memory with x"));
        CHECK_THROWS_WITH(parse_format("ell"), Contains("'ell' is not an SpMV format"));
        CHECK(parse_format("CSR_Vector") == Format::csr_vector);
        CHECK(plan_spmv(a, Format::csr_scalar).lanes == 1);
        CHECK(plan_spmv(a, Format::csr_vector).lanes == 2);
    }
}
