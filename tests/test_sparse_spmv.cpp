// SpMV y = alpha*A*x + beta*y in every format against a host product in double precision, on
// every backend, on fresh random matrices (0x0 and 1x1, empty rows at the start, middle and end,
// one dense row among short ones, power-law row lengths, rows longer than many merge-path
// work-groups, rectangular, no entries and all-zero values, complex values, int64 indices), alpha
// and beta of 0, 1 and other values, y as a strided view, and on the SuiteSparse matrices of
// tests/data/matrices; layouts built once; SELL-C-sigma built on the device against a layout built on the
// host from its definition, bit for bit, for several C and sigma; the automatic choice; the
// packeted remainder's share and its fallback off square matrices; bad input refused before any
// work.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include <xgpu/codegen.hpp>
#include <xgpu/sparse.hpp>

#include "codegen/launch.hpp"
#include "sparse/build.hpp"
#include "sparse/spmv.hpp"
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

// How y is passed: a whole array, or every second element of a larger one (a strided view, which
// spmv computes into a temporary and copies back, reading y first when beta is not 0); and
// whether alpha and beta are host values or device scalars.
enum class YKind { contiguous, strided, device_scalars };

template <class T, class I>
void check(const Context& ctx, const Csr<T, I>& a, const HostCsr<T, I>& h, Format f, T alpha, T beta,
           const std::string& what, YKind ykind = YKind::contiguous) {
    INFO(what << ": " << h.rows << "x" << h.cols << ", nnz " << h.nnz() << ", format " << name(f) << " (plan "
              << name(plan_spmv(a, f).format) << "), alpha " << alpha << ", beta " << beta
              << (ykind == YKind::strided ? ", y strided" : "")
              << (ykind == YKind::device_scalars ? ", alpha and beta on the device" : ""));
    std::vector<T> hx(std::size_t(h.cols)), hy(std::size_t(h.rows));
    for (auto& v : hx)
        v = random_value<T>(-1, 1);
    for (auto& v : hy)
        v = random_value<T>(-1, 1);
    Array<T> x = h.cols ? to_device<T>(ctx, hx) : empty<T>(ctx, {0});
    Array<T> y = h.rows ? to_device<T>(ctx, hy) : empty<T>(ctx, {0});
    Array<T> y_base; // the array a strided y views, whose other elements must stay as they were
    std::vector<T> h_base;
    if (ykind == YKind::strided && h.rows) {
        h_base.resize(2 * hy.size());
        for (std::size_t r = 0; r < h_base.size(); ++r)
            h_base[r] = r % 2 ? random_value<T>(-1, 1) : hy[r / 2];
        y_base = to_device<T>(ctx, h_base);
        y = y_base(slice(0, {}, 2));
    }
    if (ykind == YKind::device_scalars) {
        if (beta == T(0) && h.rows) // y is not read where beta is 0: a NaN there must not show
            y.fill(T(std::numeric_limits<double>::quiet_NaN()));
        spmv(a, x, y, full<T>(ctx, {}, alpha), full<T>(ctx, {1}, beta), f);
    } else {
        spmv(a, x, y, alpha, beta, f);
    }
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
        INFO("row " << r << " of length " << h.row_ptr[std::size_t(r) + 1] - h.row_ptr[std::size_t(r)]);
        REQUIRE(std::abs(Wide<T>(got[std::size_t(r)]) - want) <= tol);
    }
    if (!h_base.empty()) {
        const auto base = y_base.get();
        for (std::size_t r = 1; r < base.size(); r += 2)
            REQUIRE(base[r] == h_base[r]);
    }
}

// Every format (automatic included), with alpha and beta of 1 and 0, 0 and other, other and 1,
// and random values, and once with y as a strided view.
template <class T, class I> void all_formats(const Context& ctx, const HostCsr<T, I>& h, const std::string& what) {
    const Csr<T, I> a(ctx, h);
    for (Format f : formats()) {
        check<T, I>(ctx, a, h, f, T(1), T(0), what);
        check<T, I>(ctx, a, h, f, T(0), random_value<T>(-2, 2), what);
        check<T, I>(ctx, a, h, f, random_value<T>(-2, 2), T(1), what);
        check<T, I>(ctx, a, h, f, random_value<T>(-2, 2), random_value<T>(-2, 2), what);
        check<T, I>(ctx, a, h, f, random_value<T>(-2, 2), random_value<T>(-2, 2), what, YKind::strided);
        check<T, I>(ctx, a, h, f, random_value<T>(-2, 2), T(test::rng()() % 2 ? 0 : 1) * random_value<T>(-2, 2), what,
                    YKind::device_scalars);
    }
}

