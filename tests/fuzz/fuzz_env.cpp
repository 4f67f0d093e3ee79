// libFuzzer: the XGPU_* value parsers (core/src/env.hpp). The first byte picks the parser, the
// rest is the value. What a parser accepts must satisfy its stated limits and read back the same
// when written out again.
#include <cstddef>
#include <cstdint>
#include <string>

#include "env.hpp"
#include "xgpu/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace env = xgpu::detail::env;
    if (size == 0) return 0;
    const std::string value(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        switch ((data[0] + 2) % 5) { // '0' to '4' pick the parsers in order, as the seeds do
        case 0: {
            const bool on = env::parse_switch("XGPU_POOL", value);
            if (env::parse_switch("XGPU_POOL", on ? "on" : "off") != on) __builtin_trap();
            break;
        }
        case 1: {
            const std::string b = env::parse_backend(value);
            if (b != "cuda" && b != "opencl" && b != "auto") __builtin_trap();
            break;
        }
        case 3: {
            const std::string m = env::parse_autotune(value);
            if (m != "off" && m != "cached" && m != "on" && m != "force") __builtin_trap();
            break;
        }
        case 4: {
            const double s = env::parse_seconds("XGPU_AUTOTUNE_BUDGET", value);
            if (!(s > 0 && s <= 86400)) __builtin_trap();
            break;
        }
        default: {
            const auto t = env::parse_scan_tile(value);
            const std::uint64_t tile = std::uint64_t(t.wg) * t.k;
            if (t.wg == 0 || t.wg > 1024 || (t.wg & (t.wg - 1)) || tile < 2 || tile > (1u << 20)) __builtin_trap();
            std::string again = std::to_string(t.wg) + "x" + std::to_string(t.k);
            if (t.staged) again += *t.staged ? "s" : "d";
            const auto u = env::parse_scan_tile(again);
            if (u.wg != t.wg || u.k != t.k || u.staged != t.staged) __builtin_trap();
            break;
        }
        }
    } catch (const xgpu::InvalidArgument&) {
        // refused, naming the variable: fine; anything else escapes and is a crash
    }
    return 0;
}
