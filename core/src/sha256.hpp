// SHA-256, for compile-cache keys and entry checksums.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace xgpu::detail {

class Sha256 {
public:
    Sha256();
    Sha256& update(const void* data, std::size_t bytes);
    Sha256& update(std::string_view s) { return update(s.data(), s.size()); }
    // Adds a length-prefixed field, so that ("ab","c") and ("a","bc") hash differently.
    Sha256& field(std::string_view s);
    std::array<std::uint8_t, 32> digest();
    std::string hex_digest();

private:
    void block(const std::uint8_t* p);
    std::array<std::uint32_t, 8> h_;
    std::array<std::uint8_t, 64> buf_{};
    std::size_t buffered_ = 0;
    std::uint64_t total_ = 0;
};

std::string to_hex(const std::uint8_t* data, std::size_t bytes);

} // namespace xgpu::detail
