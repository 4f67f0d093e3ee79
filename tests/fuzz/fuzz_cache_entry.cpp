// libFuzzer: the compile cache's entry reader on arbitrary bytes (core/src/cache.hpp). Whatever it
// accepts must be exactly what the writer produces for that payload, and what the writer produces
// for the input as a payload must read back as it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cache.hpp"

namespace {
// The seed corpus's entries (tests/fuzz/corpus/fuzz_cache_entry) are stored under this key.
const std::string key = "5fd924625f6ab16a19cc9807c7c506ae1813490e4ba675f843d5a10e0baacdb8";
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace xgpu::detail;
    const std::vector<unsigned char> bytes(data, data + size);
    if (const auto payload = cache_entry_parse(bytes, key)) {
        if (cache_entry_bytes(key, *payload) != bytes) __builtin_trap();
    }
    const auto written = cache_entry_bytes(key, bytes);
    const auto read = cache_entry_parse(written, key);
    if (!read || *read != bytes) __builtin_trap();
    // The same entry under another key is a miss.
    if (cache_entry_parse(written, std::string(64, '0'))) __builtin_trap();
    return 0;
}
