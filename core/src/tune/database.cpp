// The tuning database: tuning.json in the compile cache directory, one JSON object per entry with
// a SHA-256 of its own text, so that a bad entry is skipped (with a warning) and the rest kept.
// Readers take the file as it is (it is replaced by rename, never written in place); writers hold
// an exclusive flock on tuning.json.lock, read what is on disk, merge their entries into it and
// rename a temporary file over it, so concurrent processes never lose each other's entries.
#include "database.hpp"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../cache.hpp"
#include "../sha256.hpp"
#include "xgpu/error.hpp"
#include "xgpu/warning.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace xgpu::tune::detail {
namespace {

// Closes the descriptor (and so drops its lock) when the scope ends.
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

json to_json(const Entry& e) {
    json point = json::object();
    for (const auto& [k, v] : e.point)
        point[k] = v;
    return json{{"family", e.family},
                {"version", e.version},
                {"types", e.types},
                {"backend", e.device.backend},
                {"vendor", e.device.vendor},
                {"device", e.device.name},
                {"driver", e.device.driver},
                {"arch", e.device.arch},
                {"bucket", e.bucket},
                {"n", e.n},
                {"point", point},
                {"ms", e.ms},
                {"start_ms", e.start_ms}};
}

std::string checksum(const json& fields) {
    return xgpu::detail::Sha256().update(fields.dump()).hex_digest();
}

// An entry from its JSON, or why not (a missing or mistyped field, a bad checksum).
std::optional<Entry> from_json(const json& j, std::string& why) {
    try {
        if (!j.is_object()) {
            why = "not an object";
            return std::nullopt;
        }
        json fields = j;
        const std::string sum = fields.at("checksum").get<std::string>();
        fields.erase("checksum");
        if (checksum(fields) != sum) {
            why = "checksum mismatch";
            return std::nullopt;
        }
        Entry e;
        e.family = j.at("family").get<std::string>();
        e.version = j.at("version").get<int>();
        e.types = j.at("types").get<std::string>();
        e.device = {j.at("backend").get<std::string>(), j.at("vendor").get<std::string>(),
                    j.at("device").get<std::string>(), j.at("driver").get<std::string>(),
                    j.at("arch").get<std::string>()};
        e.bucket = j.at("bucket").get<int>();
        e.n = j.at("n").get<std::uint64_t>();
        e.ms = j.at("ms").get<double>();
        e.start_ms = j.at("start_ms").get<double>();
        for (const auto& [k, v] : j.at("point").items())
            e.point[k] = v.get<std::int64_t>();
        if (e.point.empty() || e.bucket < 0 || e.bucket > 64) {
            why = "no parameters or a bucket out of range";
            return std::nullopt;
        }
        return e;
    } catch (const json::exception& ex) {
        why = ex.what();
        return std::nullopt;
    }
}

json entry_json(const Entry& e) {
    json j = to_json(e);
    j["checksum"] = checksum(j);
    return j;
}

// The entries of a database text; `where` names it in warnings. A text that is not a database
// (truncated, another schema) yields nothing and a warning.
std::map<std::string, Entry> parse(const std::string& text, const std::string& where) {
    std::map<std::string, Entry> out;
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("entries") || !doc["entries"].is_object()) {
        xgpu::detail::warn(fmt::format("tuning database {} is not valid JSON of a tuning database (truncated or "
                                       "corrupt?): it is ignored and its keys will be tuned again",
                                       where));
        return out;
    }
    if (!doc.contains("schema") || doc["schema"] != schema_version) {
        xgpu::detail::warn(fmt::format("tuning database {} has schema {}, this library reads schema {}: it is "
                                       "ignored",
                                       where, doc.value("schema", json()).dump(), schema_version));
        return out;
    }
    for (const auto& [key, value] : doc["entries"].items()) {
        std::string why;
        auto e = from_json(value, why);
        if (e && entry_key(*e) != key) why = "its key does not match its fields";
        if (!e || !why.empty()) {
            xgpu::detail::warn(fmt::format("tuning database {}: entry '{}' is ignored ({})", where, key, why));
            continue;
        }
        out.emplace(key, std::move(*e));
    }
    return out;
}

std::string serialize(const std::map<std::string, Entry>& entries) {
    json doc{{"schema", schema_version}, {"entries", json::object()}};
    for (const auto& [key, e] : entries)
        doc["entries"][key] = entry_json(e);
    return doc.dump(1) + "\n";
}

std::optional<std::string> read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Db {
    bool loaded = false;
    std::map<std::string, Entry> entries;
    std::set<std::string> forced;
};

std::mutex mutex;
std::atomic<std::uint64_t> changes{0};
std::map<std::string, Db> dbs; // by directory ("" when the cache is off: memory only)
std::set<std::string> unwritable_warned;

Db& current(std::string& dir) {
    dir = xgpu::detail::cache_directory();
    Db& db = dbs[dir];
    if (!db.loaded) {
        db.loaded = true;
        if (!dir.empty())
            if (auto text = read_file(fs::path(dir) / "tuning.json"))
                db.entries = parse(*text, (fs::path(dir) / "tuning.json").string());
    }
    return db;
}

void warn_unwritable(const std::string& dir, const std::string& why) {
    if (!unwritable_warned.insert(dir).second) return;
    xgpu::detail::warn(fmt::format("tuning database in '{}' cannot be written ({}); tuning results are kept in "
                                   "memory for this process only. Set XGPU_CACHE_DIR to a writable directory.",
                                   dir, why));
}

