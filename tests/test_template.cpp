// KernelTemplate: one source, a kernel per set of parameter values, each checked on every backend
// against the host; variants keyed by their values; bad names and values refused.
#include <xgpu/template.hpp>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using test::random_vector;

namespace {

// y[i] = SCALE * x[i] for UNROLL consecutive elements per work-item, in type T.
const char* source = R"(
XGPU_KERNEL void scale(XGPU_GLOBAL T* y, XGPU_GLOBAL const T* x, const uint64_t n) {
    const uint64_t first = (uint64_t)XGPU_GLOBAL_ID(0) * UNROLL;
    for (int k = 0; k < UNROLL; ++k)
        if (first + k < n) y[first + k] = (T)SCALE * x[first + k];
})";

template <class T>
void check(const Context& ctx, const KernelTemplate& family, const char* type, int unroll, int scale) {
    const std::size_t n = 1000 + test::rng()() % 3000;
    const auto h = random_vector<T>(n, T(-100), T(100));
    auto x = ctx.alloc(n * sizeof(T)), y = ctx.alloc(n * sizeof(T));
    auto q = ctx.queue();
    q.write(x, h.data(), n * sizeof(T));
    const auto k = family.get({{"UNROLL", unroll}, {"T", type}, {"SCALE", scale}});
    const std::size_t items = (n + std::size_t(unroll) - 1) / std::size_t(unroll);
    k.launch(q, Grid{(items + 63) / 64 * 64, 64}, y, x, std::uint64_t(n));
    std::vector<T> got(n);
    q.read(y, got.data(), n * sizeof(T));
    for (std::size_t i = 0; i < n; ++i)
        REQUIRE(got[i] == T(scale) * h[i]);
}

} // namespace

TEST_CASE("a kernel template compiles one kernel per set of values") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        KernelTemplate family(ctx, source, "scale");
        for (int unroll : {1, 4, 7})
            for (int scale : {2, -3}) {
                check<std::int32_t>(ctx, family, "int32_t", unroll, scale);
                check<float>(ctx, family, "float", unroll, scale);
                if (ctx.device().has_fp64()) check<double>(ctx, family, "double", unroll, scale);
            }
        // The same values, in any order, give the same kernel; other values another.
        const auto a = family.get({{"T", "float"}, {"UNROLL", 4}, {"SCALE", 2}});
        const auto b = family.get({{"SCALE", 2}, {"UNROLL", 4}, {"T", "float"}});
        const auto c = family.get({{"T", "float"}, {"UNROLL", 2}, {"SCALE", 2}});
        CHECK(a.impl() == b.impl());
        CHECK(a.impl() != c.impl());
        CHECK(KernelTemplate::definitions({{"B", 1}, {"A", "x"}}) ==
              std::vector<std::string>{"#define A x", "#define B 1"});
        CHECK(KernelTemplate::definitions({{"X", 2.5}, {"Y", std::int64_t(-7)}}) ==
              std::vector<std::string>{"#define X 2.5", "#define Y -7"});
        // Refused before compiling.
        for (const char* bad : {"float; int", "float\n#define X", "float  x", "x)", ""})
            CHECK_THROWS_WITH(family.get({{"T", bad}, {"UNROLL", 1}, {"SCALE", 1}}), Contains("is not a name"));
        check<std::uint32_t>(ctx, family, "unsigned int", 3, 5); // a type name of two words
        CHECK_THROWS_WITH(family.get({{"T x", "float"}}), Contains("parameter name"));
        CHECK_THROWS_WITH(family.get({{"T", "float"}, {"T", "double"}}), Contains("given twice"));
        // A missing parameter is the compiler's error, with the log.
        CHECK_THROWS_AS(family.get({{"T", "float"}, {"UNROLL", 2}}), CompileError);
        CHECK_THROWS_AS(KernelTemplate(ctx, source, "not a name"), InvalidArgument);
    }
}