// Power-law row lengths (a Zipf-like tail: the longest rows hundreds of times the mean), with
// empty rows among them, in random row order.
std::vector<std::int64_t> power_law(std::int64_t rows, std::int64_t cols) {
    std::vector<std::int64_t> len{};
    len.resize(std::size_t(rows));
    std::uniform_real_distribution<double> u(0, 1);
    for (auto& l : len)
        l = std::min(cols, std::int64_t(std::floor(0.5 / std::pow(1 - u(test::rng()) * 0.999, 1.5))));
    len[std::size_t(test::rng()() % std::uint64_t(rows))] = cols; // and one full row
    return len;
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
    all_formats(ctx, generate<T, I>(n, n, std::vector<std::int64_t>(std::size_t(n), 0)), "no entries");
    auto zeros = generate<T, I>(n, n, len);
    std::fill(zeros.values.begin(), zeros.values.end(), T(0));
    all_formats(ctx, zeros, "all values zero");
    all_formats(ctx, generate<T, I>(1, 1, {1}), "1x1");
    all_formats(ctx, generate<T, I>(1, 1, {0}), "1x1 empty");
    all_formats(ctx, HostCsr<T, I>{}, "0x0");
    all_formats(ctx, generate<T, I>(0, 5, {}), "0x5");
    all_formats(ctx, generate<T, I>(5, 0, std::vector<std::int64_t>(5, 0)), "5x0");
    std::vector<std::int64_t> long_rows(64, 100); // rows longer than the widest vector
    all_formats(ctx, generate<T, I>(64, 300, long_rows), "long rows");
    const std::int64_t m = 3000 + std::int64_t(test::rng()() % 3000);
    all_formats(ctx, generate<T, I>(m, m, power_law(m, m)), "power-law rows");
}

// Big enough for several merge-path work-groups (a CPU's tile is 131072 steps, a GPU's 2048): a
// row longer than several tiles, between empty rows, and then runs of rows, so that carries
// cross work-groups both inside a row and at row ends.
template <class T, class I> void merge_cases(const Context& ctx) {
    const std::int64_t cols = 300000 + std::int64_t(test::rng()() % 100000);
    const Csr<T, I> one(ctx, generate<T, I>(1, cols, {cols}));
    const auto h_one = one.to_host();
    check<T, I>(ctx, one, h_one, Format::merge_path, random_value<T>(-2, 2), random_value<T>(-2, 2), "one huge row");
    std::vector<std::int64_t> len(20000);
    for (auto& l : len)
        l = std::int64_t(test::rng()() % 6);
    len[0] = len[1] = len[len.size() - 1] = 0;
    len[5000] = cols;
    len[5001] = 0;
    len[5002] = cols / 2;
    const auto h = generate<T, I>(std::int64_t(len.size()), cols, len);
    const Csr<T, I> a(ctx, h);
    for (Format f : formats())
        check<T, I>(ctx, a, h, f, random_value<T>(-2, 2), random_value<T>(-2, 2), "huge rows among short ones");
}

} // namespace

TEST_CASE("spmv matches the host in every format, type and index width") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        generated_cases<double, std::int32_t>(ctx);
        generated_cases<float, std::int32_t>(ctx);
        generated_cases<std::complex<double>, std::int64_t>(ctx);
        generated_cases<std::complex<float>, std::int32_t>(ctx);
        generated_cases<double, std::int64_t>(ctx);
        merge_cases<double, std::int32_t>(ctx);
        merge_cases<std::complex<float>, std::int64_t>(ctx);
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

