// Files xgpu reads, crafted to hurt it: a tuning database nested 200,000 deep, a symbolic link
// to /dev/zero, a FIFO, a file past the size limit, a directory other users can write; a FIFO in
// place of a compile cache entry; Matrix Market files declaring sizes that would take gigabytes or
// wrap a count around, or holding a NUL; an image from an empty array. Each must cost a warning and
// the defaults, or a clear exception, promptly: never a crash, a hang or an escaping bad_alloc.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <xgpu/array.hpp>
#include <xgpu/image.hpp>
#include <xgpu/reduction.hpp>
#include <xgpu/sparse.hpp>
#include <xgpu/tune.hpp>

#include "support.hpp"
#include "tune/database.hpp"

namespace fs = std::filesystem;
using namespace xgpu;
using Catch::Matchers::Contains;

namespace {

// A fresh private cache directory, set as XGPU_CACHE_DIR while the object lives, with the tuning
// database's memory forgotten on both ends.
struct TempCache : test::TempCacheDir {
    TempCache() : TempCacheDir("xgpu-test-hostile-") {
        ::unsetenv("XGPU_AUTOTUNE");
        tune::detail::reset();
    }
    ~TempCache() { tune::detail::reset(); }
    fs::path database() const { return dir / "tuning.json"; }
};

// Collects warnings while it lives.
struct Warnings {
    std::vector<std::string> seen;
    WarningHandler previous;
    Warnings() : previous(set_warning_handler([this](const std::string& w) { seen.push_back(w); })) {}
    ~Warnings() { set_warning_handler(previous); }
    // The one warning that mentions `part`; fails unless there is exactly one.
    std::string one(const std::string& part) const {
        std::vector<std::string> hits;
        for (const auto& w : seen)
            if (w.find(part) != std::string::npos) hits.push_back(w);
        INFO("warnings: " << seen.size());
        for (const auto& w : seen)
            UNSCOPED_INFO(w);
        REQUIRE(hits.size() == 1);
        return hits[0];
    }
};

const tune::detail::DeviceId device{"opencl", "Vendor", "Card", "driver 1", "arch"};

// Stores one valid entry (through the library's writer) and returns the file's text.
std::string store_valid_entry() {
    tune::detail::Entry e;
    e.family = "hostile";
    e.types = "f32";
    e.device = device;
    e.bucket = 20;
    e.point = {{"p", 7}};
    tune::detail::put(e);
    tune::detail::reset();
    return tune::export_database();
}

// Whether the database as loaded now holds the entry store_valid_entry wrote.
bool entry_found() {
    const auto hit = tune::detail::find("hostile", 1, "f32", device, 20);
    return hit && hit->first.at("p") == 7;
}

// Writes `text` to `p`, private to this user whatever the umask (a file others may write is refused
// for that alone).
void write_file(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
}

std::string nested(std::size_t depth) {
    return R"({"schema": 1, "entries": {"deep": )" + std::string(depth, '[') + std::string(depth, ']') + "}}";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

TEST_CASE("a tuning database the reader must not trust costs one warning and the defaults") {
    TempCache cache;
    const std::string valid = store_valid_entry();
    REQUIRE(entry_found()); // the writer's file reads back
    const fs::path file = cache.database();
    const auto refused = [&](const std::string& why) {
        tune::detail::reset();
        Warnings w;
        const auto t0 = std::chrono::steady_clock::now();
        CHECK_FALSE(entry_found());
        CHECK(seconds_since(t0) < 5);
        const std::string warning = w.one("tuning database");
        CHECK_THAT(warning, Contains(why));
        CHECK(w.seen.size() == 1);
        CHECK_FALSE(entry_found()); // loaded once: no second warning
        CHECK(w.seen.size() == 1);
    };
    SECTION("nested 200,000 deep (400 KB): refused before the JSON parser sees it") {
        write_file(file, nested(200000));
        refused("nested more than 64 levels deep");
    }
    SECTION("nested 65 deep is refused, the valid file beside a deep string is not") {
        write_file(file, nested(65));
        refused("nested more than 64 levels deep");
        // Brackets inside a string do not nest.
        std::string text = valid;
        text.insert(text.find("\"entries\""), "\"note\": \"" + std::string(1000, '[') + "\", ");
        write_file(file, text);
        tune::detail::reset();
        Warnings w;
        CHECK(entry_found());
        CHECK(w.seen.empty());
    }
    SECTION("a symbolic link to /dev/zero is not followed") {
        fs::remove(file);
        fs::create_symlink("/dev/zero", file);
        refused("a symbolic link");
        // Nor a link to the valid file itself.
        fs::remove(file);
        write_file(cache.dir / "real.json", valid);
        fs::create_symlink(cache.dir / "real.json", file);
        refused("a symbolic link");
    }
    SECTION("a FIFO is not opened for reading: no hang") {
        fs::remove(file);
        REQUIRE(::mkfifo(file.c_str(), 0600) == 0);
        refused("a FIFO, not a regular file");
    }
    SECTION("a file past the size limit is refused before it is read") {
        fs::resize_file(file, tune::database_size_limit + 1); // sparse: no disk, no memory
        refused(std::to_string(tune::database_size_limit + 1) + " bytes, more than the " +
                std::to_string(tune::database_size_limit));
    }
    SECTION("a file other users can write") {
        fs::permissions(file, fs::perms::others_write, fs::perm_options::add);
        refused("writable by other users");
    }
    SECTION("a directory other users can write: the compile cache's rule") {
        fs::permissions(cache.dir, fs::perms::all); // 0777, no sticky bit
        refused("writable by other users (mode 0777, no sticky bit)");
        // Nothing is written there either: a store stays in memory.
        tune::detail::reset();
        Warnings w;
        tune::detail::Entry e;
        e.family = "other";
        e.types = "f32";
        e.device = device;
        e.point = {{"q", 1}};
        tune::detail::put(e);
        CHECK(tune::detail::find("other", 1, "f32", device, 0));
        CHECK_THAT(w.one("tuning database"), Contains("not used"));
        fs::permissions(cache.dir, fs::perms::owner_all);
        tune::detail::reset();
        CHECK(entry_found());
        CHECK_FALSE(tune::detail::find("other", 1, "f32", device, 0));
        // The sticky bit (as on /tmp) keeps others from replacing the file: trusted.
        fs::permissions(cache.dir, fs::perms::all | fs::perms::sticky_bit);
        tune::detail::reset();
        CHECK(entry_found());
    }
    // Afterwards a valid file loads again, without a warning.
    std::error_code ec;
    fs::permissions(cache.dir, fs::perms::owner_all, ec);
    fs::remove(file, ec);
    write_file(file, valid);
    tune::detail::reset();
    Warnings w;
    CHECK(entry_found());
    CHECK(w.seen.empty());
}

TEST_CASE("float array expressions run on the defaults beside a hostile tuning database") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        TempCache cache;
        const fs::path file = cache.database();
        for (int variant = 0; variant < 3; ++variant) {
            INFO("variant " << variant);
            std::error_code ec;
            fs::remove(file, ec);
            if (variant == 0) write_file(file, nested(200000));
            if (variant == 1) fs::create_symlink("/dev/zero", file);
            if (variant == 2) REQUIRE(::mkfifo(file.c_str(), 0600) == 0);
            tune::detail::reset();
            Warnings w;
            const auto t0 = std::chrono::steady_clock::now();
            const std::vector<float> h(1 << 16, 0.5f);
            CHECK(sum(to_device<float>(ctx, h)).get() == Approx(32768.0f));
            CHECK(launch_shape(ctx, KernelFamily::reduction, DType::float32) ==
                  default_launch_shape(ctx, KernelFamily::reduction, DType::float32));
            CHECK(seconds_since(t0) < 60); // a compile at most; the FIFO hung for ever
            CHECK_THAT(w.one("tuning database"), Contains(file.string()));
        }
    }
}

