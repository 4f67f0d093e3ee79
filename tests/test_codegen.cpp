// The code-generation module (core/src/codegen): keys from the one-pass operand protocol, the
// operation table, the source builder, skeleton hooks, launch shapes, and the generated text of a
// few small expressions against golden files in tests/golden (a change to generation shows up in
// review; XGPU_UPDATE_GOLDEN=1 rewrites them). Results under several launch shapes are checked on
// every backend against the host.
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <tuple>

#include <xgpu/codegen.hpp>
#include <xgpu/reduction.hpp>
#include <xgpu/scan.hpp>

#include "codegen/elementwise.hpp"
#include "codegen/expression.hpp"
#include "codegen/operations.hpp"
#include "codegen/skeleton.hpp"
#include "context_shared.hpp"
#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using test::random_vector;

namespace {

std::string key_of(const detail::Node& n, const Shape& shape) {
    return codegen::lower(n, shape, nullptr, codegen::Want::key_and_arguments).key;
}

// Parameters declared, counted from the declarations (each ends with ", ").
std::size_t declared(const std::string& params) {
    std::size_t n = 0;
    for (std::size_t at = params.find(", "); at != std::string::npos; at = params.find(", ", at + 2))
        ++n;
    return n;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The kernel's text with kernels/array.h (which every elementwise kernel includes) left out.
std::string kernel_text(std::string source) {
    const std::string_view array_h = codegen::kernel_file("array.h");
    const std::size_t at = source.find(array_h);
    REQUIRE(at != std::string::npos);
    return source.replace(at, array_h.size(), "/* kernels/array.h */\n");
}

void check_golden(const std::string& name, const std::string& text) {
    const std::string path = std::string(XGPU_GOLDEN_DIR) + "/" + name;
    if (const char* u = std::getenv("XGPU_UPDATE_GOLDEN"); u && std::string(u) == "1") {
        std::ofstream(path) << text;
        WARN("rewrote " << path);
        return;
    }
    INFO("golden file " << path << " (XGPU_UPDATE_GOLDEN=1 rewrites it after review)");
    REQUIRE(text == read_file(path));
}

} // namespace

TEST_CASE("keys follow structure, types, layouts and sharing, never values") {
    const Context& ctx = test::contexts().front();
    auto x = to_device<double>(ctx, random_vector<double>(64, -1.0, 1.0));
    auto y = to_device<double>(ctx, random_vector<double>(64, -1.0, 1.0));
    auto xf = to_device<float>(ctx, random_vector<float>(64, -1.0f, 1.0f));
    auto m = to_device<double>(ctx, random_vector<double>(64, -1.0, 1.0)).reshape({8, 8});
    const Shape s{64};

    // Equal structure: equal keys, whatever the scalars' values and the arrays' memory.
    CHECK(key_of(*(2.0 * x + y).node(), s) == key_of(*(3.5 * y + x).node(), s));
    // Types, operations and structure change it.
    CHECK(key_of(*(2.0 * x + y).node(), s) != key_of(*(2.0f * xf + y).node(), s));
    CHECK(key_of(*(2.0 * x + y).node(), s) != key_of(*(2.0 * x - y).node(), s));
    CHECK(key_of(*(2.0 * x + y).node(), s) != key_of(*(x * 2.0 + y).node(), s));
    // A repeated operand is one operand: x + x differs from x + y, and loads x once.
    CHECK(key_of(*(x + x).node(), s) != key_of(*(x + y).node(), s));
    const auto shared = codegen::lower(*(2.0 * x + sin(x)).node(), s, nullptr, codegen::Want::everything);
    CHECK(shared.args.size() == 3); // p1, o1 and the scalar
    CHECK(declared(shared.params) == shared.args.size());
    CHECK(shared.body.find("p1[") == shared.body.rfind("p1["));
    // Layouts: a transposed view is strided, the contiguous matrix is not.
    const Shape s2{8, 8};
    CHECK(key_of(*(m + 1.0).node(), s2) != key_of(*(m.transpose() + 1.0).node(), s2));
    const auto strided = codegen::lower(*(m.transpose() + 1.0).node(), s2, nullptr, codegen::Want::everything);
    CHECK(declared(strided.params) == strided.args.size());
    CHECK_THAT(strided.key, Contains("|nd2"));
    // Key-only lowering (the warm path) gives the same key and the same arguments.
    const auto warm = codegen::lower(*(m.transpose() + 1.0).node(), s2, nullptr, codegen::Want::key_and_arguments);
    CHECK(warm.key == strided.key);
    REQUIRE(warm.args.size() == strided.args.size());
    CHECK(warm.params.empty());
}

TEST_CASE("the operation table") {
    CHECK(codegen::operation("add", 2).name == "add");
    CHECK(codegen::result_type(codegen::operation("div", 2), DType::int32, DType::int32, DType::int32) ==
          DType::float64);
    CHECK(codegen::result_type(codegen::operation("lt", 2), DType::float32, DType::int64, DType::int64) ==
          DType::bool_);
    CHECK(codegen::result_type(codegen::operation("abs", 1), DType::complex64, DType::complex64, DType::complex64) ==
          DType::float32);
    CHECK(codegen::result_type(codegen::operation("sin", 1), DType::int16, DType::int16, DType::int16) ==
          DType::float32);
    CHECK_THROWS_WITH(codegen::operation("frobnicate", 2), Contains("no array operation named 'frobnicate'"));
    CHECK_THROWS_WITH(codegen::operation("sin", 2), Contains("takes 1 operands, not 2"));
    // Operations not defined for complex operands say so, before any kernel is made.
    const Context& ctx = test::contexts().front();
    auto c = to_device<std::complex<double>>(ctx, std::vector<std::complex<double>>(4));
    auto r = empty<std::complex<double>>(ctx, {4});
    CHECK_THROWS_WITH(r = maximum(c, c), Contains("maximum is not defined for complex128 arrays"));
}

TEST_CASE("the source builder") {
    codegen::Source s;
    s.kernel("scale").param("XGPU_GLOBAL double*", "x").param("const double", "a").body();
    s.line("const uint64_t i = XGPU_GLOBAL_ID(0);");
    s.open("if (i < 10)").line("x[i] *= a;\nx[i] += 1.0;").close();
    s.close();
    CHECK(s.str() == "XGPU_KERNEL void scale(XGPU_GLOBAL double* x, const double a) {\n"
                     "    const uint64_t i = XGPU_GLOBAL_ID(0);\n"
                     "    if (i < 10) {\n"
                     "        x[i] *= a;\n"
                     "        x[i] += 1.0;\n"
                     "    }\n"
                     "}\n");
    codegen::Source f;
    f.function("double", "one").body().line("return 1.0;").close();
    CHECK(f.str() == "XGPU_DEVICE_FN double one(void) {\n    return 1.0;\n}\n");
    CHECK_THROWS(codegen::Source().close());
    CHECK_THROWS(codegen::Source().param("int", "x"));
}

TEST_CASE("skeleton hooks are filled exactly") {
    auto fill = [](std::initializer_list<codegen::Hook> extra) {
        std::vector<codegen::Hook> hooks{{"preamble", "/*P*/"}, {"group_size", "64"}, {"items", "1"},
                                         {"guard", "1"},        {"name", "k"},        {"params", ""},
                                         {"index", "i"},        {"body", "/*B*/"}};
        hooks.insert(hooks.end(), extra);
        return codegen::fill("stream.kernel", hooks);
    };
    const std::string text = fill({});
    CHECK_THAT(text, Contains("/*P*/"));
    CHECK_THAT(text, Contains("/*B*/"));
    CHECK(text.find("${") == std::string::npos);
    CHECK_THROWS_WITH(codegen::fill("stream.kernel", {{"preamble", ""}}), Contains("is not filled"));
    CHECK_THROWS_WITH(fill({{"extra", ""}}), Contains("has no hook 'extra'"));
}

TEST_CASE("generated kernel text matches the golden files") {
    const Context& ctx = test::contexts().front();
    auto x = to_device<double>(ctx, std::vector<double>(16));
    auto y = empty<double>(ctx, {16});
    LaunchShape shape;
    shape.group_size = 256;
    shape.items = 4;
    check_golden("elementwise_2x_plus_sin_x.txt",
                 kernel_text(codegen::elementwise_source(ctx, *(2.0 * x + sin(x)).node(), y.desc(), shape)));

    // Broadcasting a row over a matrix view, with a bool mask and a float32 operand.
    auto m = to_device<float>(ctx, std::vector<float>(12)).reshape({3, 4});
    auto row = to_device<float>(ctx, std::vector<float>(4));
    auto out = empty<float>(ctx, {4, 3});
    LaunchShape cpu;
    cpu.group_size = 256;
    cpu.whole_groups = true;
    check_golden(
        "elementwise_where_broadcast.txt",
        kernel_text(codegen::elementwise_source(
            ctx, *where(m.transpose() > 0.0f, m.transpose(), row.reshape({4, 1}) * 0.5f).node(), out.desc(), cpu)));

    // Integer floor modulo (numpy's sign rule, x % 0 == 0).
    auto a = to_device<std::int32_t>(ctx, std::vector<std::int32_t>(8));
    auto r = empty<std::int32_t>(ctx, {8});
    check_golden("elementwise_int_mod.txt",
                 kernel_text(codegen::elementwise_source(ctx, *(a % 7).node(), r.desc(), shape)));
}

TEST_CASE("every launch shape computes the same result") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = 1000 + test::rng()() % 5000;
        const auto hx = random_vector<double>(n, -3.0, 3.0);
        auto x = to_device(ctx, hx);
        auto y = empty<double>(ctx, {n});
        auto& generated = ctx.shared().generated;
        std::vector<LaunchShape> shapes;
        for (unsigned g : {32u, 64u, 256u})
            for (unsigned items : {1u, 2u, 3u, 4u, 8u})
                shapes.push_back({g, items});
        // Vector widths: runs of 2 to 8 consecutive elements per item, guarded and whole groups.
        for (unsigned v : {2u, 4u, 8u})
            for (unsigned items : {1u, 3u}) {
                LaunchShape s{64, items};
                s.vector = v;
                shapes.push_back(s);
            }
        LaunchShape whole{32, 1};
        whole.whole_groups = true;
        whole.vector = 4;
        shapes.push_back(whole);
        for (const LaunchShape& shape : shapes) {
            if (shape.group_size > ctx.device().info().max_work_group_size) continue;
            const std::size_t before = generated.size();
            Array<double> z = zeros<double>(ctx, {n / 2});
            {
                LaunchShapeScope scope(KernelFamily::elementwise, shape);
                y = 2.0 * x + sin(x);
                z = x(slice(0, std::int64_t(n / 2 * 2), 2)) -
                    x(slice({}, {}, -2))(slice(0, std::int64_t(n / 2))); // views
            }
            INFO("shape " << shape.key());
            CHECK(generated.size() == before + 2); // each shape is a kernel of its own
            const auto got = y.get();
            for (std::size_t i = 0; i < n; ++i)
                REQUIRE(std::abs(got[i] - (2.0 * hx[i] + std::sin(hx[i]))) <= 1e-14 * (1 + std::abs(got[i])));
            const auto gz = z.get();
            for (std::size_t i = 0; i < n / 2; ++i)
                REQUIRE(gz[i] == hx[2 * i] - hx[n - 1 - 2 * i]);
        }
        // A shape the device cannot run is refused before anything is generated.
        LaunchShape bad;
        bad.items = 0;
        LaunchShapeScope scope(KernelFamily::elementwise, bad);
        CHECK_THROWS_WITH(y = 2.0 * x, Contains("no elements per work-item"));
        LaunchShape huge;
        huge.group_size = unsigned(ctx.device().info().max_work_group_size) * 2;
        LaunchShapeScope scope2(KernelFamily::elementwise, huge);
        CHECK_THROWS_WITH(y = 2.0 * x, Contains("the device allows work-groups of at most"));
        LaunchShape wide;
        wide.vector = 3;
        LaunchShapeScope scope3(KernelFamily::elementwise, wide);
        CHECK_THROWS_WITH(y = 2.0 * x, Contains("vector width of an elementwise kernel is 1, 2, 4 or 8"));
    }
}