// spmv_rows: the product into the rows of a taller y that `at` names, and its share of a dot.
template <class T, class I>
void rows_case(const Context& ctx, std::int64_t rows, std::int64_t tall, std::int64_t cols) {
    auto& g = test::rng();
    std::vector<std::int64_t> len(static_cast<std::size_t>(rows));
    for (auto& l : len)
        l = std::int64_t(g() % 6);
    const auto h = generate<T, I>(rows, cols, len);
    // Distinct rows of y, in a random order.
    std::vector<I> at(static_cast<std::size_t>(tall));
    std::iota(at.begin(), at.end(), I(0));
    std::shuffle(at.begin(), at.end(), g);
    at.resize(static_cast<std::size_t>(rows));
    std::vector<T> hx(static_cast<std::size_t>(cols)), hy(static_cast<std::size_t>(tall)), hd(hy.size());
    for (auto& v : hx)
        v = random_value<T>(-1, 1);
    for (auto& v : hy)
        v = random_value<T>(-1, 1);
    for (auto& v : hd)
        v = random_value<T>(-1, 1);
    const T alpha = T(1.5), beta = T(-0.5);
    std::vector<double> want(hy.begin(), hy.end());
    double dot = 0;
    for (std::int64_t i = 0; i < rows; ++i) {
        double s = 0;
        for (auto k = h.row_ptr[std::size_t(i)]; k < h.row_ptr[std::size_t(i) + 1]; ++k)
            s += double(h.values[std::size_t(k)]) * double(hx[std::size_t(h.col_idx[std::size_t(k)])]);
        const auto r = std::size_t(at[std::size_t(i)]);
        want[r] = double(alpha) * s + double(beta) * double(hy[r]);
        dot += double(hd[r]) * double(alpha) * s;
    }
    const Csr<T, I> a(ctx, h);
    const Array<I> dat = to_device(ctx, at);
    const Array<T> x = to_device(ctx, hx), d = to_device(ctx, hd);
    Array<T> y = to_device(ctx, hy);
    const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-13;
    const auto check_y = [&] {
        const std::vector<T> got = y.get();
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i)
            worst = std::max(worst, std::abs(double(got[i]) - want[i]) / (1 + std::abs(want[i])));
        CHECK(worst <= tol);
    };
    spmv_rows(a, dat, x, y, alpha, beta);
    check_y();
    // With the dot: the partial sums gain these rows' share, y as before.
    y = to_device(ctx, hy);
    Array<T> partial = full<T>(ctx, {7}, T(0.25));
    spmv_rows(a, dat, x, y, alpha, beta, &d, &partial);
    check_y();
    double total = 0;
    for (const T p : partial.get())
        total += double(p);
    CHECK(std::abs(total - (7 * 0.25 + dot)) <= 10 * tol * (1 + std::abs(dot)));
    // Bad input, refused before any work.
    CHECK_THROWS_AS(spmv_rows(a, Array<I>(dat(Slice{0, rows - 1})), x, y, alpha, beta), ShapeError);
    CHECK_THROWS_WITH(spmv_rows(a, dat, x, y, alpha, beta, &d, static_cast<Array<T>*>(nullptr)), Contains("together"));
    Array<T> short_d = to_device(ctx, std::vector<T>(3, T(1)));
    CHECK_THROWS_WITH(spmv_rows(a, dat, x, y, alpha, beta, &short_d, &partial), Contains("y's"));
}

TEST_CASE("spmv_rows: a block stored for some rows of y, and its share of a fused dot") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        rows_case<double, std::int32_t>(ctx, 300, 5000, 700);
        rows_case<float, std::int32_t>(ctx, 17, 40, 9);
        rows_case<double, std::int64_t>(ctx, 3000, 3100, 200);
    }
}

TEST_CASE("merge path under launch shapes: work-group sizes, steps per work-item, staged and not") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        // Power-law rows with a dense one and empty ones: tiles that start and end inside rows.
        const std::int64_t m = 1000 + std::int64_t(test::rng()() % 1000);
        auto len = power_law(m, m);
        len[0] = len[std::size_t(m - 1)] = 0;
        const auto h = generate<double, std::int32_t>(m, m, len);
        const Csr<double> a(ctx, h);
        const auto hc = generate<std::complex<float>, std::int64_t>(m, m, len);
        const Csr<std::complex<float>, std::int64_t> ac(ctx, hc);
        const unsigned most = unsigned(std::min<std::size_t>(ctx.device().info().max_work_group_size, 256));
        // A staged tile declares its row ends, products and carries in local memory: where that is
        // more than the device allows (OpenCL's minimum 32 KiB where it does not say), the shape is
        // refused before any work, naming the shape and the sizes.
        const std::size_t limit =
            ctx.device().info().static_local_memory ? std::size_t(ctx.device().info().static_local_memory) : 32768;
        // Both matrices' values take 8 bytes (double, complex<float>); the tile's local memory
        // does not depend on the index type.
        auto tile_bytes = [](const LaunchShape& s) {
            return xgpu::sparse::detail::merge_tile_bytes(s.group_size, s.items, 8);
        };
        CHECK_FALSE(a.build_ms(Format::merge_path));
        struct Case {
            unsigned g, items;
            bool staged;
        };
        // Staged tiles take at most 32 steps a work-item (their walk is unrolled step by step):
        // longer ones are refused, as are tiles past the local memory (32 / 33 / 64 at 32
        // work-items fit 48 KiB).
        for (const Case& c :
             {Case{1, 1, false}, Case{1, 5, true}, Case{32, 3, true}, Case{32, 64, false}, Case{32, 32, true},
              Case{32, 33, true}, Case{32, 64, true}, Case{96, 8, false}, Case{96, 16, true}, Case{96, 64, true},
              Case{most, 1, true}, Case{most, 8, false}, Case{most, 9, true}, Case{most, 4096, true}}) {
            if (c.g > most) continue;
            LaunchShape shape;
            shape.group_size = c.g;
            shape.items = c.items;
            shape.staged = c.staged;
            LaunchShapeScope scope(KernelFamily::merge, shape);
            const std::string what = "merge shape " + shape.key();
            INFO(what);
            const bool too_long = c.staged && c.items > 32;
            const char* why = too_long ? "at most 32 steps per work-item" : "local memory";
            if (too_long || (c.staged && tile_bytes(shape) > limit)) {
                auto x = full<double>(ctx, {std::size_t(m)}, 1.0);
                auto y = zeros<double>(ctx, {std::size_t(2 * m)});
                auto yv = y(slice(0, {}, 2)); // strided: spmv would otherwise stage it first
                REQUIRE_THROWS_WITH(spmv(a, x, yv, 1.0, 2.0, Format::merge_path),
                                    Contains("launch shape " + shape.key() + " for merge kernels") && Contains(why));
                for (double v : y.get())
                    REQUIRE(v == 0.0); // nothing ran
            } else {
                CHECK(plan_spmv(a, Format::merge_path).items == c.items);
                check<double, std::int32_t>(ctx, a, h, Format::merge_path, random_value<double>(-2, 2),
                                            random_value<double>(-2, 2), what);
            }
            if (too_long || (c.staged && tile_bytes(shape) > limit))
                REQUIRE_THROWS_WITH(plan_spmv(ac, Format::merge_path), Contains(why));
            else
                check<std::complex<float>, std::int64_t>(ctx, ac, hc, Format::merge_path,
                                                         random_value<std::complex<float>>(-2, 2),
                                                         random_value<std::complex<float>>(-2, 2), what);
        }
        // The first staged shape's tiles are kept with the matrix (its layout); the later shapes
        // above, of other tile sizes, searched their own.
        CHECK(a.build_ms(Format::merge_path));
    }
}

