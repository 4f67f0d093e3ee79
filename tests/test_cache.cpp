// The compile cache on every backend: hits across processes, misses on any change, corrupt
// entries rebuilt, an unwritable directory costing only a warning, a directory other users can
// write not trusted.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using namespace xgpu;
using Catch::Matchers::Contains;

namespace {

// A fresh cache directory for one test, set as XGPU_CACHE_DIR while the object lives.
struct TempCache : test::TempCacheDir {
    TempCache() : TempCacheDir("xgpu-test-cache-") {}
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

namespace {

// An entry's header: magic 8, version 4, reserved 4, key 32, payload size 8, checksum 32.
constexpr std::streamoff payload_size_at = 48;
constexpr std::size_t header_size = 88;

std::uint64_t read_u64(const fs::path& path, std::streamoff at) {
    std::ifstream f(path, std::ios::binary);
    f.seekg(at);
    std::uint64_t v = 0;
    f.read(reinterpret_cast<char*>(&v), sizeof v);
    return v;
}

void write_u64(const fs::path& path, std::streamoff at, std::uint64_t v) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(at);
    f.write(reinterpret_cast<const char*>(&v), sizeof v);
}

mode_t mode_of(const fs::path& p) {
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

// Collects warnings while it lives.
struct Warnings {
    std::vector<std::string> seen;
    WarningHandler old;
    Warnings() : old(set_warning_handler([this](const std::string& w) { seen.push_back(w); })) {}
    ~Warnings() { set_warning_handler(old); }
};

std::string fresh_define() {
    return "-DK=" + std::to_string(test::rng()() % 100000);
}

} // namespace

TEST_CASE("an entry is a miss unless its length, magic, version, key and checksum agree") {
    const std::string key(64, 'a'), other(64, 'b');
    std::vector<unsigned char> payload(1000);
    for (auto& b : payload)
        b = static_cast<unsigned char>(test::rng()());
    const auto entry = detail::cache_entry_bytes(key, payload);
    REQUIRE(entry.size() == header_size + payload.size());
    CHECK(detail::cache_entry_parse(entry, key) == payload);
    CHECK(detail::cache_entry_parse(detail::cache_entry_bytes(key, {}), key) == std::vector<unsigned char>{});
    CHECK_FALSE(detail::cache_entry_parse(entry, other));
    CHECK_FALSE(detail::cache_entry_parse(entry, "not a key"));
    CHECK_FALSE(detail::cache_entry_parse({}, key));
    CHECK_FALSE(detail::cache_entry_parse(std::vector<unsigned char>(entry.begin(), entry.begin() + 87), key));
    auto longer = entry;
    longer.push_back(0);
    CHECK_FALSE(detail::cache_entry_parse(longer, key));
    CHECK_FALSE(detail::cache_entry_parse(std::vector<unsigned char>(entry.begin(), entry.end() - 1), key));
    // Each field of the header, and the payload, changed by one bit.
    for (std::size_t at : {std::size_t(0), std::size_t(7), std::size_t(8), std::size_t(12), std::size_t(15),
                           std::size_t(16), std::size_t(47), std::size_t(48), std::size_t(55), std::size_t(56),
                           std::size_t(87), std::size_t(88), entry.size() - 1}) {
        INFO("byte " << at);
        auto bad = entry;
        bad[at] ^= 1;
        CHECK_FALSE(detail::cache_entry_parse(bad, key));
    }
    // A payload size that agrees with a longer (or shorter) file than this one.
    for (const std::uint64_t size :
         {std::uint64_t(payload.size() + 1), std::uint64_t(payload.size() - 1), std::uint64_t(0xfffffff0u),
          std::uint64_t(1) << 32, ~std::uint64_t(0), ~std::uint64_t(0) - 87}) {
        auto bad = entry;
        std::memcpy(bad.data() + payload_size_at, &size, 8);
        CHECK_FALSE(detail::cache_entry_parse(bad, key));
    }
}

TEST_CASE("a corrupted payload-size field is a miss, rebuilt quickly, without a large allocation") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        TempCache cache;
        const std::string define = fresh_define();
        fresh(ctx).compile(source, {define});
        const auto entries = cache.entries();
        REQUIRE(entries.size() == 1);
        // Just under the 4 GiB that was allocated and zeroed before the length was compared, past
        // it, and off by one each way.
        for (int variant = 0; variant < 4; ++variant) {
            const std::uint64_t size = read_u64(entries[0], payload_size_at);
            REQUIRE(size + header_size == fs::file_size(entries[0]));
            const std::uint64_t bad = variant == 0   ? 0xfffffff0u
                                      : variant == 1 ? ~std::uint64_t(0)
                                      : variant == 2 ? size + 1
                                                     : size - 1;
            INFO("payload size field " << bad << " for " << size);
            write_u64(entries[0], payload_size_at, bad);
            const auto t0 = std::chrono::steady_clock::now();
            auto c = fresh(ctx);
            auto p = c.compile(source, {define});
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            CHECK(p.origin() == ProgramOrigin::compiled);
            CHECK(s < 10); // a compile; the 4 GiB allocation took 23 s
            CHECK(run_fill7(p, c) >= 7);
            // Rewritten (PoCL's binary may have grown: it keeps kernels built for launches).
            CHECK(read_u64(entries[0], payload_size_at) + header_size == fs::file_size(entries[0]));
            CHECK(fresh(ctx).compile(source, {define}).origin() == ProgramOrigin::disk_cache);
        }
    }
}

