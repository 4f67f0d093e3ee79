// The XGPU_* environment variables: every accepted spelling, and junk refused with an error that
// names the variable, the value and what is accepted (core/src/env.hpp). Values read once per
// process (XGPU_PROFILE) are checked through their parse function.
#include <cstdlib>
#include <optional>
#include <string>

#include "env.hpp"
#include "support.hpp"
#include "xgpu/scan.hpp"

using namespace xgpu;
namespace env = xgpu::detail::env;
using Catch::Matchers::Contains;

namespace {

// Sets (or, with nullptr, unsets) an environment variable for one scope.
struct ScopedEnv {
    std::string name;
    std::optional<std::string> old;
    ScopedEnv(const char* n, const char* value) : name(n) {
        if (const char* o = std::getenv(n)) old = o;
        value ? ::setenv(n, value, 1) : ::unsetenv(n);
    }
    ~ScopedEnv() { old ? ::setenv(name.c_str(), old->c_str(), 1) : ::unsetenv(name.c_str()); }
};

const char* const switch_on[] = {"on", "ON", "On", "1", "true", "TRUE", "True", "yes", "YES", "yEs"};
const char* const switch_off[] = {"off", "OFF", "Off", "0", "false", "FALSE", "no", "NO", "nO"};
const char* const switch_junk[] = {"maybe", "2",          "-1",     "00", "10", " on", "on ", "onn",    "o",
                                   "of",    "yes please", "enable", "t",  "y",  "n",   "\t",  "o\xffn", "true\n"};

} // namespace

TEST_CASE("on/off words: every accepted spelling, junk refused naming the variable, value and words") {
    for (const char* v : switch_on)
        CHECK(env::parse_switch("XGPU_POOL", v));
    for (const char* v : switch_off)
        CHECK_FALSE(env::parse_switch("XGPU_POOL", v));
    for (const char* v : switch_junk) {
        INFO("value '" << v << "'");
        CHECK_THROWS_AS(env::parse_switch("XGPU_PROFILE", v), InvalidArgument);
        CHECK_THROWS_WITH(env::parse_switch("XGPU_PROFILE", v), Contains("XGPU_PROFILE") &&
                                                                    Contains(std::string("'") + v + "'") &&
                                                                    Contains("on, off") && Contains("yes and no"));
    }
}

TEST_CASE("XGPU_CACHE, XGPU_POOL and XGPU_PROFILE: set, unset, empty and junk") {
    struct Var {
        const char* name;
        bool (*read)();
        bool unset;
    };
    for (const Var& v : {Var{"XGPU_CACHE", env::cache_enabled, true}, Var{"XGPU_POOL", env::pool_enabled, true},
                         Var{"XGPU_PROFILE", env::profile_enabled, false}}) {
        INFO(v.name);
        {
            ScopedEnv e(v.name, nullptr);
            CHECK(v.read() == v.unset);
        }
        {
            ScopedEnv e(v.name, ""); // empty is unset
            CHECK(v.read() == v.unset);
        }
        for (const char* on : switch_on) {
            ScopedEnv e(v.name, on);
            CHECK(v.read());
        }
        for (const char* off : switch_off) {
            ScopedEnv e(v.name, off);
            CHECK_FALSE(v.read());
        }
        for (const char* junk : switch_junk) {
            ScopedEnv e(v.name, junk);
            CHECK_THROWS_WITH(v.read(), Contains(v.name) && Contains(junk));
        }
    }
}