TEST_CASE("merge path in a 2-D grid: the last row's groups past the last tile write nothing") {
    // Past 2^30 work-items a launch is a 2-D grid whose last row may hold groups past the last
    // tile; rows of a few groups here make that case small.
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t m = 500 + std::int64_t(test::rng()() % 500);
        auto len = power_law(m, m);
        len[0] = 0;
        const auto h = generate<double, std::int32_t>(m, m, len);
        const unsigned most = unsigned(std::min<std::size_t>(ctx.device().info().max_work_group_size, 64));
        for (const bool staged : {true, false}) {
            const Csr<double> a(ctx, h);
            LaunchShape shape;
            shape.group_size = most;
            shape.items = 4;
            shape.staged = staged;
            LaunchShapeScope scope(KernelFamily::merge, shape);
            const std::uint64_t tile = std::uint64_t(most) * 4,
                                groups = (std::uint64_t(m) + std::uint64_t(h.nnz()) + tile - 1) / tile;
            REQUIRE(groups >= 3);
            // Two rows, the second short of full by 2 * row - groups >= 1 groups.
            xgpu::codegen::GridRowsScope rows(groups / 2 + 1);
            const std::string what = "merge shape " + shape.key() + " in rows of " + std::to_string(groups / 2 + 1);
            INFO(what);
            check<double, std::int32_t>(ctx, a, h, Format::merge_path, random_value<double>(-2, 2),
                                        random_value<double>(-2, 2), what);
        }
    }
}

TEST_CASE("spmv on the SuiteSparse test matrices") {
    const std::filesystem::path dir = XGPU_MATRICES_DIR;
    REQUIRE(std::filesystem::is_directory(dir));
    XGPU_FOR_EACH_CONTEXT(ctx) {
        for (const auto& e : std::filesystem::directory_iterator(dir)) {
            if (e.path().extension() != ".mtx") continue;
            const auto h = read_matrix_market<double>(e.path().string());
            all_formats(ctx, h, e.path().filename().string());
        }
    }
}

TEST_CASE("a matrix past the staged-upload size comes to the device whole; a bad one is refused as on the host") {
    // 2^20 rows of 1 to 5 entries (row_ptr 4 MiB, col_idx 12 MiB, values 24 MiB, diagonal
    // 8 MiB): past the 16 MiB from which the arrays go through staging memory in rounds of 8
    // chunks of 2 MiB, so chunks of every array, a partial last chunk and several rounds.
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::int64_t n = std::int64_t(1) << 20;
        std::vector<std::int64_t> len(static_cast<std::size_t>(n));
        for (std::size_t r = 0; r < len.size(); ++r)
            len[r] = 1 + std::int64_t(r % 5);
        const auto h = generate<double, std::int32_t>(n, n, len);
        for (const bool gpu : {false, true}) { // staged on a GPU; here on every device
            std::optional<sparse::detail::GpuPathsScope> scope;
            if (gpu) scope.emplace();
            const Csr<double> a(ctx, h);
            const auto back = a.to_host();
            CHECK(back.row_ptr == h.row_ptr);
            CHECK(back.col_idx == h.col_idx);
            CHECK(back.values == h.values);
            CHECK(a.diagonal().get() == diagonal(h));
            check<double, std::int32_t>(ctx, a, h, Format::csr_vector, 1.0, 0.0, "staged upload");
        }
        sparse::detail::GpuPathsScope staged;
        // Refused with the host check's message, before the arrays are allocated or copied.
        auto bad = h;
        bad.col_idx.back() = std::int32_t(n);
        std::string want;
        try {
            bad.validate();
        } catch (const InvalidArgument& e) {
            want = e.what();
        }
        REQUIRE(!want.empty());
        CHECK_THROWS_WITH((Csr<double>(ctx, bad)), want);
        bad = h;
        bad.row_ptr[7] = bad.row_ptr[8] + 1;
        CHECK_THROWS_WITH((Csr<double>(ctx, bad)), Contains("row pointers must not fall"));
    }
}

