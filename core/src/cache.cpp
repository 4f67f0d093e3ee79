#include "cache.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <unistd.h>

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
    std::uint32_t reserved;
    std::uint8_t key[32];
    std::uint64_t payload_size;
    std::uint8_t checksum[32];
};

void warn_once(const std::string& dir, const std::string& why) {
    static std::mutex m;
    static std::set<std::string> warned;
    std::lock_guard lock(m);
    if (!warned.insert(dir).second) return;
    warn(fmt::format("compile cache directory '{}' is not usable ({}); kernels will be compiled in every process. "
                     "Set XGPU_CACHE_DIR to a writable directory or XGPU_CACHE=off.",
                     dir, why));
}

fs::path entry_path(const std::string& dir, const std::string& key) {
    return fs::path(dir) / (key + ".bin");
}

bool key_bytes(const std::string& key, std::uint8_t out[32]) {
    if (key.size() != 64) return false;
    for (int i = 0; i < 32; ++i)
        out[i] = std::uint8_t(std::stoi(key.substr(2 * i, 2), nullptr, 16));
    return true;
}

} // namespace

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

std::optional<std::vector<unsigned char>> cache_load(const std::string& key) {
    const std::string dir = cache_directory();
    if (dir.empty()) return std::nullopt;
    std::ifstream in(entry_path(dir, key), std::ios::binary);
    if (!in) return std::nullopt;
    Header hdr{};
    if (!in.read(reinterpret_cast<char*>(&hdr), sizeof hdr)) return std::nullopt;
    std::uint8_t want_key[32];
    if (std::memcmp(hdr.magic, magic, sizeof magic) != 0 || hdr.version != cache_format_version ||
        !key_bytes(key, want_key) || std::memcmp(hdr.key, want_key, 32) != 0 || hdr.payload_size > (1ull << 32))
        return std::nullopt;
    std::vector<unsigned char> payload(hdr.payload_size);
    if (!in.read(reinterpret_cast<char*>(payload.data()), std::streamsize(payload.size()))) return std::nullopt;
    if (in.peek() != std::ifstream::traits_type::eof()) return std::nullopt; // trailing bytes
    const auto sum = Sha256().update(payload.data(), payload.size()).digest();
    if (std::memcmp(sum.data(), hdr.checksum, 32) != 0) return std::nullopt;
    return payload;
}

void cache_store(const std::string& key, const std::vector<unsigned char>& payload) {
    const std::string dir = cache_directory();
    if (dir.empty()) return;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return warn_once(dir, ec.message());

    Header hdr{};
    std::memcpy(hdr.magic, magic, sizeof magic);
    hdr.version = cache_format_version;
    key_bytes(key, hdr.key);
    hdr.payload_size = payload.size();
    const auto sum = Sha256().update(payload.data(), payload.size()).digest();
    std::memcpy(hdr.checksum, sum.data(), 32);

    // Write to a unique temporary file, then rename over the entry: readers never see a partial file.
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    const fs::path final_path = entry_path(dir, key);
    const fs::path tmp = fs::path(dir) / fmt::format(".{}.{}.{:x}.tmp", key, ::getpid(), rng());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(&hdr), sizeof hdr);
        out.write(reinterpret_cast<const char*>(payload.data()), std::streamsize(payload.size()));
        out.close();
        if (!out) {
            fs::remove(tmp, ec);
            return warn_once(dir, "cannot write " + tmp.string());
        }
    }
    fs::rename(tmp, final_path, ec);
    if (ec) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        warn_once(dir, ec.message());
    }
}

} // namespace xgpu::detail
