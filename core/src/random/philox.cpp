// Philox4x32-10 on the host, written from the definition in Salmon, Moraes, Dror and Shaw,
// "Parallel random numbers: as easy as 1, 2, 3" (SC'11), and the host side of every stream in
// random.hpp. kernels/philox.h is the device twin; tests/test_random.cpp holds both to Random123's
// known answers and to each other.
#include <cmath>

#include <fmt/format.h>

#include "xgpu/random.hpp"

namespace xgpu {

namespace {
constexpr std::uint32_t multiplier[2] = {0xD2511F53u, 0xCD9E8D57u};
constexpr std::uint32_t weyl[2] = {0x9E3779B9u, 0xBB67AE85u}; // golden ratio and sqrt(3) - 1, in 32 bits
constexpr int rounds = 10;

using Block = std::array<std::uint32_t, 4>;

Block block_at(std::uint64_t seed, std::uint64_t b) {
    return philox4x32_10({std::uint32_t(b), std::uint32_t(b >> 32), 0, 0},
                         {std::uint32_t(seed), std::uint32_t(seed >> 32)});
}

constexpr float two_m24 = 0x1p-24f;
constexpr double two_m53 = 0x1p-53;
float to_float(std::uint32_t x) {
    return float(x >> 8) * two_m24;
}
float to_float_nonzero(std::uint32_t x) {
    return float((x >> 8) + 1) * two_m24;
}
std::uint64_t bits53(std::uint32_t a, std::uint32_t b) {
    return ((std::uint64_t(a) << 32) | b) >> 11;
}
double to_double(std::uint32_t a, std::uint32_t b) {
    return double(bits53(a, b)) * two_m53;
}
double to_double_nonzero(std::uint32_t a, std::uint32_t b) {
    return double(bits53(a, b) + 1) * two_m53;
}

// floor(x * range / 2^bits) for x of 32, 64 or 128 bits, with the host's 128-bit integers: an
// independent route to the device's 32-bit-piece arithmetic.
using u128 = unsigned __int128;
std::uint64_t bounded(const std::uint32_t* w, unsigned words, std::uint64_t range) {
    if (words == 1) return (std::uint64_t(w[0]) * range) >> 32;
    if (words == 2) return std::uint64_t((u128((std::uint64_t(w[0]) << 32) | w[1]) * range) >> 64);
    const u128 h = (std::uint64_t(w[0]) << 32) | w[1], l = (std::uint64_t(w[2]) << 32) | w[3];
    const u128 hi = h * range, lo_hi = (l * range) >> 64; // x range = hi 2^64 + l range
    return std::uint64_t((hi + lo_hi) >> 64);
}

// Calls f(block, numbers_in_it, first_element) over the blocks n numbers take, E per block.
template <class F> void for_each_block(std::uint64_t seed, std::uint64_t counter, std::size_t n, unsigned per, F f) {
    for (std::size_t first = 0, b = 0; first < n; first += per, ++b)
        f(block_at(seed, counter + b), std::min<std::size_t>(per, n - first), first);
}
} // namespace

std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> x, std::array<std::uint32_t, 2> key) {
    for (int r = 0; r < rounds; ++r) {
        if (r > 0) // the key schedule: a Weyl sequence
            for (int j = 0; j < 2; ++j)
                key[j] += weyl[j];
        const std::uint64_t p0 = std::uint64_t(multiplier[0]) * x[0];
        const std::uint64_t p1 = std::uint64_t(multiplier[1]) * x[2];
        x = {std::uint32_t(p1 >> 32) ^ x[1] ^ key[0], std::uint32_t(p1), std::uint32_t(p0 >> 32) ^ x[3] ^ key[1],
             std::uint32_t(p0)};
    }
    return x;
}

unsigned Philox::per_block(Distribution d, DType dtype) {
    if (d == Distribution::integers) {
        if (!is_integer(dtype))
            throw InvalidArgument(fmt::format("xgpu: random integers of {} are not supported", name(dtype)));
        const std::size_t size = info(dtype).size;
        return size <= 2 ? 4 : size == 4 ? 2 : 1;
    }
    if (dtype == DType::float32) return 4;
    if (dtype == DType::float64) return 2;
    throw InvalidArgument(fmt::format("xgpu: random {} numbers of {} are not supported; use float32 or float64",
                                      d == Distribution::uniform ? "uniform" : "normal", name(dtype)));
}

