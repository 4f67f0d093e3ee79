// Backend and device selection: XGPU_BACKEND, XGPU_DEVICE, and clear errors when they cannot be met.
#include <cctype>
#include <cstdlib>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;

namespace {
// Sets an environment variable for one scope, restoring the old value after.
struct EnvVar {
    std::string name, old;
    bool had;
    EnvVar(const char* n, const char* value) : name(n) {
        const char* o = std::getenv(n);
        had = o != nullptr;
        if (had) old = o;
        ::setenv(n, value, 1);
    }
    ~EnvVar() { had ? (void)::setenv(name.c_str(), old.c_str(), 1) : (void)::unsetenv(name.c_str()); }
};
} // namespace

TEST_CASE("every compiled-in backend is listed, with devices or a reason") {
    const auto names = backend_names();
    CHECK(std::find(names.begin(), names.end(), "opencl") != names.end());
    const auto all = backends();
    REQUIRE(all.size() == names.size());
    for (const auto& b : all) {
        INFO(b.name << ": " << b.reason);
        if (b.available) {
            CHECK(!b.devices.empty());
            for (std::size_t i = 0; i < b.devices.size(); ++i) {
                CHECK(b.devices[i].index() == int(i));
                CHECK(b.devices[i].backend() == b.name);
                CHECK(!b.devices[i].name().empty());
                CHECK(b.devices[i].global_memory() > 0);
            }
        } else {
            CHECK(!b.reason.empty());
        }
        if (b.name == "cuda" && !b.available) CHECK_THAT(b.reason, Contains("libcuda.so.1") || Contains("CUDA_ERROR"));
    }
}

TEST_CASE("an unknown backend name is an error listing the valid names") {
    CHECK_THROWS_AS(Context::create("vulkan"), InvalidArgument);
    CHECK_THROWS_WITH(Context::create("vulkan"), Contains("vulkan") && Contains("opencl") && Contains("auto"));
    EnvVar b("XGPU_BACKEND", "metal");
    CHECK_THROWS_WITH(Context::from_env(), Contains("metal") && Contains("XGPU_BACKEND"));
}

TEST_CASE("a backend that cannot start names what is missing; auto does not fall silently") {
    for (const auto& b : backends()) {
        if (b.available) continue;
        CHECK_THROWS_AS(Context::create(b.name), BackendUnavailable);
        if (b.name == "cuda")
            CHECK_THROWS_WITH(Context::create("cuda"), Contains("libcuda.so.1") || Contains("CUDA_ERROR"));
    }
    // auto takes the first available backend in order.
    const auto all = backends();
    const auto first = std::find_if(all.begin(), all.end(), [](const BackendStatus& s) { return s.available; });
    REQUIRE(first != all.end());
    CHECK(Context::create("auto").backend() == first->name);
    CHECK(Context::create("").backend() == first->name);
}

TEST_CASE("XGPU_DEVICE selects by index or by case-insensitive name") {
    for (const auto& b : backends()) {
        if (!b.available) continue;
        const auto& last = b.devices.back();
        CHECK(Context::create(b.name, std::to_string(last.index())).device().name() == last.name());
        std::string upper = last.name();
        for (auto& c : upper)
            c = char(std::toupper(static_cast<unsigned char>(c)));
        CHECK(Context::create(b.name, upper.substr(0, std::min<std::size_t>(upper.size(), 6))).device().backend() ==
              b.name);
        {
            EnvVar eb("XGPU_BACKEND", b.name.c_str());
            EnvVar ed("XGPU_DEVICE", std::to_string(last.index()).c_str());
            CHECK(Context::from_env().device().name() == last.name());
        }
        CHECK_THROWS_AS(Context::create(b.name, "no-such-device-anywhere"), InvalidArgument);
        CHECK_THROWS_WITH(Context::create(b.name, "no-such-device-anywhere"),
                          Contains("no-such-device-anywhere") && Contains(b.devices.front().name()));
        CHECK_THROWS_AS(Context::create(b.name, "999"), InvalidArgument);
    }
}

TEST_CASE("each context reports its device") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto& d = ctx.device().info();
        CHECK(d.backend == ctx.backend());
        CHECK(!d.name.empty());
        CHECK(!d.driver_version.empty());
        CHECK(!d.compiler_version.empty());
        CHECK(d.compute_units > 0);
        CHECK(d.max_work_group_size > 0);
        CHECK(d.local_memory > 0);
    }
}