TEST_CASE("spmv refuses bad input before any work") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto h = generate<double, std::int32_t>(10, 8, std::vector<std::int64_t>(10, 2));
        {
            // Device scalars must be one element, on the matrix's context; checked before any work.
            Csr<double> a(ctx, h);
            auto x = zeros<double>(ctx, {8}), y = full<double>(ctx, {10}, 5.0);
            CHECK_THROWS_WITH(spmv(a, x, y, zeros<double>(ctx, {2}), zeros<double>(ctx, {})),
                              Contains("alpha must be a device scalar (one element), not an array of shape (2,)"));
            CHECK_THROWS_WITH(spmv(a, x, y, zeros<double>(ctx, {}), Array<double>()),
                              Contains("beta must be a device scalar"));
            CHECK_THROWS_AS(spmv(a, zeros<double>(ctx, {9}), y, zeros<double>(ctx, {}), zeros<double>(ctx, {})),
                            ShapeError);
            CHECK(y.get() == std::vector<double>(10, 5.0));
        }
        Csr<double> a(ctx, h);
        auto x = zeros<double>(ctx, {8}), y = zeros<double>(ctx, {10}), bad = zeros<double>(ctx, {9});
        CHECK_THROWS_AS(spmv(a, bad, y), ShapeError);
        CHECK_THROWS_WITH(spmv(a, bad, y), Contains("10x8 matrix needs x of 8 and y of 10 elements"));
        CHECK_THROWS_AS(spmv(a, x, bad), ShapeError);
        // x and y in one buffer: refused where their ranges overlap, taken where they do not
        // (numpy's may_share_memory), with the result of separate vectors.
        auto both = zeros<double>(ctx, {18});
        auto x0 = both(slice(0, 8)), y7 = both(slice(7, 17)), x1 = both(slice(1, 17, 2)), y8 = both(slice(8, 18));
        CHECK_THROWS_WITH(spmv(a, x0, y7), Contains("y shares memory with x"));
        CHECK_THROWS_WITH(spmv(a, x1, y8), Contains("y shares memory with x"));
        CHECK(both.get() == std::vector<double>(18, 0.0));
        std::vector<double> hx(8);
        for (std::size_t i = 0; i < hx.size(); ++i)
            hx[i] = 0.25 * double(i) - 1.0;
        auto xo = to_device<double>(ctx, hx), yo = zeros<double>(ctx, {10});
        // Every format writes y's elements and nothing else: x before y and guards after it stay,
        // and y is bit for bit the format's result on separate vectors (formats differ in their
        // rounding: fused multiply-adds or not, the order of a row's sums).
        auto shared = zeros<double>(ctx, {26});
        auto xs = shared(slice(0, 8)), ys = shared(slice(8, 18)), guard = shared(slice(18, 26));
        for (Format f : formats()) {
            INFO(name(f));
            spmv(a, xo, yo, 1.0, 0.0, f);
            xs.assign(xo);
            ys.fill(-7.0);
            guard.fill(3.5);
            spmv(a, xs, ys, 1.0, 0.0, f);
            CHECK(ys.get() == yo.get());
            CHECK(xs.get() == hx);
            CHECK(guard.get() == std::vector<double>(8, 3.5));
        }
        CHECK_THROWS_AS(parse_format("ell"), InvalidArgument);
        CHECK_THROWS_WITH(parse_format("ell"),
                          Contains("'ell' is not an SpMV format: automatic, csr_scalar, csr_vector, merge_path, sell, "
                                   "packeted"));
        CHECK_THROWS_WITH(parse_format("sell "), Contains("'sell ' is not an SpMV format"));
        CHECK_THROWS_WITH(parse_format(""), Contains("'' is not an SpMV format"));
        CHECK(parse_format("CSR_Vector") == Format::csr_vector);
        CHECK(parse_format("Merge_Path") == Format::merge_path);
        CHECK(parse_format("SELL") == Format::sell);
        CHECK(parse_format("Packeted") == Format::packeted);
        for (Format f : formats())
            CHECK(parse_format(name(f)) == f);
        CHECK(plan_spmv(a, Format::csr_scalar).lanes == 1);
        CHECK(plan_spmv(a, Format::csr_vector).lanes == 2);
        CHECK(plan_spmv(a, Format::merge_path).items > 0);
        const auto sell = plan_spmv(a, Format::sell);
        CHECK(sell.chunk > 0);
        CHECK(sell.sigma % sell.chunk == 0);
        // Packets need a square matrix: a rectangular one runs what automatic picks, and says so.
        CHECK(plan_spmv(a, Format::packeted).format == plan_spmv(a).format);
        const Csr<double> square(ctx, generate<double, std::int32_t>(10, 10, std::vector<std::int64_t>(10, 2)));
        const auto packeted = plan_spmv(square, Format::packeted);
        CHECK(packeted.format == Format::packeted);
        CHECK(packeted.threads > 0);
        CHECK(packeted.threads <= ctx.device().info().max_work_group_size);
        CHECK(packeted.packet_rows > 0);
        CHECK(std::uint64_t(packeted.packet_rows) * 2 * sizeof(double) <= ctx.device().info().local_memory);
    }
}