template <RandomReal T>
std::vector<T> Philox::host_uniform(std::uint64_t seed, std::uint64_t counter, std::size_t n, T lo, T hi) {
    std::vector<T> out(n);
    const T scale = hi - lo, top = below(lo, hi);
    const unsigned per = per_block(Distribution::uniform, dtype_v<T>);
    for_each_block(seed, counter, n, per, [&](const Block& w, std::size_t m, std::size_t first) {
        for (std::size_t j = 0; j < m; ++j) {
            T u;
            if constexpr (std::is_same_v<T, float>)
                u = to_float(w[j]);
            else
                u = to_double(w[2 * j], w[2 * j + 1]);
            out[first + j] = std::min(std::fma(scale, u, lo), top);
        }
    });
    return out;
}

template <RandomReal T>
std::vector<T> Philox::host_normal(std::uint64_t seed, std::uint64_t counter, std::size_t n, T mean, T stddev) {
    if (!(stddev >= 0)) throw InvalidArgument(fmt::format("xgpu: normal: stddev ({}) must not be negative", stddev));
    std::vector<T> out(n);
    const unsigned per = per_block(Distribution::normal, dtype_v<T>);
    for_each_block(seed, counter, n, per, [&](const Block& w, std::size_t m, std::size_t first) {
        for (std::size_t j = 0; j < m; j += 2) {
            T u1, u2;
            if constexpr (std::is_same_v<T, float>) {
                u1 = to_float_nonzero(w[j]);
                u2 = to_float(w[j + 1]);
            } else {
                u1 = to_double_nonzero(w[0], w[1]);
                u2 = to_double(w[2], w[3]);
            }
            const T r = std::sqrt(T(-2) * std::log(u1)), t = T(6.283185307179586) * u2;
            out[first + j] = mean + stddev * (r * std::cos(t));
            if (j + 1 < m) out[first + j + 1] = mean + stddev * (r * std::sin(t));
        }
    });
    return out;
}

template <RandomInteger T>
std::vector<T> Philox::host_integers(std::uint64_t seed, std::uint64_t counter, std::size_t n, T lo, T hi) {
    if (!(lo < hi)) throw InvalidArgument(fmt::format("xgpu: integers: lo ({}) must be less than hi ({})", +lo, +hi));
    std::vector<T> out(n);
    const std::uint64_t base = std::uint64_t(std::int64_t(lo)), range = std::uint64_t(hi) - std::uint64_t(lo);
    const unsigned per = per_block(Distribution::integers, dtype_v<T>), words = 4 / per;
    for_each_block(seed, counter, n, per, [&](const Block& w, std::size_t m, std::size_t first) {
        for (std::size_t j = 0; j < m; ++j)
            out[first + j] = T(base + bounded(&w[j * words], words, range));
    });
    return out;
}

#define XGPU_RANDOM_REAL(T)                                                                                            \
    template std::vector<T> Philox::host_uniform(std::uint64_t, std::uint64_t, std::size_t, T, T);                     \
    template std::vector<T> Philox::host_normal(std::uint64_t, std::uint64_t, std::size_t, T, T);
XGPU_RANDOM_REAL(float)
XGPU_RANDOM_REAL(double)
#undef XGPU_RANDOM_REAL
#define XGPU_RANDOM_INTEGER(T)                                                                                         \
    template std::vector<T> Philox::host_integers(std::uint64_t, std::uint64_t, std::size_t, T, T);
XGPU_RANDOM_INTEGER(std::int8_t)
XGPU_RANDOM_INTEGER(std::int16_t)
XGPU_RANDOM_INTEGER(std::int32_t)
XGPU_RANDOM_INTEGER(std::int64_t)
XGPU_RANDOM_INTEGER(std::uint8_t)
XGPU_RANDOM_INTEGER(std::uint16_t)
XGPU_RANDOM_INTEGER(std::uint32_t)
XGPU_RANDOM_INTEGER(std::uint64_t)
#undef XGPU_RANDOM_INTEGER

} // namespace xgpu