TEST_CASE("a cache directory other users can write is not trusted: a warning, and compiles in memory") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        TempCache cache;
        const std::string define = fresh_define();
        fresh(ctx).compile(source, {define}); // an entry, stored while the directory was private
        REQUIRE(cache.entries().size() == 1);
        fs::permissions(cache.dir, fs::perms::all); // 0777, no sticky bit
        Warnings warnings;
        auto c = fresh(ctx);
        auto p = c.compile(source, {define});
        CHECK(p.origin() == ProgramOrigin::compiled); // the entry there is not loaded
        CHECK(run_fill7(p, c) >= 7);
        CHECK(fresh(ctx).compile(source, {fresh_define()}).origin() == ProgramOrigin::compiled);
        CHECK(fresh(ctx).compile(source, {define}).origin() == ProgramOrigin::compiled);
        CHECK(cache.entries().size() == 1); // nothing stored
        REQUIRE(warnings.seen.size() == 1); // once
        CHECK_THAT(warnings.seen[0], Contains(cache.dir.string()) && Contains("writable by other users") &&
                                         Contains("0777") && Contains("not trusted"));

        // Group-writable is no better; the sticky bit (as on /tmp) keeps others from replacing
        // our entries, so such a directory is trusted.
        fs::permissions(cache.dir, fs::perms::owner_all | fs::perms::group_all);
        CHECK(fresh(ctx).compile(source, {define}).origin() == ProgramOrigin::compiled);
        fs::permissions(cache.dir, fs::perms::all | fs::perms::sticky_bit);
        CHECK(fresh(ctx).compile(source, {define}).origin() == ProgramOrigin::disk_cache);
        CHECK(warnings.seen.size() == 1);
    }
}

TEST_CASE("a cache directory owned by another user is not trusted") {
    if (::geteuid() != 0) return; // only root can give a directory away
    XGPU_FOR_EACH_CONTEXT(ctx) {
        TempCache cache;
        const std::string define = fresh_define();
        fresh(ctx).compile(source, {define});
        REQUIRE(::chown(cache.dir.c_str(), 65534, 65534) == 0); // nobody
        Warnings warnings;
        CHECK(fresh(ctx).compile(source, {define}).origin() == ProgramOrigin::compiled);
        REQUIRE(warnings.seen.size() == 1);
        CHECK_THAT(warnings.seen[0], Contains(cache.dir.string()) && Contains("owned by another user"));
    }
}

TEST_CASE("entries others could change are misses; the cache's own files are private whatever the umask") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        TempCache cache;
        const std::string define = fresh_define();
        const mode_t old_mask = ::umask(0);
        fresh(ctx).compile(source, {define});
        ::umask(old_mask);
        CHECK((mode_of(cache.dir) & 077) == 0); // made by xgpu: 0700
        const auto entries = cache.entries();
        REQUIRE(entries.size() == 1);
        CHECK((mode_of(entries[0]) & 022) == 0);
        // An entry file others may write (the directory itself is private) is not loaded, and is
        // replaced by a private one.
        fs::permissions(entries[0], fs::perms::others_write, fs::perm_options::add);
        CHECK(fresh(ctx).compile(source, {define}).origin() == ProgramOrigin::compiled);
        CHECK((mode_of(entries[0]) & 022) == 0);
        CHECK(fresh(ctx).compile(source, {define}).origin() == ProgramOrigin::disk_cache);
        // Nor is an entry reached through a symbolic link.
        const fs::path real = cache.dir / "elsewhere.bin";
        fs::rename(entries[0], real);
        fs::create_symlink(real, entries[0]);
        CHECK(fresh(ctx).compile(source, {define}).origin() == ProgramOrigin::compiled);
    }
}
