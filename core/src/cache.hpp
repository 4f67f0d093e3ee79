// The on-disk compile cache: one file per program binary, keyed by a SHA-256 of everything that
// changes the binary. Entries are written atomically and checked on load; a bad entry is a miss.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xgpu::detail {

class ContextImpl;

// Bumped whenever the entry layout or the key's contents change.
inline constexpr std::uint32_t cache_format_version = 1;

// The cache key (hex SHA-256) for `source` built with `options` on `ctx`'s device.
std::string cache_key(const ContextImpl& ctx, const std::string& source, const std::vector<std::string>& options);

// XGPU_CACHE_DIR, else $XDG_CACHE_HOME/xgpu, else ~/.cache/xgpu; empty when XGPU_CACHE=off
// (an XGPU_CACHE value that is not an on/off word is an InvalidArgument).
std::string cache_directory();

// The entry's payload, or nothing if missing, unreadable, corrupt or not trusted. Entries are
// trusted only in a directory that no other user can write (owned by this user or root, and
// group- or other-writable only with the sticky bit, as /tmp): a cached binary is native code, so
// a directory others can write is a way to run their code. An untrusted directory costs a
// warning (once) and kernels are compiled in memory: nothing is loaded from it or stored there.
std::optional<std::vector<unsigned char>> cache_load(const std::string& key);

// Stores an entry; failure costs a warning (once per directory), never an exception.
void cache_store(const std::string& key, const std::vector<unsigned char>& payload);

// The trust rules of the files xgpu reads back from the cache directory (compile cache entries,
// the tuning database): someone who can change them chooses what this process loads.

// Why the files in `dir`, an existing directory, must not be trusted: owned by a user other than
// this one or root, or writable by group or others without the sticky bit. Nothing when trusted.
std::optional<std::string> directory_distrust(const std::string& dir);

// The cache directory when files may be read from and written to it (`path`). Empty when the
// cache is off, when the directory is missing (unless `create`: it is then made, private to this
// user), when it cannot be made (`why`) or when it is not trusted (`why`, and `distrusted`).
struct CacheDirectory {
    std::string path, why;
    bool distrusted = false;
};
CacheDirectory trusted_cache_directory(bool create);

// A file opened by open_trusted; closed when it goes.
struct TrustedFile {
    int fd = -1;
    std::uint64_t size = 0;
    bool missing = false; // no such file: not worth a warning
    std::string why;      // why it was refused, when fd < 0
    TrustedFile() = default;
    TrustedFile(const TrustedFile&) = delete;
    TrustedFile& operator=(const TrustedFile&) = delete;
    TrustedFile(TrustedFile&& o) noexcept;
    ~TrustedFile();
};

// Opens `path` for reading only if it is a regular file owned by this user or root and not
// writable by group or others. It is opened without following a symbolic link and without
// blocking, so that a FIFO or a device in its place is refused rather than waited on or read
// without end.
TrustedFile open_trusted(const std::string& path);

// Reads exactly `size` bytes; false at an early end or an error.
bool read_exactly(int fd, unsigned char* out, std::size_t size);
// Writes all of `data`; false on an error.
bool write_exactly(int fd, const unsigned char* data, std::size_t size);

// An entry as stored: a header (magic, format version, key digest, payload size, payload SHA-256)
// followed by the payload.
std::vector<unsigned char> cache_entry_bytes(const std::string& key, const std::vector<unsigned char>& payload);

// The payload of the entry for `key` held in `entry` (a whole file's bytes), or nothing unless
// its length (header + payload size), magic, version, key and checksum all agree. cache_load
// reads files through it; the fuzzers call it directly.
std::optional<std::vector<unsigned char>> cache_entry_parse(std::vector<unsigned char> entry, const std::string& key);

} // namespace xgpu::detail
