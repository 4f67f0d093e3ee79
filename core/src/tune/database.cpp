// The tuning database: tuning.json in the compile cache directory, one JSON object per entry with
// a SHA-256 of its own text, so that a bad entry is skipped (with a warning) and the rest kept.
// Readers take the file as it is (it is replaced by rename, never written in place); writers hold
// an exclusive flock on tuning.json.lock, read what is on disk, merge their entries into it and
// rename a temporary file over it, so concurrent processes never lose each other's entries.
//
// The file is read as hostile until checked, with the compile cache's trust rules (cache.hpp):
// a directory and file only this user or root can change, a regular file (a FIFO would hang the
// reader, /dev/zero would fill memory), at most database_size_limit bytes, nested at most
// database_depth_limit deep before nlohmann::json sees it (its parser and copies recurse, so a
// deep file would overflow the stack). Anything else costs a warning and the defaults are used.
#include "database.hpp"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string_view>
#include <sys/file.h>
#include <sys/stat.h>
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
        // Integers must be integers in range: nlohmann converts 1e300 to an int by a cast whose
        // result is undefined.
        const auto integer = [&](const char* name, const json& v, std::int64_t lo, std::int64_t hi) {
            if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(hi)) ||
                (!v.is_number_unsigned() && (v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)))
                throw std::range_error(fmt::format("'{}' is not an integer in {}..{}", name, lo, hi));
            return v.get<std::int64_t>();
        };
        if (!j.at("n").is_number_unsigned()) {
            why = "'n' is not a non-negative integer";
            return std::nullopt;
        }
        Entry e;
        e.family = j.at("family").get<std::string>();
        e.version = int(integer("version", j.at("version"), INT_MIN, INT_MAX));
        e.types = j.at("types").get<std::string>();
        e.device = {j.at("backend").get<std::string>(), j.at("vendor").get<std::string>(),
                    j.at("device").get<std::string>(), j.at("driver").get<std::string>(),
                    j.at("arch").get<std::string>()};
        e.bucket = int(integer("bucket", j.at("bucket"), INT_MIN, INT_MAX));
        e.n = j.at("n").get<std::uint64_t>();
        e.ms = j.at("ms").get<double>();
        e.start_ms = j.at("start_ms").get<double>();
        for (const auto& [k, v] : j.at("point").items())
            e.point[k] = integer("point", v, INT64_MIN, INT64_MAX);
        if (e.point.empty() || e.bucket < 0 || e.bucket > 64) {
            why = "no parameters or a bucket out of range";
            return std::nullopt;
        }
        return e;
    } catch (const json::exception& ex) {
        why = ex.what();
        return std::nullopt;
    } catch (const std::range_error& ex) {
        why = ex.what();
        return std::nullopt;
    }
}

json entry_json(const Entry& e) {
    json j = to_json(e);
    j["checksum"] = checksum(j);
    return j;
}