// Merges `mine` into the file in `dir` under the lock; returns what the file holds afterwards.
// Called with `mutex` held (so threads of one process write one at a time; flock orders processes).
std::optional<std::map<std::string, Entry>> write_merged(const std::string& dir,
                                                         const std::map<std::string, Entry>& mine) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    const fs::path file = fs::path(dir) / "tuning.json", lock = fs::path(dir) / "tuning.json.lock";
    Fd lk{::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)};
    if (lk.fd < 0) {
        warn_unwritable(dir, fmt::format("cannot open {}: {}", lock.string(), std::strerror(errno)));
        return std::nullopt;
    }
    while (::flock(lk.fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            warn_unwritable(dir, fmt::format("cannot lock {}: {}", lock.string(), std::strerror(errno)));
            return std::nullopt;
        }
    std::map<std::string, Entry> merged;
    if (auto text = read_file(file)) merged = parse(*text, file.string());
    for (const auto& [k, e] : mine)
        merged[k] = e;
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    const fs::path tmp = fs::path(dir) / fmt::format(".tuning.json.{}.{:x}.tmp", ::getpid(), rng());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << serialize(merged);
        out.close();
        if (!out) {
            fs::remove(tmp, ec);
            warn_unwritable(dir, "cannot write " + tmp.string());
            return std::nullopt;
        }
    }
    fs::rename(tmp, file, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        warn_unwritable(dir, ec.message());
        return std::nullopt;
    }
    return merged;
}

bool same_filing(const Entry& e, const std::string& family, int version, const std::string& types) {
    return e.family == family && e.version == version && e.types == types;
}

} // namespace

DeviceId device_id(const DeviceInfo& d) {
    return {d.backend, d.vendor, d.name, d.driver_version, d.arch};
}

int size_bucket(std::uint64_t n) {
    int b = 0;
    while (n > 1) {
        n >>= 1;
        ++b;
    }
    return b;
}

std::string entry_key(const Entry& e) {
    return fmt::format("{}@{}|{}|{}|{}|{}|{}|{}|n2^{}", e.family, e.version, e.types, e.device.backend, e.device.vendor,
                       e.device.name, e.device.driver, e.device.arch, e.bucket);
}

std::optional<std::pair<Point, Source>> find(const std::string& family, int version, const std::string& types,
                                             const DeviceId& device, int bucket) {
    std::lock_guard lock(mutex);
    std::string dir;
    const Db& db = current(dir);
    const Entry* by_driver = nullptr;
    const Entry* by_arch = nullptr;
    const Entry* nearest = nullptr;
    for (const auto& [key, e] : db.entries) {
        if (!same_filing(e, family, version, types) || e.device.backend != device.backend) continue;
        const bool same_name = e.device.vendor == device.vendor && e.device.name == device.name;
        if (e.bucket == bucket) {
            if (same_name && e.device.driver == device.driver && e.device.arch == device.arch)
                return std::pair{e.point, Source::database};
            if (same_name && !by_driver) by_driver = &e;
            if (!same_name && e.device.arch == device.arch && !device.arch.empty() && !by_arch) by_arch = &e;
        } else if (same_name && (!nearest || std::abs(e.bucket - bucket) < std::abs(nearest->bucket - bucket))) {
            nearest = &e;
        }
    }
    for (const Entry* e : {by_driver, by_arch, nearest})
        if (e) return std::pair{e->point, Source::fallback};
    return std::nullopt;
}

void put(const Entry& e) {
    std::lock_guard lock(mutex);
    std::string dir;
    Db& db = current(dir);
    db.entries[entry_key(e)] = e;
    ++changes;
    if (dir.empty()) return;
    if (auto merged = write_merged(dir, {{entry_key(e), e}})) {
        // What other processes stored meanwhile becomes visible too.
        for (auto& [k, v] : *merged)
            db.entries[k] = std::move(v);
    }
}

std::uint64_t generation() {
    return changes.load();
}

bool first_force(const Entry& e) {
    std::lock_guard lock(mutex);
    std::string dir;
    return current(dir).forced.insert(entry_key(e)).second;
}

void reset() {
    std::lock_guard lock(mutex);
    dbs.clear();
    unwritable_warned.clear();
    ++changes;
    forget_shapes();
}

} // namespace xgpu::tune::detail

namespace xgpu::tune {

std::string database_path() {
    const std::string dir = xgpu::detail::cache_directory();
    return dir.empty() ? std::string() : (fs::path(dir) / "tuning.json").string();
}

std::string export_database() {
    std::lock_guard lock(detail::mutex);
    std::string dir;
    return detail::serialize(detail::current(dir).entries);
}

void import_database(const std::string& text) {
    const json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("entries"))
        throw InvalidArgument("xgpu: import_database: the text is not a tuning database (JSON with \"schema\" and "
                              "\"entries\")");
    if (!doc.contains("schema") || doc["schema"] != detail::schema_version)
        throw InvalidArgument(fmt::format("xgpu: import_database: schema {} where this library reads schema {}",
                                          doc.value("schema", json()).dump(), detail::schema_version));
    const auto entries = detail::parse(text, "being imported");
    std::lock_guard lock(detail::mutex);
    std::string dir;
    detail::Db& db = detail::current(dir);
    for (const auto& [k, e] : entries)
        db.entries[k] = e;
    ++detail::changes;
    if (dir.empty()) return;
    if (auto merged = detail::write_merged(dir, entries))
        for (auto& [k, v] : *merged)
            db.entries[k] = std::move(v);
}

} // namespace xgpu::tune