TEST_CASE("packeted reports the share of entries left to its remainder, and falls back off square matrices") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        // Power-law rows at random columns: many entries cross packets once there are several.
        const std::int64_t n = 2800;
        const auto h = generate<double, std::int32_t>(n, n, power_law(n, n));
        const Csr<double> a(ctx, h);
        CHECK_FALSE(a.remainder_share());
        CHECK_FALSE(a.build_ms(Format::packeted));
        check<double, std::int32_t>(ctx, a, h, Format::packeted, 1.5, -0.5, "packeted");
        const auto share = a.remainder_share();
        REQUIRE(share);
        CHECK(*share >= 0);
        CHECK(*share <= 1);
        REQUIRE(a.build_ms(Format::packeted));
        // 2800 f64 rows fit one packet where local memory holds 48 KiB (3072 rows), also for METIS,
        // which aims 5% under the limit: nothing crosses then.
        if (plan_spmv(a, Format::packeted).packet_rows * 19 / 20 >= n) CHECK(*share == 0);
        CHECK_FALSE(a.build_ms(Format::sell)); // only the format that ran builds
        // A rectangular matrix builds no packets.
        const auto tall = generate<double, std::int32_t>(n, n / 3, power_law(n, n / 3));
        const Csr<double> t(ctx, tall);
        CHECK(plan_spmv(t, Format::packeted).format != Format::packeted);
        check<double, std::int32_t>(ctx, t, tall, Format::packeted, 2.0, 0.0, "packeted on a tall matrix");
        CHECK_FALSE(t.remainder_share());
        CHECK_FALSE(t.build_ms(Format::packeted));
    }
}

// SELL-C-sigma as the host lays it out, straight from the definition: within each window of
// sigma rows a stable sort by descending length, padding rows (length 0, row 0) up to whole
// chunks, each chunk as wide as its longest row, column-major within the chunk, padding slots
// column 0 and value 0.
template <class T, class I>
sparse::detail::SellArrays<T, I> host_sell(const HostCsr<T, I>& h, unsigned chunk, unsigned sigma) {
    const auto rows = std::size_t(h.rows), chunks = (rows + chunk - 1) / chunk;
    const auto length = [&](std::size_t r) { return std::int64_t(h.row_ptr[r + 1] - h.row_ptr[r]); };
    sparse::detail::SellArrays<T, I> s;
    s.perm.assign(chunks * chunk, I(0));
    s.len.assign(chunks * chunk, I(0));
    std::vector<std::size_t> order(rows);
    std::iota(order.begin(), order.end(), std::size_t(0));
    for (std::size_t w = 0; w < rows; w += sigma)
        std::stable_sort(order.begin() + std::ptrdiff_t(w), order.begin() + std::ptrdiff_t(std::min(rows, w + sigma)),
                         [&](std::size_t p, std::size_t q) { return length(p) > length(q); });
    for (std::size_t p = 0; p < rows; ++p) {
        s.perm[p] = I(order[p]);
        s.len[p] = I(length(order[p]));
    }
    s.chunk_ptr.assign(chunks + 1, 0);
    for (std::size_t c = 0; c < chunks; ++c) {
        std::int64_t width = 0;
        for (std::size_t l = 0; l < chunk; ++l)
            width = std::max<std::int64_t>(width, s.len[c * chunk + l]);
        s.chunk_ptr[c + 1] = s.chunk_ptr[c] + width * chunk;
    }
    s.col.assign(std::size_t(s.chunk_ptr[chunks]), I(0));
    s.val.assign(s.col.size(), T(0));
    for (std::size_t p = 0; p < rows; ++p)
        for (std::int64_t k = 0; k < std::int64_t(s.len[p]); ++k) {
            const auto at = std::size_t(s.chunk_ptr[p / chunk] + k * chunk) + p % chunk;
            s.col[at] = h.col_idx[std::size_t(h.row_ptr[order[p]] + k)];
            s.val[at] = h.values[std::size_t(h.row_ptr[order[p]] + k)];
        }
    return s;
}

