#include "cache.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include <fmt/format.h>

#include "env.hpp"
#include "sha256.hpp"
#include "xgpu/detail/backend.hpp"
#include "xgpu/warning.hpp"

namespace fs = std::filesystem;

namespace xgpu::detail {
namespace {

constexpr char magic[8] = {'X', 'G', 'P', 'U', 'B', 'I', 'N', '\n'};

// Header: magic, format version, key digest, payload size, payload SHA-256.
struct Header {
    char magic[8];
    std::uint32_t version;
    std::uint32_t reserved; // 0 in every entry written; anything else is a miss
    std::uint8_t key[32];
    std::uint64_t payload_size;
    std::uint8_t checksum[32];
};

// Program binaries are megabytes; a larger entry is corrupt, and is refused before anything is
// allocated for it.
constexpr std::uint64_t max_payload = std::uint64_t(1) << 32;

void warn_once(const std::string& dir, const std::string& message) {
    static std::mutex m;
    static std::set<std::string> warned;
    std::lock_guard lock(m);
    if (!warned.insert(dir).second) return;
    warn(message);
}

void warn_unusable(const std::string& dir, const std::string& why) {
    warn_once(dir, fmt::format("compile cache directory '{}' is not usable ({}); kernels will be compiled in every "
                               "process. Set XGPU_CACHE_DIR to a writable directory or XGPU_CACHE=off.",
                               dir, why));
}

fs::path entry_path(const std::string& dir, const std::string& key) {
    return fs::path(dir) / (key + ".bin");
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool key_bytes(const std::string& key, std::uint8_t out[32]) {
    if (key.size() != 64) return false;
    for (int i = 0; i < 32; ++i) {
        const int hi = hex_digit(key[2 * i]), lo = hex_digit(key[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = std::uint8_t(hi * 16 + lo);
    }
    return true;
}

// The header of an entry of `entry_size` bytes for `key`, when it agrees with both: checked on
// the header's bytes alone, so that nothing is allocated for an entry that cannot be valid.
std::optional<Header> matching_header(const unsigned char* bytes, std::uint64_t entry_size, const std::string& key) {
    if (entry_size < sizeof(Header)) return std::nullopt;
    Header hdr;
    std::memcpy(&hdr, bytes, sizeof hdr);
    std::uint8_t want_key[32];
    if (std::memcmp(hdr.magic, magic, sizeof magic) != 0 || hdr.version != cache_format_version || hdr.reserved != 0 ||
        !key_bytes(key, want_key) || std::memcmp(hdr.key, want_key, 32) != 0 || hdr.payload_size > max_payload ||
        hdr.payload_size != entry_size - sizeof(Header))
        return std::nullopt;
    return hdr;
}

bool owner_trusted(uid_t uid) {
    return uid == ::geteuid() || uid == 0; // root can replace any file we read anyway
}

// Closes the descriptor when the scope ends.
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

// The cache directory when entries may be read from it and written to it; empty when the cache is
// off or the directory is not trusted (after a warning).
std::string usable_directory(bool create) {
    const CacheDirectory d = trusted_cache_directory(create);
    if (d.distrusted)
        warn_once(cache_directory(),
                  fmt::format("compile cache directory '{}' is {}: a cached binary is native code, so its entries "
                              "are not trusted; kernels are compiled in memory, nothing is loaded from or stored "
                              "there. Make it writable by its owner only (chmod go-w), or set XGPU_CACHE_DIR to a "
                              "private directory.",
                              cache_directory(), d.why));
    else if (!d.why.empty())
        warn_unusable(cache_directory(), d.why);
    return d.path;
}

} // namespace

std::optional<std::string> directory_distrust(const std::string& dir) {
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) return fmt::format("unreadable ({})", std::strerror(errno));
    if (!owner_trusted(st.st_uid)) return fmt::format("owned by another user (uid {})", st.st_uid);
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
        return fmt::format("writable by other users (mode {:04o}, no sticky bit)", st.st_mode & 07777);
    return std::nullopt;
}

CacheDirectory trusted_cache_directory(bool create) {
    CacheDirectory d;
    const std::string dir = cache_directory();
    if (dir.empty()) return d;
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) {
        if (!create) return d; // nothing cached yet
        fs::path p = fs::path(dir).lexically_normal();
        if (!p.has_filename()) p = p.parent_path(); // "dir/"
        std::error_code ec;
        if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
        if (!ec && ::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) ec.assign(errno, std::generic_category());
        if (ec) {
            d.why = ec.message();
            return d;
        }
    }
    if (auto why = directory_distrust(dir)) {
        d.why = std::move(*why);
        d.distrusted = true;
        return d;
    }
    d.path = dir;
    return d;
}

TrustedFile::TrustedFile(TrustedFile&& o) noexcept
    : fd(std::exchange(o.fd, -1)), size(o.size), missing(o.missing), why(std::move(o.why)) {}

TrustedFile::~TrustedFile() {
    if (fd >= 0) ::close(fd);
}

TrustedFile open_trusted(const std::string& path) {
    TrustedFile f;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        f.missing = errno == ENOENT;
        f.why = errno == ELOOP ? "a symbolic link" : fmt::format("cannot be opened ({})", std::strerror(errno));
        return f;
    }
    Fd guard{fd};
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        f.why = fmt::format("cannot be examined ({})", std::strerror(errno));
        return f;
    }
    if (!S_ISREG(st.st_mode)) {
        f.why = S_ISFIFO(st.st_mode)  ? "a FIFO, not a regular file"
                : S_ISCHR(st.st_mode) ? "a device, not a regular file"
                : S_ISDIR(st.st_mode) ? "a directory, not a regular file"
                                      : "not a regular file";
        return f;
    }
    if (!owner_trusted(st.st_uid)) {
        f.why = fmt::format("owned by another user (uid {})", st.st_uid);
        return f;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        f.why = fmt::format("writable by other users (mode {:04o})", st.st_mode & 07777);
        return f;
    }
    f.fd = std::exchange(guard.fd, -1);
    f.size = std::uint64_t(st.st_size);
    return f;
}

