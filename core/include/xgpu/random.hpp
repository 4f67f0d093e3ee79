// xgpu random numbers: a counter-based generator (Philox4x32-10, Salmon et al., SC'11) that gives
// the same numbers on every backend and device, and on the host, for the same seed.
//
//   xgpu::Philox gen(ctx, 1234);                       // seed 1234, counter 0
//   auto u = gen.uniform<float>({n});                   // [0, 1)
//   auto v = gen.uniform<double>({rows, cols}, -1, 1);  // [-1, 1)
//   auto k = gen.integers<std::int32_t>({n}, 0, 6);     // [0, 6)
//   auto z = gen.normal<double>({n}, 0.0, 2.0);         // mean 0, standard deviation 2
//   gen.fill_uniform(x(xgpu::slice(0, {}, 2)));         // into an existing array or view
//
// The stream. A generator is a 64-bit seed and a 64-bit block counter. Block b is
//   philox4x32_10(counter = {low32(b), high32(b), 0, 0}, key = {low32(seed), high32(seed)}),
// four 32-bit words w[0..3]. A call that makes n numbers takes them from blocks counter + 0,
// counter + 1, ... (a call that would pass block 2^64 - 1 throws: the stream never wraps), a fixed number E of numbers
// per block, in the C order of the destination's elements: element i comes from block counter + i / E, from its 4/E
// words that start at word (i % E) * 4/E. Words left in the last block are dropped, and the counter then advances by
// ceil(n / E), so consecutive calls never reuse a block; a call that makes no numbers leaves it unchanged. Per
// distribution:
//   uniform<float>     E = 4  u = (w >> 8) * 2^-24, in [0, 1)
//   uniform<double>    E = 2  u = ((w[2j] << 32 | w[2j+1]) >> 11) * 2^-53, in [0, 1)
//     with a range: min(fma(hi - lo, u, lo), the largest T below hi): fma rounded once, then kept
//     below hi, so that the interval is exactly [lo, hi) as PyOpenCL's and curand's users expect
//     (numpy may return hi itself when the rounding goes that way). With hi <= lo nothing is clipped.
//   integers<T>        [lo, hi) as lo + floor(x * (hi - lo) / 2^bits), x a random number of twice
//     T's width: 1- and 2-byte T: E = 4, x = w (32 bits); 4-byte T: E = 2, x = w[2j] << 32 |
//     w[2j+1]; 8-byte T: E = 1, x = the 128 bits w[0] w[1] w[2] w[3], most significant first.
//     No rejection, so every call takes a fixed number of words; the price is a bias: a value's
//     probability is off by at most one part in 2^bits / (hi - lo), that is by less than 2^-16 for
//     1- and 2-byte types, 2^-32 for 4-byte and 2^-64 for 8-byte types (and not at all when hi - lo
//     is a power of two).
//   normal<float>      E = 4  Box-Muller on the word pairs (w0, w1) and (w2, w3)
//   normal<double>     E = 2  Box-Muller on the 53-bit uniforms from (w0, w1) and (w2, w3)
//     a pair (x, y) gives u1 = the uniform of x plus 2^-24 (float) or 2^-53 (double), in (0, 1],
//     u2 = the uniform of y in [0, 1), r = sqrt(-2 log u1), and the two numbers
//     mean + stddev * r cos(2 pi u2), mean + stddev * r sin(2 pi u2), in that order.
// Uniforms and integers are exact (integer math, then one multiplication by a power of two, then
// at most one fused multiply-add), so device and host agree to the bit; normals use the device's
// log, sqrt, sin and cos and may differ from the host's in the last few ulps.
//
// A generator is a value (copying it copies seed and counter: the copy repeats the stream) and,
// like numpy's Generator, not safe to share between threads without a lock.
#pragma once

#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "xgpu/array.hpp"

namespace xgpu {

// The Philox4x32-10 block function: four counter words and two key words to four random words.
std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> counter, std::array<std::uint32_t, 2> key);

template <class T>
concept RandomReal = std::same_as<T, float> || std::same_as<T, double>;
template <class T>
concept RandomInteger = std::integral<T> && !std::same_as<T, bool> && Element<T>;