TEST_CASE("XGPU_POOL and XGPU_CACHE reach the contexts and the compile cache") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        {
            ScopedEnv e("XGPU_POOL", "Off");
            CHECK_FALSE(Context::create(ctx.device()).pool().enabled());
        }
        {
            ScopedEnv e("XGPU_POOL", "YES");
            CHECK(Context::create(ctx.device()).pool().enabled());
        }
        {
            ScopedEnv e("XGPU_POOL", "sometimes");
            CHECK_THROWS_AS(Context::create(ctx.device()), InvalidArgument);
            CHECK_THROWS_WITH(Context::create(ctx.device()), Contains("XGPU_POOL") && Contains("sometimes"));
        }
        const std::string src = "XGPU_KERNEL void k(XGPU_GLOBAL int32_t* a) { a[XGPU_GLOBAL_ID(0)] = " +
                                std::to_string(test::rng()() % 100000) + "; }";
        {
            ScopedEnv e("XGPU_CACHE", "disabled");
            CHECK_THROWS_WITH(Context::create(ctx.device()).compile(src),
                              Contains("XGPU_CACHE") && Contains("disabled"));
        }
        {
            ScopedEnv e("XGPU_CACHE", "FALSE");
            CHECK(Context::create(ctx.device()).compile(src).origin() == ProgramOrigin::compiled);
            CHECK(Context::create(ctx.device()).compile(src).origin() == ProgramOrigin::compiled);
        }
    }
}

TEST_CASE("XGPU_BACKEND: cuda, opencl or auto in any case; junk names the accepted values") {
    CHECK(env::parse_backend("cuda") == "cuda");
    CHECK(env::parse_backend("CUDA") == "cuda");
    CHECK(env::parse_backend("OpenCL") == "opencl");
    CHECK(env::parse_backend("Auto") == "auto");
    for (const char* junk : {"metal", "vulkan", "cuda ", " opencl", "open cl", "cud", "autox", "1", "\x01"}) {
        INFO("'" << junk << "'");
        CHECK_THROWS_AS(env::parse_backend(junk), InvalidArgument);
        CHECK_THROWS_WITH(env::parse_backend(junk),
                          Contains("XGPU_BACKEND") && Contains(junk) && Contains("cuda, opencl and auto"));
    }
    {
        ScopedEnv b("XGPU_BACKEND", nullptr);
        CHECK(env::backend() == "auto");
    }
    {
        ScopedEnv b("XGPU_BACKEND", "");
        CHECK(env::backend() == "auto");
    }
    {
        ScopedEnv b("XGPU_BACKEND", "OPENCL");
        CHECK(env::backend() == "opencl");
        ScopedEnv d("XGPU_DEVICE", nullptr);
        bool opencl = false;
        for (const auto& s : backends())
            opencl = opencl || (s.name == "opencl" && s.available);
        if (opencl) CHECK(Context::from_env().backend() == "opencl");
    }
    {
        ScopedEnv b("XGPU_BACKEND", "metal");
        CHECK_THROWS_AS(Context::from_env(), InvalidArgument);
        CHECK_THROWS_WITH(Context::from_env(), Contains("XGPU_BACKEND") && Contains("metal"));
    }
}

TEST_CASE("XGPU_DEVICE is free text, kept as given") {
    {
        ScopedEnv d("XGPU_DEVICE", nullptr);
        CHECK(env::device().empty());
    }
    ScopedEnv d("XGPU_DEVICE", " NVIDIA H200 #1 ");
    CHECK(env::device() == " NVIDIA H200 #1 ");
}