bool read_exactly(int fd, unsigned char* out, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::read(fd, out, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        out += n;
        size -= std::size_t(n);
    }
    return true;
}

bool write_exactly(int fd, const unsigned char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= std::size_t(n);
    }
    return true;
}

std::string cache_key(const ContextImpl& ctx, const std::string& source, const std::vector<std::string>& options) {
    Sha256 h;
    h.field(fmt::format("xgpu-cache-v{}", cache_format_version));
    h.field(ctx.device().backend());
    h.field(ctx.build_identity());
    h.field(fmt::format("{}", options.size()));
    for (const auto& o : options)
        h.field(o);
    h.field(source);
    return h.hex_digest();
}

std::string cache_directory() {
    if (!env::cache_enabled()) return {};
    if (auto d = env::value("XGPU_CACHE_DIR")) return *d;
    if (auto x = env::value("XDG_CACHE_HOME")) return (fs::path(*x) / "xgpu").string();
    if (auto home = env::value("HOME")) return (fs::path(*home) / ".cache" / "xgpu").string();
    return {};
}

std::vector<unsigned char> cache_entry_bytes(const std::string& key, const std::vector<unsigned char>& payload) {
    Header hdr{};
    std::memcpy(hdr.magic, magic, sizeof magic);
    hdr.version = cache_format_version;
    key_bytes(key, hdr.key);
    hdr.payload_size = payload.size();
    const auto sum = Sha256().update(payload.data(), payload.size()).digest();
    std::memcpy(hdr.checksum, sum.data(), 32);
    std::vector<unsigned char> out(sizeof hdr + payload.size());
    std::memcpy(out.data(), &hdr, sizeof hdr);
    if (!payload.empty()) std::memcpy(out.data() + sizeof hdr, payload.data(), payload.size());
    return out;
}

std::optional<std::vector<unsigned char>> cache_entry_parse(std::vector<unsigned char> entry, const std::string& key) {
    const auto hdr = matching_header(entry.data(), entry.size(), key);
    if (!hdr) return std::nullopt;
    const auto sum = Sha256().update(entry.data() + sizeof(Header), entry.size() - sizeof(Header)).digest();
    if (std::memcmp(sum.data(), hdr->checksum, 32) != 0) return std::nullopt;
    entry.erase(entry.begin(), entry.begin() + std::ptrdiff_t(sizeof(Header))); // the payload, in place
    return entry;
}

std::optional<std::vector<unsigned char>> cache_load(const std::string& key) {
    const std::string dir = usable_directory(false);
    if (dir.empty()) return std::nullopt;
    const TrustedFile f = open_trusted(entry_path(dir, key).string());
    if (f.fd < 0) return std::nullopt;
    // The header must agree with the file's length before the rest is allocated and read.
    unsigned char head[sizeof(Header)];
    const std::uint64_t size = f.size;
    if (size < sizeof head || !read_exactly(f.fd, head, sizeof head) || !matching_header(head, size, key))
        return std::nullopt;
    std::vector<unsigned char> entry(size);
    std::memcpy(entry.data(), head, sizeof head);
    if (!read_exactly(f.fd, entry.data() + sizeof head, entry.size() - sizeof head)) return std::nullopt;
    unsigned char more;
    if (::read(f.fd, &more, 1) != 0) return std::nullopt; // grew since fstat: not an entry we wrote
    return cache_entry_parse(std::move(entry), key);
}

void cache_store(const std::string& key, const std::vector<unsigned char>& payload) {
    const std::string dir = usable_directory(true);
    if (dir.empty()) return;
    const std::vector<unsigned char> entry = cache_entry_bytes(key, payload);

    // Write to a unique temporary file, then rename over the entry: readers never see a partial
    // file. Only we may write it, whatever the umask.
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    const fs::path final_path = entry_path(dir, key);
    const fs::path tmp = fs::path(dir) / fmt::format(".{}.{}.{:x}.tmp", key, ::getpid(), rng());
    std::error_code ec;
    {
        Fd out{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
        if (out.fd < 0)
            return warn_unusable(dir, fmt::format("cannot create {}: {}", tmp.string(), std::strerror(errno)));
        const bool written = write_exactly(out.fd, entry.data(), entry.size());
        const bool closed = ::close(out.fd) == 0;
        out.fd = -1;
        if (!written || !closed) {
            fs::remove(tmp, ec);
            return warn_unusable(dir, "cannot write " + tmp.string());
        }
    }
    fs::rename(tmp, final_path, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        warn_unusable(dir, ec.message());
    }
}

} // namespace xgpu::detail