TEST_CASE("reductions and scans compute the same result in every launch shape") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = 3000 + test::rng()() % 20000;
        const auto hx = random_vector<double>(n, -1.0, 1.0), hy = random_vector<double>(n, -1.0, 1.0);
        const auto hi = random_vector<std::int64_t>(n, -100, 100);
        auto x = to_device(ctx, hx), y = to_device(ctx, hy);
        auto k = to_device(ctx, hi);
        double dot_ref = 0, max_ref = hx[0];
        std::size_t argmax_ref = 0;
        for (std::size_t i = 0; i < n; ++i) {
            dot_ref += hx[i] * hy[i];
            if (hx[i] > max_ref) max_ref = hx[i], argmax_ref = i;
        }
        const std::size_t max_wg = ctx.device().info().max_work_group_size;
        // The GPU shape (grid-stride, 4 accumulators), the CPU shape (blocked, 8), and others.
        // A shape of `g` work-items and `items` items, blocked or staged as the family means it.
        auto make_shape = [](unsigned g, unsigned items, bool blocked, bool staged) {
            LaunchShape shape;
            shape.group_size = g;
            shape.items = items;
            shape.blocked = blocked;
            shape.staged = staged;
            return shape;
        };
        for (const auto& [g, items, blocked] :
             {std::tuple{256u, 4u, false}, std::tuple{256u, 8u, true}, std::tuple{64u, 1u, false},
              std::tuple{128u, 3u, true}, std::tuple{32u, 5u, false}, std::tuple{16u, 2u, false}}) {
            if (g > max_wg) continue;
            const LaunchShape shape = make_shape(g, items, blocked, false);
            INFO("reduction shape " << shape.key());
            LaunchShapeScope scope(KernelFamily::reduction, shape);
            CHECK(std::abs(dot(x, y).get() - dot_ref) <= 1e-12 * double(n));
            CHECK(max(x).get() == max_ref);
            CHECK(argmax(x).get() == std::int64_t(argmax_ref));
            CHECK(sum(k).get() == std::accumulate(hi.begin(), hi.end(), std::int64_t(0)));
        }
        // Scan tiles: staged (GPUs) and direct (CPUs), with several runs and sub-runs.
        std::vector<std::int64_t> prefix(n);
        std::partial_sum(hi.begin(), hi.end(), prefix.begin());
        for (const auto& [g, items, staged] :
             {std::tuple{256u, 4u, true}, std::tuple{64u, 16u, true}, std::tuple{2u, 8192u, false},
              std::tuple{4u, 6u, false}, std::tuple{32u, 3u, false}}) {
            if (g > max_wg) continue;
            const LaunchShape shape = make_shape(g, items, false, staged);
            INFO("scan shape " << shape.key());
            LaunchShapeScope scope(KernelFamily::scan, shape);
            REQUIRE(cumsum(k).get() == prefix);
        }
        // Shapes a family cannot run are refused before any work.
        LaunchShape odd;
        odd.group_size = 96;
        LaunchShapeScope scope(KernelFamily::reduction, odd);
        CHECK_THROWS_WITH(sum(x), Contains("must be a power of two"));
    }
}