template <class T, class I>
void check_sell_arrays(const Csr<T, I>& a, const HostCsr<T, I>& h, const std::string& what) {
    for (const auto& [chunk, sigma] :
         {std::pair{8u, 64u}, std::pair{32u, 256u}, std::pair{4u, 4u}, std::pair{1u, 16u}, std::pair{16u, 512u}}) {
        INFO(what << ": " << h.rows << "x" << h.cols << ", nnz " << h.nnz() << ", C " << chunk << ", sigma " << sigma);
        const auto got = sparse::detail::sell_arrays(a, chunk, sigma);
        const auto want = host_sell(h, chunk, sigma);
        REQUIRE(got.chunk_ptr.size() == (std::size_t(h.rows) + chunk - 1) / chunk + 1);
        CHECK(got.chunk_ptr == want.chunk_ptr);
        CHECK(got.len == want.len);
        CHECK(got.perm == want.perm);
        CHECK(got.col == want.col);
        REQUIRE(got.val.size() == want.val.size());
        // Bit for bit (padding +0 included): memcmp, not ==.
        CHECK((want.val.empty() || std::memcmp(got.val.data(), want.val.data(), want.val.size() * sizeof(T)) == 0));
    }
}

template <class T, class I> void check_sell(const Context& ctx, const HostCsr<T, I>& h, const std::string& what) {
    const Csr<T, I> a(ctx, h);
    // Both fills on every device: a work-item per slot (GPUs) and per row (CPUs).
    for (const bool gpu : {false, true}) {
        std::optional<sparse::detail::GpuPathsScope> scope;
        if (gpu) scope.emplace();
        check_sell_arrays(a, h, what + (gpu ? ", GPU fill" : ""));
    }
    if (h.nnz() > 0) check<T, I>(ctx, a, h, Format::sell, T(1.5), T(-0.5), what + ", product");
}
template <class T, class I> void sell_cases(const Context& ctx) {
    check_sell<T, I>(ctx, generate<T, I>(0, 0, {}), "0x0");
    check_sell<T, I>(ctx, generate<T, I>(1, 1, {1}), "1x1");
    check_sell<T, I>(ctx, generate<T, I>(1, 700, {600}), "a single long row");
    {
        // Rows far longer than a work-group's share of the fill (thousands of slots), beside
        // short and empty rows: their chunks' slots span many work-groups, and a work-group's
        // slots many narrow chunks.
        std::vector<std::int64_t> len(700);
        for (std::size_t r = 0; r < len.size(); ++r)
            len[r] = r % 3 == 0 ? 0 : std::int64_t(r % 7);
        len[5] = 30000;
        len[300] = 12000;
        check_sell<T, I>(ctx, generate<T, I>(700, 40000, len), "rows of tens of thousands of entries");
    }
    check_sell<T, I>(ctx, generate<T, I>(37, 5, std::vector<std::int64_t>(37, 0)), "no entries");
    // Random sizes (not multiples of C or sigma), a third of the rows empty, lengths 0 to 2 sigma
    // (rows far longer than a chunk), many equal lengths (the sort must keep their order).
    for (int round = 0; round < 3; ++round) {
        const std::int64_t rows = 1 + std::int64_t(test::rng()() % 3000);
        const std::int64_t cols = round == 1 ? 1 + rows / 3 : round == 2 ? 2 * rows + 7 : rows;
        std::vector<std::int64_t> len(static_cast<std::size_t>(rows));
        for (auto& l : len)
            l = test::rng()() % 3 == 0 ? 0 : std::int64_t(test::rng()() % (test::rng()() % 8 == 0 ? 600 : 6));
        check_sell<T, I>(ctx, generate<T, I>(rows, cols, len), "random lengths, round " + std::to_string(round));
    }
    check_sell<T, I>(ctx, generate<T, I>(3001, 3001, power_law(3001, 3001)), "power-law rows");
}

TEST_CASE("SELL-C-sigma built on the device is the host's layout bit for bit") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        sell_cases<double, std::int32_t>(ctx);
        sell_cases<std::complex<float>, std::int64_t>(ctx);
        sell_cases<float, std::int64_t>(ctx);
    }
}