namespace detail {
// Each fills dst (any layout) from the stream at (seed, counter) and returns the blocks it used.
std::uint64_t philox_uniform(const ArrayDesc& dst, std::uint64_t seed, std::uint64_t counter, double lo, double hi);
std::uint64_t philox_normal(const ArrayDesc& dst, std::uint64_t seed, std::uint64_t counter, double mean,
                            double stddev);
// lo as a 64-bit pattern (sign-extended for signed types), range = hi - lo > 0.
std::uint64_t philox_integers(const ArrayDesc& dst, std::uint64_t seed, std::uint64_t counter, std::uint64_t lo,
                              std::uint64_t range);
} // namespace detail

class Philox {
public:
    // A generator seeded from std::random_device, as numpy.random.default_rng().
    explicit Philox(const Context& ctx);
    Philox(const Context& ctx, std::uint64_t seed, std::uint64_t counter = 0)
        : ctx_(ctx), seed_(seed), counter_(counter) {}

    const Context& context() const { return ctx_; }
    std::uint64_t seed() const { return seed_; }
    // The next block the generator will use; set_counter(c) jumps anywhere in the stream.
    std::uint64_t counter() const { return counter_; }
    void set_counter(std::uint64_t c) { counter_ = c; }

    // New C-contiguous arrays.
    template <RandomReal T> Array<T> uniform(const Shape& shape, T lo = 0, T hi = 1) {
        auto a = empty<T>(ctx_, shape);
        fill_uniform(a, lo, hi);
        return a;
    }
    template <RandomReal T> Array<T> normal(const Shape& shape, T mean = 0, T stddev = 1) {
        auto a = empty<T>(ctx_, shape);
        fill_normal(a, mean, stddev);
        return a;
    }
    // [lo, hi), and [0, hi) (numpy's Generator.integers).
    template <RandomInteger T> Array<T> integers(const Shape& shape, T lo, T hi) {
        auto a = empty<T>(ctx_, shape);
        fill_integers(a, lo, hi);
        return a;
    }
    template <RandomInteger T> Array<T> integers(const Shape& shape, T hi) { return integers<T>(shape, T(0), hi); }

    // Into existing arrays or views (the stream follows the view's C order).
    template <RandomReal T> const Array<T>& fill_uniform(const Array<T>& a, T lo = 0, T hi = 1) {
        counter_ += detail::philox_uniform(a.desc(), seed_, counter_, lo, hi);
        return a;
    }
    template <RandomReal T> const Array<T>& fill_normal(const Array<T>& a, T mean = 0, T stddev = 1) {
        counter_ += detail::philox_normal(a.desc(), seed_, counter_, mean, stddev);
        return a;
    }
    template <RandomInteger T> const Array<T>& fill_integers(const Array<T>& a, T lo, T hi) {
        if (!(lo < hi))
            throw InvalidArgument("xgpu: integers: lo (" + std::to_string(lo) + ") must be less than hi (" +
                                  std::to_string(hi) + ")");
        counter_ += detail::philox_integers(a.desc(), seed_, counter_, std::uint64_t(std::int64_t(lo)),
                                            std::uint64_t(hi) - std::uint64_t(lo));
        return a;
    }

    // The same streams computed on the host: n numbers from (seed, counter), as a generator at
    // that state would make them. References for tests, and for CPU code that must agree.
    template <RandomReal T>
    static std::vector<T> host_uniform(std::uint64_t seed, std::uint64_t counter, std::size_t n, T lo = 0, T hi = 1);
    template <RandomReal T>
    static std::vector<T> host_normal(std::uint64_t seed, std::uint64_t counter, std::size_t n, T mean = 0,
                                      T stddev = 1);
    template <RandomInteger T>
    static std::vector<T> host_integers(std::uint64_t seed, std::uint64_t counter, std::size_t n, T lo, T hi);
    // Numbers per block (E above) for a distribution and type.
    enum class Distribution { uniform, normal, integers };
    static unsigned per_block(Distribution d, DType dtype);
    // The bound a uniform in [lo, hi) is clipped to: the largest T below hi (no clipping where hi <= lo).
    template <RandomReal T> static T below(T lo, T hi) {
        return hi > lo ? std::nextafter(hi, lo) : std::numeric_limits<T>::max();
    }

private:
    Context ctx_;
    std::uint64_t seed_ = 0;
    std::uint64_t counter_ = 0;
};

} // namespace xgpu