TEST_CASE("import_database refuses deep or oversized text with InvalidArgument") {
    TempCache cache;
    CHECK_THROWS_MATCHES(
        tune::import_database(nested(200000)), InvalidArgument,
        Catch::Matchers::Message("xgpu: import_database: the text is nested more than 64 levels deep (at byte 96), not "
                                 "a tuning database"));
    CHECK_THROWS_AS(tune::import_database(nested(65)), InvalidArgument);
    const std::string huge(tune::database_size_limit + 1, ' ');
    CHECK_THROWS_WITH(tune::import_database(huge), Contains("bytes, more than the") && Contains("import_database"));
    // The same text, valid, is taken.
    const std::string valid = store_valid_entry();
    fs::remove(cache.database());
    tune::detail::reset();
    CHECK_FALSE(entry_found());
    tune::import_database(valid);
    CHECK(entry_found());
}

TEST_CASE("a FIFO in place of a compile cache entry is a miss, promptly") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        TempCache cache;
        const std::string source = "XGPU_KERNEL void fifo_probe(XGPU_GLOBAL int32_t* a) { a[XGPU_GLOBAL_ID(0)] = " +
                                   std::to_string(test::rng()() % 100000) + "; }\n";
        REQUIRE(Context::create(ctx.device()).compile(source).origin() == ProgramOrigin::compiled);
        std::vector<fs::path> entries;
        for (const auto& e : fs::directory_iterator(cache.dir))
            if (e.path().extension() == ".bin") entries.push_back(e.path());
        REQUIRE(entries.size() == 1);
        fs::remove(entries[0]);
        REQUIRE(::mkfifo(entries[0].c_str(), 0600) == 0);
        const auto t0 = std::chrono::steady_clock::now();
        CHECK(Context::create(ctx.device()).compile(source).origin() == ProgramOrigin::compiled);
        CHECK(seconds_since(t0) < 60); // a compile; the open waited for a writer for ever
        // Replaced by a regular entry, which the next context loads.
        CHECK(fs::is_regular_file(fs::symlink_status(entries[0])));
        CHECK(Context::create(ctx.device()).compile(source).origin() == ProgramOrigin::disk_cache);
    }
}