// A key or text from the file shown in a warning: quoted, with control characters escaped.
std::string quoted(const std::string& s) {
    return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

// The entries of a database text; `where` names it in warnings. A text that is not a database
// (truncated, another schema, too large or too deep) yields nothing and a warning.
std::map<std::string, Entry> parse(const std::string& text, const std::string& where) {
    std::map<std::string, Entry> out;
    if (auto why = refuse_text(text)) {
        xgpu::detail::warn(
            fmt::format("tuning database {} is {}: it is ignored and its keys will be tuned again", where, *why));
        return out;
    }
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
            xgpu::detail::warn(fmt::format("tuning database {}: entry {} is ignored ({})", where, quoted(key), why));
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

// The text of `file` (a tuning.json) when it may be read; nothing when there is none (silently) or
// it is refused (after a warning).
std::optional<std::string> read_database(const fs::path& file) {
    const xgpu::detail::TrustedFile f = xgpu::detail::open_trusted(file.string());
    std::string why = f.why;
    if (f.fd >= 0 && f.size > database_size_limit)
        why = fmt::format("{} bytes, more than the {} a tuning database may hold", f.size, database_size_limit);
    std::string text;
    if (why.empty()) {
        text.resize(std::size_t(f.size));
        unsigned char more;
        if (!xgpu::detail::read_exactly(f.fd, reinterpret_cast<unsigned char*>(text.data()), text.size()) ||
            ::read(f.fd, &more, 1) != 0)
            why = "changing while it was read";
    }
    if (f.missing) return std::nullopt;
    if (!why.empty()) {
        xgpu::detail::warn(
            fmt::format("tuning database {} is not read: it is {}; its keys will be tuned again", file.string(), why));
        return std::nullopt;
    }
    return text;
}

struct Db {
    bool loaded = false;
    bool distrusted = false; // the directory is not trusted: nothing read from or written to it
    std::map<std::string, Entry> entries;
    std::set<std::string> forced;
};

std::mutex mutex;
std::atomic<std::uint64_t> changes{0};
std::map<std::string, Db> dbs; // by directory ("" when the cache is off: memory only)
std::set<std::string> unwritable_warned;

// The database of the cache directory, loaded on first use; `dir` is where it is written, empty
// when it is kept in memory only (the cache is off or its directory is not trusted).
Db& current(std::string& dir) {
    dir = xgpu::detail::cache_directory();
    Db& db = dbs[dir];
    if (!db.loaded && !dir.empty()) {
        const auto d = xgpu::detail::trusted_cache_directory(false);
        if (d.distrusted) {
            db.distrusted = true;
            xgpu::detail::warn(fmt::format("tuning database in '{}' is not used: the directory is {}, so its file "
                                           "is not trusted; the defaults are used and tuning results are kept in "
                                           "memory for this process only. Make it writable by its owner only "
                                           "(chmod go-w), or set XGPU_CACHE_DIR to a private directory.",
                                           dir, d.why));
        } else if (!d.path.empty()) {
            if (auto text = read_database(fs::path(dir) / "tuning.json"))
                db.entries = parse(*text, (fs::path(dir) / "tuning.json").string());
        }
    }
    db.loaded = true;
    if (db.distrusted) dir.clear();
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
    const auto d = xgpu::detail::trusted_cache_directory(true);
    if (d.path.empty()) {
        warn_unwritable(dir, d.why.empty() ? "the cache is off" : d.why);
        return std::nullopt;
    }
    const fs::path file = fs::path(dir) / "tuning.json", lock = fs::path(dir) / "tuning.json.lock";
    Fd lk{::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600)};
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
    if (auto text = read_database(file)) merged = parse(*text, file.string());
    for (const auto& [k, e] : mine)
        merged[k] = e;
    const std::string text = serialize(merged);
    if (text.size() > database_size_limit) {
        warn_unwritable(dir, fmt::format("{} entries would take {} bytes, more than the {} a tuning database may hold",
                                         merged.size(), text.size(), database_size_limit));
        return std::nullopt;
    }
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    const fs::path tmp = fs::path(dir) / fmt::format(".tuning.json.{}.{:x}.tmp", ::getpid(), rng());
    std::error_code ec;
    {
        // Readers refuse a file others may write, so it is made 0644 whatever the umask.
        Fd out{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
        const bool written =
            out.fd >= 0 &&
            xgpu::detail::write_exactly(out.fd, reinterpret_cast<const unsigned char*>(text.data()), text.size()) &&
            ::fchmod(out.fd, 0644) == 0;
        const bool closed = out.fd >= 0 && ::close(out.fd) == 0;
        out.fd = -1;
        if (!written || !closed) {
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

std::optional<std::string> refuse_text(std::string_view text) {
    if (text.size() > database_size_limit)
        return fmt::format("{} bytes, more than the {} a tuning database may hold", text.size(), database_size_limit);
    // Brackets inside strings do not nest; a string's backslash escapes the next character.
    std::size_t depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > database_depth_limit)
                return fmt::format("nested more than {} levels deep (at byte {})", database_depth_limit, i);
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return std::nullopt;
}

std::map<std::string, Entry> parse_database(const std::string& text, const std::string& where) {
    return parse(text, where);
}

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
    if (auto why = detail::refuse_text(text))
        throw InvalidArgument(fmt::format("xgpu: import_database: the text is {}, not a tuning database", *why));
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
