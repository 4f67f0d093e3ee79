// The XGPU_* environment variables, read and validated in one place. A value that is set but
// not understood is an InvalidArgument naming the variable, the value and what it accepts, so a
// typo never silently means the default. Words are case-insensitive; an empty value is unset.
//
// Each parse_* function takes the value alone (tests and the fuzzers call them directly); the
// functions named after a variable read the environment each time they are called.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace xgpu::detail::env {

// The variable's value, or nothing when it is unset or empty.
std::optional<std::string> value(const char* name);

// Equal ignoring ASCII case: how every word here is compared.
bool equal_nocase(std::string_view a, std::string_view b);

// on|off words: on, 1, true, yes / off, 0, false, no.
bool parse_switch(std::string_view name, std::string_view value);

// XGPU_BACKEND: cuda, opencl or auto, lower-cased.
std::string parse_backend(std::string_view value);

// XGPU_SPMV_FORMAT: one of `formats` (the sparse module passes its format names, so the list lives
// there), returned as listed there.
std::string parse_spmv_format(std::string_view value, std::span<const std::string_view> formats);

// XGPU_SCAN_TILE=<wg>x<k>[s|d]: work-group size (a power of two, at most 1024), elements per
// work-item (a tile wg*k of 2 to 2^20 elements), and s (staged) or d (direct) if given.
struct ScanTile {
    unsigned wg, k;
    std::optional<bool> staged;
};
ScanTile parse_scan_tile(std::string_view value);

// XGPU_AUTOTUNE: off, cached, on or force, lower-cased.
std::string parse_autotune(std::string_view value);

// XGPU_AUTOTUNE_BUDGET: seconds, a positive decimal number of at most 86400.
double parse_seconds(std::string_view name, std::string_view value);

std::string backend();                     // XGPU_BACKEND, "auto" when unset
std::string autotune();                    // XGPU_AUTOTUNE, "cached" when unset
double autotune_budget();                  // XGPU_AUTOTUNE_BUDGET, 2 when unset
std::string device();                      // XGPU_DEVICE (free text), "" when unset
bool cache_enabled();                      // XGPU_CACHE, on when unset
bool pool_enabled();                       // XGPU_POOL, on when unset
bool profile_enabled();                    // XGPU_PROFILE, off when unset
std::optional<ScanTile> scan_tile();       // XGPU_SCAN_TILE
std::optional<std::string> dump_kernels(); // XGPU_DUMP_KERNELS: a directory (free text)
std::optional<std::string> spmv_format(std::span<const std::string_view> formats); // XGPU_SPMV_FORMAT

} // namespace xgpu::detail::env
