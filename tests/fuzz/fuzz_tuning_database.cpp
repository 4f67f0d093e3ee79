// libFuzzer: the tuning database reader (core/src/tune/database.hpp) on arbitrary text, as
// tuning.json or as import_database's argument. Whatever the text holds, the reader keeps the
// entries it can check and warns about the rest, never throwing; each kept entry is filed under
// its own key, and what was imported exports and reads back to the same keys without a warning.
// import_database may refuse the whole text, with InvalidArgument only.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tune/database.hpp"
#include "xgpu/error.hpp"
#include "xgpu/warning.hpp"

namespace {
std::size_t warnings = 0;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    ::setenv("XGPU_CACHE", "off", 1); // entries are kept in memory: nothing is written
    xgpu::set_warning_handler([](const std::string&) { ++warnings; });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace tune = xgpu::tune;
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto entries = tune::detail::parse_database(text, "fuzz.json");
    for (const auto& [key, e] : entries)
        if (tune::detail::entry_key(e) != key || e.point.empty()) __builtin_trap();

    tune::detail::reset();
    try {
        tune::import_database(text);
    } catch (const xgpu::InvalidArgument&) {
        return 0;
    }
    const std::string out = tune::export_database();
    const std::size_t before = warnings;
    const auto again = tune::detail::parse_database(out, "exported");
    if (warnings != before || again.size() != entries.size()) __builtin_trap();
    for (const auto& [key, e] : entries)
        if (!again.count(key)) __builtin_trap();
    tune::detail::reset();
    return 0;
}
