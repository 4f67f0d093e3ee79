// Random arrays on the device: one generated kernel per (distribution, element type), one
// work-item per Philox block, with seed, counter and range as arguments so that a new seed or range
// reuses the kernel. The stream is defined in xgpu/random.hpp; kernels/philox.h holds the block
// function and the conversions.
#include <cmath>
#include <cstdint>
#include <random>

#include <fmt/format.h>

#include "../codegen/elementwise.hpp"
#include "../codegen/generated.hpp"
#include "../codegen/skeleton.hpp"
#include "xgpu/random.hpp"

namespace xgpu {

Philox::Philox(const Context& ctx) : ctx_(ctx) {
    std::random_device rd;
    seed_ = (std::uint64_t(rd()) << 32) | rd();
}

namespace detail {

namespace {
using Distribution = Philox::Distribution;

const char* dist_name(Distribution d) {
    return d == Distribution::uniform ? "uniform" : d == Distribution::normal ? "normal" : "integers";
}

// The statements that turn block `w` into v[0 .. per-1]; a, b and c are the kernel's scalars.
// `clip`: uniforms are kept below hi (only generated where the largest u can round up to hi, so
// that the common ranges pay nothing for it).
std::string convert(Distribution d, DType t, unsigned per, bool clip) {
    const bool f32 = t == DType::float32;
    switch (d) {
    case Distribution::uniform: { // a = lo, b = hi - lo, c = the largest value below hi
        const char* u = f32 ? "xgpu_philox_float(w.v[j])" : "xgpu_philox_double(w.v[2 * j], w.v[2 * j + 1])";
        if (!clip) return fmt::format("  for (int j = 0; j < {}; ++j) v[j] = fma(b, {}, a);\n", per, u);
        return fmt::format("  for (int j = 0; j < {}; ++j) {{ const {} x = fma(b, {}, a); v[j] = x < c ? x : c; }}\n",
                           per, info(t).device_name, u);
    }
    case Distribution::normal: { // a = mean, b = stddev; Box-Muller on pairs of uniforms
        const std::string u1 = f32 ? "xgpu_philox_float_nonzero(w.v[j])" : "xgpu_philox_double_nonzero(w.v[0], w.v[1])";
        const std::string u2 = f32 ? "xgpu_philox_float(w.v[j + 1])" : "xgpu_philox_double(w.v[2], w.v[3])";
        const char* s = f32 ? "f" : "";
        return fmt::format("  for (int j = 0; j < {0}; j += 2) {{\n"
                           "    const {1} r = sqrt(-2.0{2} * log({3})), t = 6.283185307179586{2} * {4};\n"
                           "    v[j] = a + b * (r * cos(t));\n"
                           "    v[j + 1] = a + b * (r * sin(t));\n"
                           "  }}\n",
                           per, info(t).device_name, s, u1, u2);
    }
    case Distribution::integers: { // a = lo (64-bit pattern), b = hi - lo
        const char* offset = per == 4   ? "xgpu_philox_bounded32(w.v[j], b)"
                             : per == 2 ? "xgpu_philox_bounded64(w.v[2 * j], w.v[2 * j + 1], b)"
                                        : "xgpu_philox_bounded128(w.v[0], w.v[1], w.v[2], w.v[3], b)";
        return fmt::format("  for (int j = 0; j < {}; ++j) v[j] = ({})(a + {});\n", per, info(t).device_name, offset);
    }
    }
    return {};
}

// The CPU form of the uniform kernels (whole guard-free work-groups, the CPU chooser's elementwise
// shape): each work-item makes `vector_blocks` consecutive blocks, with kernels/philox_vectors.h's
// vectors where the dialect has them (XGPU_HAS_VECTORS) and the blocks are whole, else (the end of
// the range, or a dialect without vectors) one block after another as elsewhere. On PoCL (raw
// OpenCL, AVX-512) many blocks a work-item beat one block a work-item several times over, more
// blocks beat fewer (32, the most tried, was the fastest), and the words in 64-bit lanes (no
// conversions around the products) beat uint8/uint16 lanes; the bits are the same in every form.
constexpr unsigned vector_blocks = 32;

bool vector_form(Distribution d, const LaunchShape& shape) {
    return d == Distribution::uniform && shape.whole_groups;
}

// The vector statements of the CPU form for blocks g0 .. g0 + 31 (two sets of 16, their numbers
// stored side by side, 16 at a time).
std::string vector_uniform(DType t, unsigned per, bool clip) {
    const bool f32 = t == DType::float32;
    const char* V = f32 ? "float16" : "double16";
    std::string code = "    xgpu_philox_block16 w16[2];\n"
                       "    xgpu_philox32_at(counter + g0, key0, key1, &w16[0], &w16[1]);\n";
    for (unsigned set = 0; set < 2; ++set) {
        for (unsigned j = 0; j < per; ++j) {
            const std::string u =
                f32 ? fmt::format("xgpu_philox16_float(w16[{}].v[{}])", set, j)
                    : fmt::format("xgpu_philox16_double(w16[{0}].v[{1}], w16[{0}].v[{2}])", set, 2 * j, 2 * j + 1);
            code += fmt::format("    {0} u{1}_{2} = fma(({0})(b), {3}, ({0})(a));\n", V, set, j, u);
            if (clip) code += fmt::format("    u{0}_{1} = u{0}_{1} < ({2})(c) ? u{0}_{1} : ({2})(c);\n", set, j, V);
        }
        // Number e of the set's 16 blocks is word e % per of block e / per.
        for (unsigned first = 0; first < 16 * per; first += 16) {
            std::string parts;
            for (unsigned e = first; e < first + 16; ++e)
                parts += fmt::format("{}u{}_{}.s{:x}", e > first ? ", " : "", set, e % per, e / per);
            code += fmt::format("    vstore16(({})({}), 0, out + offset + g0 * {} + {});\n", V, parts, per,
                                set * 16 * per + first);
        }
    }
    return code;
}

std::string kernel_source(Distribution d, DType t, bool clip, const LaunchShape& shape) {
    const unsigned per = Philox::per_block(d, t);
    const char* T = info(t).device_name;
    const char* P = d == Distribution::integers ? "uint64_t" : T;
    const bool vectors = vector_form(d, shape);
    std::string preamble(codegen::kernel_file("philox.h"));
    if (vectors) preamble += codegen::kernel_file("philox_vectors.h");
    // One block, `g` (the statements after its first number's index `first`). A whole block of 16
    // bytes (four floats, two doubles, ...) at an aligned address is one store: on GPUs four scalar
    // stores 16 bytes apart left f32 uniforms far below the triad.
    const bool wide = per * info(t).size == 16;
    const std::string store =
        wide ? "  if (m == " + std::to_string(per) + " && XGPU_IS_ALIGNED16(o)) XGPU_STORE16(o, v);\n  else\n" : "";
    const std::string block = fmt::format("  const xgpu_philox_block w = xgpu_philox_at(counter + g, key0, key1);\n"
                                          "  {3}{0} v[{1}];\n"
                                          "{2}"
                                          "  const uint64_t m = n - first < {1} ? n - first : {1};\n"
                                          "  XGPU_GLOBAL {0}* o = out + offset + first;\n"
                                          "{4}"
                                          "  for (uint64_t j = 0; j < m; ++j) o[j] = v[j];\n",
                                          T, per, convert(d, t, per, clip), wide ? "XGPU_ALIGNED16 " : "", store);
    const std::string body = vectors ? fmt::format("  const uint64_t g0 = i * {0};\n"
                                                   "#if defined(XGPU_HAS_VECTORS)\n"
                                                   "  if ((g0 + {0}) * {1} <= n) {{\n"
                                                   "{2}"
                                                   "  }} else\n"
                                                   "#endif\n"
                                                   "  for (uint64_t g = g0; g < g0 + {0} && g * {1} < n; ++g) {{\n"
                                                   "  const uint64_t first = g * {1};\n"
                                                   "{3}"
                                                   "  }}\n",
                                                   vector_blocks, per, vector_uniform(t, per, clip), block)
                                     : fmt::format("  const uint64_t g = i, first = g * {};\n", per) + block;
    return codegen::stream_source({fmt::format("xgpu_philox_{}", dist_name(d)), preamble,
                                   fmt::format("XGPU_GLOBAL {0}* out, const uint64_t offset, const uint64_t n, "
                                               "const uint32_t key0, const uint32_t key1, const uint64_t counter, "
                                               "const {1} a, const {1} b, const {1} c, ",
                                               T, P),
                                   "i", body},
                                  shape);
}

// Fills dst from the stream with scalars a, b and c (of type P); returns the blocks used.
template <class P>
std::uint64_t generate(Distribution d, const ArrayDesc& dst, std::uint64_t seed, std::uint64_t counter, P a, P b,
                       P c = P(), bool clip = false) {
    if (!dst.buffer) throw InvalidArgument(fmt::format("xgpu: random {} into an empty Array", dist_name(d)));
    const unsigned per = Philox::per_block(d, dst.dtype);
    require_fp64(dst.context, dst.dtype);
    const std::size_t n = dst.size();
    if (n == 0) return 0;
    if (!dst.is_c_contiguous()) {
        const ArrayDesc tmp = make_array(dst.context, dst.dtype, dst.shape, Order::C);
        const std::uint64_t used = generate(d, tmp, seed, counter, a, b, c, clip);
        assign(dst, tmp);
        return used;
    }
    const Context& ctx = dst.context;
    const LaunchShape shape = codegen::stream_shape(ctx, dst.dtype);
    const Kernel k = generated_kernel(
        ctx, fmt::format("philox|{}|{}|{}|{}", dist_name(d), name(dst.dtype), clip ? "clip" : "", shape.key()),
        [&] { return kernel_source(d, dst.dtype, clip, shape); }, fmt::format("xgpu_philox_{}", dist_name(d)));
    const std::uint64_t blocks = (n + per - 1) / per, offset = std::uint64_t(dst.offset), count = n;
    if (blocks > UINT64_MAX - counter)
        throw InvalidArgument(fmt::format("xgpu: random {}: {} blocks from counter {} run past the end of the stream "
                                          "(2^64 blocks); use another seed or set_counter()",
                                          dist_name(d), blocks, counter));
    const std::uint32_t key0 = std::uint32_t(seed), key1 = std::uint32_t(seed >> 32);
    const std::uint64_t items = vector_form(d, shape) ? (blocks + vector_blocks - 1) / vector_blocks : blocks;
    codegen::launch_stream(ctx, k,
                           {make_arg(dst.buffer), make_arg(offset), make_arg(count), make_arg(key0), make_arg(key1),
                            make_arg(counter), make_arg(a), make_arg(b), make_arg(c)},
                           items, shape);
    return blocks;
}
} // namespace

std::uint64_t philox_uniform(const ArrayDesc& dst, std::uint64_t seed, std::uint64_t counter, double lo, double hi) {
    // fma(b, u, a) rises with u (b > 0): only where the largest u (1 - 2^-24 or 1 - 2^-53) can
    // round up to hi does the kernel clip.
    auto run = [&](auto l, auto h, auto largest_u) {
        const auto b = h - l, c = Philox::below(l, h);
        return generate(Distribution::uniform, dst, seed, counter, l, b, c, std::fma(b, largest_u, l) > c);
    };
    if (dst.dtype == DType::float32) // the scale in float, as the host reference computes it
        return run(float(lo), float(hi), 1.0f - 0x1p-24f);
    return run(lo, hi, 1.0 - 0x1p-53);
}

std::uint64_t philox_normal(const ArrayDesc& dst, std::uint64_t seed, std::uint64_t counter, double mean,
                            double stddev) {
    if (!(stddev >= 0)) throw InvalidArgument(fmt::format("xgpu: normal: stddev ({}) must not be negative", stddev));
    if (dst.dtype == DType::float32)
        return generate(Distribution::normal, dst, seed, counter, float(mean), float(stddev));
    return generate(Distribution::normal, dst, seed, counter, mean, stddev);
}

std::uint64_t philox_integers(const ArrayDesc& dst, std::uint64_t seed, std::uint64_t counter, std::uint64_t lo,
                              std::uint64_t range) {
    return generate(Distribution::integers, dst, seed, counter, lo, range);
}

} // namespace detail
} // namespace xgpu
