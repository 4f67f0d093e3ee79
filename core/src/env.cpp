#include "env.hpp"

#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "xgpu/error.hpp"

namespace xgpu::detail::env {
namespace {

// Scan tiles: a work-group no larger than any device allows, and a tile whose element count stays
// far from 32-bit overflow in the kernels' index arithmetic.
constexpr std::uint64_t max_tile_wg = 1024;
constexpr std::uint64_t max_tile_elements = std::uint64_t(1) << 20;

char lower(char c) {
    return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

[[noreturn]] void invalid(std::string_view name, std::string_view value, std::string_view accepted) {
    throw InvalidArgument(fmt::format("xgpu: {}='{}' is not valid: {}", name, value, accepted));
}

// Digits from `pos` on as a number, stopping at the first non-digit. Nothing when there is no
// digit or the number exceeds `limit` (checked digit by digit: no overflow for any length).
std::optional<std::uint64_t> digits(std::string_view s, std::size_t& pos, std::uint64_t limit) {
    const std::size_t begin = pos;
    std::uint64_t v = 0;
    for (; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos) {
        v = v * 10 + std::uint64_t(s[pos] - '0');
        if (v > limit) return std::nullopt;
    }
    if (pos == begin) return std::nullopt;
    return v;
}

bool switch_or(const char* name, bool unset) {
    const auto v = value(name);
    return v ? parse_switch(name, *v) : unset;
}

} // namespace

bool equal_nocase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

std::optional<std::string> value(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
}

bool parse_switch(std::string_view name, std::string_view value) {
    for (const char* on : {"on", "1", "true", "yes"})
        if (equal_nocase(value, on)) return true;
    for (const char* off : {"off", "0", "false", "no"})
        if (equal_nocase(value, off)) return false;
    invalid(name, value, "accepted values are on, off, 1, 0, true, false, yes and no (in any case)");
}

std::string parse_backend(std::string_view value) {
    for (const char* b : {"cuda", "opencl", "auto"})
        if (equal_nocase(value, b)) return b;
    invalid("XGPU_BACKEND", value, "accepted values are cuda, opencl and auto (in any case)");
}

std::string parse_autotune(std::string_view value) {
    for (const char* m : {"off", "cached", "on", "force"})
        if (equal_nocase(value, m)) return m;
    invalid("XGPU_AUTOTUNE", value, "accepted values are off, cached, on and force (in any case)");
}

double parse_seconds(std::string_view name, std::string_view value) {
    // Digits, optionally a point and more digits: no signs, exponents, inf or nan.
    std::size_t pos = 0;
    double v = 0;
    bool any = false;
    for (; pos < value.size() && value[pos] >= '0' && value[pos] <= '9'; ++pos, any = true)
        v = v * 10 + (value[pos] - '0');
    if (pos < value.size() && value[pos] == '.') {
        double scale = 0.1;
        for (++pos; pos < value.size() && value[pos] >= '0' && value[pos] <= '9'; ++pos, any = true, scale /= 10)
            v += (value[pos] - '0') * scale;
    }
    if (!any || pos != value.size() || v <= 0 || v > 86400)
        invalid(name, value, "expected a positive number of seconds of at most 86400, e.g. 2 or 0.5");
    return v;
}

std::string parse_spmv_format(std::string_view value, std::span<const std::string_view> formats) {
    for (std::string_view f : formats)
        if (equal_nocase(value, f)) return std::string(f);
    invalid("XGPU_SPMV_FORMAT", value, fmt::format("accepted values are {} (in any case)", fmt::join(formats, ", ")));
}

ScanTile parse_scan_tile(std::string_view value) {
    const auto fail = [&](std::string_view why) {
        invalid("XGPU_SCAN_TILE", value,
                fmt::format("{}; expected <work-group size>x<elements per work-item>, optionally followed by s "
                            "(staged) or d (direct), e.g. 256x8s: the work-group size a power of two of at most {}, "
                            "the tile (their product) of 2 to {} elements",
                            why, max_tile_wg, max_tile_elements));
    };
    std::size_t pos = 0;
    const auto wg = digits(value, pos, max_tile_wg);
    if (!wg) fail("the work-group size is not a number of at most 1024");
    if (pos == value.size() || lower(value[pos]) != 'x') fail("no 'x' after the work-group size");
    ++pos;
    const auto k = digits(value, pos, max_tile_elements);
    if (!k) fail("the elements per work-item are not a number of at most 2^20");
    std::optional<bool> staged;
    if (pos < value.size()) {
        const char mode = lower(value[pos++]);
        if (mode != 's' && mode != 'd') fail("the kind is neither s nor d");
        staged = mode == 's';
    }
    if (pos != value.size()) fail("characters after the tile");
    if (*wg == 0 || (*wg & (*wg - 1)) != 0) fail("the work-group size is not a power of two");
    const std::uint64_t tile = *wg * *k; // both bounded above: no overflow in 64 bits
    if (tile < 2 || tile > max_tile_elements) fail("the tile is out of range");
    return {unsigned(*wg), unsigned(*k), staged};
}

std::string backend() {
    const auto v = value("XGPU_BACKEND");
    return v ? parse_backend(*v) : "auto";
}

std::string autotune() {
    const auto v = value("XGPU_AUTOTUNE");
    return v ? parse_autotune(*v) : "cached";
}

double autotune_budget() {
    const auto v = value("XGPU_AUTOTUNE_BUDGET");
    return v ? parse_seconds("XGPU_AUTOTUNE_BUDGET", *v) : 2.0;
}

std::string device() {
    return value("XGPU_DEVICE").value_or("");
}

bool cache_enabled() {
    return switch_or("XGPU_CACHE", true);
}

bool pool_enabled() {
    return switch_or("XGPU_POOL", true);
}

bool profile_enabled() {
    return switch_or("XGPU_PROFILE", false);
}

std::optional<std::string> dump_kernels() {
    return value("XGPU_DUMP_KERNELS");
}

std::optional<std::string> spmv_format(std::span<const std::string_view> formats) {
    const auto v = value("XGPU_SPMV_FORMAT");
    if (!v) return std::nullopt;
    return parse_spmv_format(*v, formats);
}

std::optional<ScanTile> scan_tile() {
    const auto v = value("XGPU_SCAN_TILE");
    if (!v) return std::nullopt;
    return parse_scan_tile(*v);
}

} // namespace xgpu::detail::env
