// The compile cache on every backend: hits across processes, misses on any change, corrupt
// entries rebuilt, an unwritable directory costing only a warning.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support.hpp"

namespace fs = std::filesystem;
using namespace xgpu;
using Catch::Matchers::Contains;

namespace {

// A fresh cache directory for one test, set as XGPU_CACHE_DIR while the object lives.
struct TempCache {
    fs::path dir;
    TempCache() {
        dir = fs::temp_directory_path() / ("xgpu-test-cache-" + std::to_string(test::rng()()));
        fs::remove_all(dir);
        ::setenv("XGPU_CACHE_DIR", dir.c_str(), 1);
        ::unsetenv("XGPU_CACHE");
    }
    ~TempCache() {
        std::error_code ec;
        fs::remove_all(dir, ec);
        ::unsetenv("XGPU_CACHE_DIR");
    }
    std::vector<fs::path> entries() const {
        std::vector<fs::path> out;
        if (fs::exists(dir))
            for (const auto& e : fs::directory_iterator(dir))
                if (e.path().extension() == ".bin") out.push_back(e.path());
        return out;
    }
};

// Runs cache_probe in a new process on `backend` (XGPU_DEVICE, if set, is inherited) and returns
// its output.
std::string probe(const std::string& backend, const std::string& tag) {
    const std::string cmd = "XGPU_BACKEND=" + backend + " " + XGPU_CACHE_PROBE + " " + tag + " 2>&1";
    std::FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    char line[4096] = {0};
    std::string out;
    while (std::fgets(line, sizeof line, p))
        out += line;
    ::pclose(p);
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

// A fresh context on the same device: its memory cache is empty, so hits come from disk.
Context fresh(const Context& ctx) {
    return Context::create(ctx.device());
}

const char* source = "XGPU_KERNEL void fill7(XGPU_GLOBAL int32_t* a) { a[XGPU_GLOBAL_ID(0)] = 7 + K; }\n";

int run_fill7(const Program& p, const Context& ctx) {
    auto d = ctx.alloc(4 * 32);
    p.kernel("fill7").launch(ctx.queue(), Grid{32}, d);
    int out[32];
    ctx.queue().read(d, out, sizeof out);
    return out[31];
}

} // namespace

TEST_CASE("a second process loads the program from disk without compiling") {
    // Only child processes touch the device here: NVIDIA's OpenCL was seen to hide its GPU from a
    // child while the parent held a context on it.
    const char* env = std::getenv("XGPU_BACKEND");
    std::vector<std::string> names;
    if (env && *env && std::string(env) != "auto")
        names.push_back(env);
    else
        for (const auto& b : backends())
            if (b.available) names.push_back(b.name);
    REQUIRE(!names.empty());
    for (const auto& backend : names) {
        INFO("backend " << backend);
        TempCache cache;
        const std::string tag = std::to_string(test::rng()() % 100000);
        CHECK(probe(backend, tag) == "compiled ok");
        CHECK(cache.entries().size() == 1);
        CHECK(probe(backend, tag) == "disk_cache ok");
    }
}

TEST_CASE("a change of source, option or define misses the cache") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        TempCache cache;
        auto p = fresh(ctx).compile(source, {"-DK=1"});
        CHECK(p.origin() == ProgramOrigin::compiled);
        auto c = fresh(ctx);
        CHECK(c.compile(source, {"-DK=1"}).origin() == ProgramOrigin::disk_cache);
        CHECK(run_fill7(c.compile(source, {"-DK=1"}), c) == 8);
        CHECK(fresh(ctx).compile(source, {"-DK=2"}).origin() == ProgramOrigin::compiled);                    // define
        CHECK(fresh(ctx).compile(std::string(source) + " ", {"-DK=1"}).origin() == ProgramOrigin::compiled); // source
        CHECK(fresh(ctx).compile(source, {"-DK=1", "-DUNUSED"}).origin() == ProgramOrigin::compiled);        // option
        CHECK(fresh(ctx).compile_native(fresh(ctx).preamble() + "\n#line 1\n" + source, {"-DK=1"}).origin() ==
              ProgramOrigin::disk_cache); // the same full text is the same entry
        CHECK(cache.entries().size() == 4);
    }
}

TEST_CASE("a corrupt or truncated entry is detected and rebuilt") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        TempCache cache;
        fresh(ctx).compile(source, {"-DK=3"});
        auto entries = cache.entries();
        REQUIRE(entries.size() == 1);
        const auto path = entries[0];
        const auto size = fs::file_size(path);
        {
            std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(std::streamoff(size - 9));
            char c = 0;
            f.seekg(std::streamoff(size - 9));
            f.read(&c, 1);
            c = char(c ^ 0x5a);
            f.seekp(std::streamoff(size - 9));
            f.write(&c, 1);
        }
        auto c1 = fresh(ctx);
        auto p1 = c1.compile(source, {"-DK=3"});
        CHECK(p1.origin() == ProgramOrigin::compiled);
        CHECK(run_fill7(p1, c1) == 10);
        CHECK(fresh(ctx).compile(source, {"-DK=3"}).origin() == ProgramOrigin::disk_cache); // rewritten

        fs::resize_file(path, size / 2);
        auto c2 = fresh(ctx);
        auto p2 = c2.compile(source, {"-DK=3"});
        CHECK(p2.origin() == ProgramOrigin::compiled);
        CHECK(run_fill7(p2, c2) == 10);
    }
}

TEST_CASE("an unwritable cache directory gives a warning and the program still works") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        TempCache cache;
        fs::create_directories(cache.dir);
        const fs::path blocker = cache.dir / "not-a-directory";
        std::ofstream(blocker) << "a file where the cache directory should be";
        const fs::path bad = blocker / "cache";
        ::setenv("XGPU_CACHE_DIR", bad.c_str(), 1);
        std::vector<std::string> warnings;
        auto old = set_warning_handler([&](const std::string& w) { warnings.push_back(w); });
        auto c = fresh(ctx);
        auto p = c.compile(source, {"-DK=" + std::to_string(test::rng()() % 1000)});
        set_warning_handler(old);
        CHECK(p.origin() == ProgramOrigin::compiled);
        CHECK(run_fill7(p, c) >= 7);
        REQUIRE(warnings.size() == 1);
        CHECK_THAT(warnings[0], Contains(bad.string()));
    }
}

TEST_CASE("XGPU_CACHE=off writes nothing") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        TempCache cache;
        ::setenv("XGPU_CACHE", "off", 1);
        CHECK(fresh(ctx).compile(source, {"-DK=5"}).origin() == ProgramOrigin::compiled);
        CHECK(fresh(ctx).compile(source, {"-DK=5"}).origin() == ProgramOrigin::compiled);
        ::unsetenv("XGPU_CACHE");
        CHECK(cache.entries().empty());
    }
}