namespace {

template <class T, class I> ParseError mm_error(const std::string& text, const sparse::ReadOptions& opt = {}) {
    std::istringstream in(text);
    try {
        sparse::read_matrix_market<T, I>(in, "probe.mtx", opt);
    } catch (const ParseError& e) {
        return e;
    }
    FAIL("no ParseError for " << text);
    return ParseError("", "", 0);
}

} // namespace

TEST_CASE("Matrix Market: declared sizes drive no allocation and no wrapped count") {
    using sparse::read_matrix_market;
    const std::string coordinate = "%%MatrixMarket matrix coordinate real general\n";
    SECTION("2^31 - 1 x 1 with no entries (int32): refused naming the size, not 16 GiB") {
        const auto e = mm_error<double, std::int32_t>(coordinate + "2147483647 1 0\n");
        CHECK(e.file() == "probe.mtx");
        CHECK(e.line() == 2);
        CHECK_THAT(std::string(e.what()),
                   Contains("probe.mtx:2:") && Contains("a 2147483647 x 1 matrix with 0 entries") &&
                       Contains("2147483648 row pointers") && Contains("ReadOptions::row_allowance"));
    }
    SECTION("2^40 x 1 (int64)") {
        const auto e = mm_error<float, std::int64_t>(coordinate + "%\n1099511627776 1 0\n");
        CHECK(e.line() == 3);
        CHECK_THAT(std::string(e.what()), Contains("probe.mtx:3:") && Contains("1099511627776 x 1"));
    }
    SECTION("2^62 x 2^62 (int64): no length_error") {
        const auto e = mm_error<double, std::int64_t>(coordinate + "4611686018427387904 4611686018427387904 0\n");
        CHECK(e.line() == 2);
        CHECK_THAT(std::string(e.what()),
                   Contains("probe.mtx:2:") && Contains("4611686018427387904 x 4611686018427387904"));
    }
    SECTION("a symmetric array of 2^33 x 2^33: the count does not wrap to 2^32") {
        const std::string text = "%%MatrixMarket matrix array real symmetric\n8589934592 8589934592\n1.0\n";
        const auto e = mm_error<double, std::int64_t>(text);
        CHECK(e.line() == 2);
        CHECK_THAT(std::string(e.what()),
                   Contains("probe.mtx:2:") && Contains("8589934592 x 8589934592 is too many entries: a "
                                                        "symmetric array of that size stores more than 2^63"));
        CHECK_THAT(std::string(e.what()), !Contains("4294967296"));
        std::istringstream in(text);
        CHECK_THROWS_AS(sparse::read_matrix_market_header(in, "probe.mtx"), ParseError);
        // Skew-symmetric and general arrays alike.
        CHECK_THAT(std::string(mm_error<double, std::int64_t>(
                                   "%%MatrixMarket matrix array real skew-symmetric\n8589934594 8589934594\n")
                                   .what()),
                   Contains("too many entries") && Contains("stores more than 2^63"));
        CHECK_THAT(std::string(mm_error<double, std::int64_t>("%%MatrixMarket matrix array real general\n4294967296 "
                                                              "4294967296\n")
                                   .what()),
                   Contains("too many entries") && Contains("stores more than 2^63"));
    }
    SECTION("rows past the allowance need entries; the allowance can be raised") {
        sparse::ReadOptions small;
        small.row_allowance = 16;
        const auto e = mm_error<double, std::int32_t>(coordinate + "65 3 1\n1 1 2.0\n", small);
        CHECK(e.line() == 2);
        CHECK_THAT(std::string(e.what()), Contains("at most 16 rows") && Contains("64 per entry line"));
        std::istringstream ok(coordinate + "64 3 1\n1 1 2.0\n");
        const auto a = read_matrix_market<double, std::int32_t>(ok, "probe.mtx", small);
        CHECK(a.rows == 64);
        CHECK(a.row_ptr.size() == 65);
        // By default an empty matrix of a million rows is legal and read.
        std::istringstream empty(coordinate + "1000000 1 0\n");
        CHECK(read_matrix_market<double, std::int32_t>(empty).rows == 1000000);
        sparse::ReadOptions lifted;
        lifted.row_allowance = std::int64_t(1) << 23;
        std::istringstream big(coordinate + "5000000 1 0\n");
        CHECK_THROWS_AS((read_matrix_market<double, std::int32_t>(big)), ParseError);
        big.clear();
        big.seekg(0);
        CHECK(read_matrix_market<double, std::int32_t>(big, "probe.mtx", lifted).rows == 5000000);
    }
}