TEST_CASE("XGPU_SCAN_TILE: <wg>x<k>[s|d] parsed in full, products checked in 64 bits") {
    const auto tile = env::parse_scan_tile("256x8s");
    CHECK(tile.wg == 256);
    CHECK(tile.k == 8);
    CHECK(tile.staged == std::optional<bool>(true));
    CHECK(env::parse_scan_tile("2x1024d").staged == std::optional<bool>(false));
    CHECK_FALSE(env::parse_scan_tile("4x6").staged.has_value());
    CHECK(env::parse_scan_tile("1x2s").wg == 1);
    CHECK(env::parse_scan_tile("1X3D").k == 3);
    CHECK(env::parse_scan_tile("1024x1024").k == 1024); // 2^20 elements: the largest tile
    CHECK(env::parse_scan_tile("1x1048576d").k == 1048576);
    CHECK(env::parse_scan_tile("0016x08").wg == 16);
    for (const char* junk : {"2x2147483649d",
                             "4x-2",
                             "16x8sjunk",
                             "3x4",
                             "0x8",
                             "1x1",
                             "1x0",
                             "2048x2",
                             "1024x1025",
                             "2x1048576",
                             "x8",
                             "8x",
                             "8",
                             "",
                             "+8x2",
                             " 8x2",
                             "8x2 ",
                             "8y2",
                             "8x2q",
                             "8x2ss",
                             "8xx2",
                             "8x+2",
                             "8x2.0",
                             "-8x2",
                             "99999999999999999999999x1",
                             "8x99999999999999999999",
                             "4294967296x1",
                             "4x4294967297s",
                             "\xff"}) {
        INFO("'" << junk << "'");
        CHECK_THROWS_AS(env::parse_scan_tile(junk), InvalidArgument);
        CHECK_THROWS_WITH(env::parse_scan_tile(junk), Contains("XGPU_SCAN_TILE") && Contains(junk) &&
                                                          Contains("power of two") && Contains("1048576"));
    }
    {
        ScopedEnv t("XGPU_SCAN_TILE", "");
        CHECK_FALSE(env::scan_tile().has_value());
    }
    {
        ScopedEnv t("XGPU_SCAN_TILE", "64x4D");
        REQUIRE(env::scan_tile().has_value());
        CHECK(env::scan_tile()->wg == 64);
    }
}

TEST_CASE("XGPU_SCAN_TILE reaches the scans: junk is refused before anything runs, a valid tile scans right") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const std::size_t n = 100000;
        auto ones = xgpu::ones<std::int32_t>(ctx, {n});
        {
            // The product wrapped in 32 bits before: the tile passed and cumsum returned 0.
            ScopedEnv t("XGPU_SCAN_TILE", "2x2147483649d");
            const auto before = ctx.launch_count();
            CHECK_THROWS_WITH(cumsum(ones), Contains("XGPU_SCAN_TILE") && Contains("2x2147483649d"));
            CHECK(ctx.launch_count() == before);
        }
        {
            ScopedEnv t("XGPU_SCAN_TILE", "16x8sjunk");
            CHECK_THROWS_AS(cumsum(ones), InvalidArgument);
        }
        {
            ScopedEnv t("XGPU_SCAN_TILE", "4x32D");
            const auto got = cumsum(ones).get();
            REQUIRE(got.size() == n);
            CHECK(got.back() == std::int64_t(n));
            CHECK(got[12345] == 12346);
        }
        ctx.queue().finish();
    }
}

TEST_CASE("XGPU_SPMV_FORMAT: one of the words it is given in any case, returned as given; junk names them") {
    const std::string_view words[] = {"automatic", "csr_scalar", "merge_path"};
    CHECK(env::parse_spmv_format("merge_path", words) == "merge_path");
    CHECK(env::parse_spmv_format("MERGE_Path", words) == "merge_path");
    CHECK(env::parse_spmv_format("Automatic", words) == "automatic");
    for (const char* v : {"merge", "merge_path ", "", "csr", "csr_scalar\n", "sell"}) {
        INFO("value '" << v << "'");
        CHECK_THROWS_AS(env::parse_spmv_format(v, words), InvalidArgument);
        CHECK_THROWS_WITH(env::parse_spmv_format(v, words), Contains(std::string("XGPU_SPMV_FORMAT='") + v + "'") &&
                                                                Contains("automatic, csr_scalar, merge_path"));
    }
    {
        ScopedEnv e("XGPU_SPMV_FORMAT", nullptr);
        CHECK_FALSE(env::spmv_format(words));
    }
    {
        ScopedEnv e("XGPU_SPMV_FORMAT", "");
        CHECK_FALSE(env::spmv_format(words));
    }
    {
        ScopedEnv e("XGPU_SPMV_FORMAT", "CSR_SCALAR");
        CHECK(env::spmv_format(words) == "csr_scalar");
    }
    {
        ScopedEnv e("XGPU_SPMV_FORMAT", "ell");
        CHECK_THROWS_WITH(env::spmv_format(words), Contains("XGPU_SPMV_FORMAT='ell' is not valid"));
    }
}