TEST_CASE("spmv builds a format's layout once and keeps it with the matrix") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto h = generate<double, std::int32_t>(300, 300, power_law(300, 300));
        const Csr<double> a(ctx, h);
        CHECK_FALSE(a.build_ms(Format::sell));
        check<double, std::int32_t>(ctx, a, h, Format::sell, 1.0, 0.0, "first product");
        const auto first = a.build_ms(Format::sell);
        REQUIRE(first);
        CHECK(*first >= 0);
        const Csr<double> copy = a; // copies share the layout
        REQUIRE(copy.build_ms(Format::sell));
        for (int i = 0; i < 3; ++i) {
            check<double, std::int32_t>(ctx, copy, h, Format::sell, 2.0, 0.5, "later product");
            CHECK(*a.build_ms(Format::sell) == *first); // not rebuilt
        }
        // The formats that run on the CSR arrays build nothing, but the merge path staged (its
        // default on GPUs where the tile fits local memory) keeps its tiles' first rows.
        check<double, std::int32_t>(ctx, a, h, Format::merge_path, 1.0, 0.0, "merge path");
        if (!launch_shape(ctx, KernelFamily::merge, DType::float64).staged) CHECK_FALSE(a.build_ms(Format::merge_path));
        CHECK_FALSE(a.build_ms(Format::csr_vector));
        // Another matrix builds its own.
        const Csr<double> b(ctx, h);
        CHECK_FALSE(b.build_ms(Format::sell));
        CHECK_FALSE(Csr<double>().build_ms(Format::sell));
    }
}

TEST_CASE("automatic picks csr_scalar for short even rows and a GPU format for power-law rows") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const bool cpu = ctx.device().type() == DeviceType::cpu;
        const auto even = generate<double, std::int32_t>(1000, 1000, std::vector<std::int64_t>(1000, 5));
        CHECK(plan_spmv(Csr<double>(ctx, even)).format == Format::csr_scalar);
        std::vector<std::int64_t> len(4000, 4);
        len[17] = 3000;
        const Csr<double> skewed(ctx, generate<double, std::int32_t>(4000, 4000, len));
        CHECK(plan_spmv(skewed).format == (cpu ? Format::csr_scalar : Format::merge_path));
        const Csr<double> dense_rows(ctx,
                                     generate<double, std::int32_t>(200, 200, std::vector<std::int64_t>(200, 150)));
        CHECK(plan_spmv(dense_rows).format == (cpu ? Format::csr_scalar : Format::csr_vector));
        CHECK(plan_spmv(skewed, Format::sell).format == Format::sell); // an explicit format is kept
    }
}

TEST_CASE("XGPU_SPMV_FORMAT overrides the automatic choice; junk is refused naming the formats") {
    struct ScopedFormat { // sets XGPU_SPMV_FORMAT for one scope
        std::optional<std::string> old;
        explicit ScopedFormat(const char* v) {
            if (const char* o = std::getenv("XGPU_SPMV_FORMAT")) old = o;
            ::setenv("XGPU_SPMV_FORMAT", v, 1);
        }
        ~ScopedFormat() { old ? ::setenv("XGPU_SPMV_FORMAT", old->c_str(), 1) : ::unsetenv("XGPU_SPMV_FORMAT"); }
    };
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto h = generate<double, std::int32_t>(100, 100, std::vector<std::int64_t>(100, 3));
        const Csr<double> a(ctx, h);
        {
            ScopedFormat e("Merge_Path");
            CHECK(plan_spmv(a).format == Format::merge_path);
            CHECK(plan_spmv(a, Format::sell).format == Format::sell); // an explicit format wins
            check<double, std::int32_t>(ctx, a, h, Format::automatic, 1.5, -0.5, "XGPU_SPMV_FORMAT=Merge_Path");
        }
        {
            ScopedFormat e("sell");
            check<double, std::int32_t>(ctx, a, h, Format::automatic, 1.0, 0.0, "XGPU_SPMV_FORMAT=sell");
            CHECK(a.build_ms(Format::sell));
        }
        {
            ScopedFormat e("PACKETED");
            CHECK(plan_spmv(a).format == Format::packeted);
            check<double, std::int32_t>(ctx, a, h, Format::automatic, 1.0, 0.0, "XGPU_SPMV_FORMAT=PACKETED");
            CHECK(a.remainder_share());
        }
        {
            ScopedFormat e("ellpack");
            CHECK_THROWS_AS(plan_spmv(a), InvalidArgument);
            CHECK_THROWS_WITH(plan_spmv(a), Contains("XGPU_SPMV_FORMAT='ellpack' is not valid") &&
                                                Contains("automatic, csr_scalar, csr_vector, merge_path, sell, "
                                                         "packeted"));
        }
    }
}