TEST_CASE("Matrix Market: a NUL or control byte is escaped in the message, which goes on past it") {
    const std::string nul("\0", 1);
    auto e = mm_error<double, std::int32_t>("%%MatrixMarket matrix coordinate re" + nul + "al general\n1 1 0\n");
    CHECK(e.line() == 1);
    std::string what = e.what();
    CHECK(what.size() == std::strlen(e.what())); // no NUL left to cut it
    CHECK_THAT(what, Contains("probe.mtx:1:") && Contains("field 're\\x00al' is not real, integer, complex or "
                                                          "pattern"));
    e = mm_error<double, std::int32_t>("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 4" + nul +
                                       "2\x1b[0m\n");
    CHECK(e.line() == 3);
    what = e.what();
    CHECK(what.size() == std::strlen(e.what()));
    CHECK_THAT(what, Contains("probe.mtx:3:") && Contains("'4\\x002\\x1b[0m' is not a number"));
    e = mm_error<double, std::int32_t>("%%MatrixMarket matrix coordinate real general\n2 2" + nul + " 1\n");
    CHECK(e.line() == 2);
    CHECK_THAT(std::string(e.what()), Contains("bad size line '2 2\\x00 1'"));
}

TEST_CASE("Image::from_array of an empty axis is refused before anything is made") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        CHECK_THROWS_MATCHES(Image::from_array(zeros<float>(ctx, {0, 4})), InvalidArgument,
                             Catch::Matchers::Message("xgpu: Image::from_array: axis 0 of shape (0, 4) is empty: an "
                                                      "image has at least one texel along each axis"));
        CHECK_THROWS_WITH(Image::from_array(zeros<float>(ctx, {4, 0})), Contains("axis 1 of shape (4, 0) is empty"));
        CHECK_THROWS_WITH(Image::from_array(zeros<float>(ctx, {0})), Contains("axis 0 of shape (0,) is empty"));
        CHECK_THROWS_WITH(Image::from_array(zeros<float>(ctx, {2, 0, 3, 4}), 4), Contains("axis 1 of shape"));
        CHECK_THROWS_WITH(Image::from_array(zeros<float>(ctx, {0, 4})), !Contains("texels of"));
    }
}
