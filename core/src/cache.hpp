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

// The entry's payload, or nothing if missing, unreadable or corrupt.
std::optional<std::vector<unsigned char>> cache_load(const std::string& key);

// Stores an entry; failure costs a warning (once per directory), never an exception.
void cache_store(const std::string& key, const std::vector<unsigned char>& payload);

} // namespace xgpu::detail
