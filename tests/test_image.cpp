// Images and samplers on every backend: round trips of every format the device has, regions,
// copies with buffers and arrays, sampling at texel centres, linear filtering against a host
// bilinear/trilinear reference, every addressing mode at and past the edges, integer reads,
// writable images, and the errors raised before any work.
#include <xgpu/elementwise.hpp>
#include <xgpu/image.hpp>
#include <xgpu/reduction.hpp>

#include <cmath>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "support.hpp"

using namespace xgpu;
using Catch::Matchers::Contains;
using test::random_vector;

namespace {

// Half floats on the host: exact for the values the tests generate (normal numbers and zero).
float half_to_float(std::uint16_t h) {
    const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
    float v = exp == 0 ? std::ldexp(float(mant), -24) : std::ldexp(float(mant + 1024), exp - 25);
    return sign ? -v : v;
}
std::uint16_t float_to_half(float f) { // f a multiple of 2^-6 with |f| < 16: exact
    if (f == 0) return 0;
    const std::uint16_t sign = f < 0 ? 0x8000 : 0;
    f = std::fabs(f);
    int e = 0;
    const float m = std::frexp(f, &e); // f = m 2^e, m in [0.5, 1)
    const int mant = int(std::lround((m * 2 - 1) * 1024));
    return std::uint16_t(sign | ((e - 1 + 15) << 10) | mant);
}

std::vector<ImageFormat> all_formats() {
    std::vector<ImageFormat> out;
    for (int t = 0; t <= int(ChannelType::float32); ++t)
        for (unsigned c : {1u, 2u, 4u}) {
            out.push_back({ChannelType(t), c, false});
            if (channel_size(ChannelType(t)) <= 2 && ChannelType(t) != ChannelType::float16)
                out.push_back({ChannelType(t), c, true});
        }
    return out;
}

// Random packed texels of `format` (valid numbers for the float formats), as bytes.
std::vector<unsigned char> random_texels(const ImageFormat& f, std::size_t texels) {
    const std::size_t n = texels * f.channels;
    std::vector<unsigned char> bytes(n * channel_size(f.type));
    if (f.type == ChannelType::float32) {
        const auto v = random_vector<float>(n, -4, 4);
        std::memcpy(bytes.data(), v.data(), bytes.size());
    } else if (f.type == ChannelType::float16) {
        const auto k = random_vector<int>(n, -256, 256);
        std::vector<std::uint16_t> h(n);
        for (std::size_t i = 0; i < n; ++i)
            h[i] = float_to_half(float(k[i]) / 64);
        std::memcpy(bytes.data(), h.data(), bytes.size());
    } else {
        const auto v = random_vector<int>(bytes.size(), 0, 255);
        for (std::size_t i = 0; i < bytes.size(); ++i)
            bytes[i] = static_cast<unsigned char>(v[i]);
    }
    return bytes;
}

// Channel `c` of texel `i` as a kernel reads it (a float for float, half and normalised formats,
// else the integer), or (0, 0, 1) in the channels the format lacks.
double channel_value(const ImageFormat& f, const unsigned char* texels, std::size_t i, unsigned c) {
    if (c >= f.channels) return c == 3 ? 1.0 : 0.0;
    const unsigned char* p = texels + (i * f.channels + c) * channel_size(f.type);
    const auto get = [&](auto v) {
        std::memcpy(&v, p, sizeof v);
        return v;
    };
    switch (f.type) {
    case ChannelType::uint8: return f.normalized ? get(std::uint8_t()) / 255.0 : get(std::uint8_t());
    case ChannelType::int8: return f.normalized ? std::max(get(std::int8_t()) / 127.0, -1.0) : get(std::int8_t());
    case ChannelType::uint16: return f.normalized ? get(std::uint16_t()) / 65535.0 : get(std::uint16_t());
    case ChannelType::int16: return f.normalized ? std::max(get(std::int16_t()) / 32767.0, -1.0) : get(std::int16_t());
    case ChannelType::uint32: return get(std::uint32_t());
    case ChannelType::int32: return get(std::int32_t());
    case ChannelType::float16: return half_to_float(get(std::uint16_t()));
    case ChannelType::float32: return get(float());
    }
    return 0;
}

// The kernels the tests sample with: `n` points of `dims` coordinates from `xy`, four channels
// each into `out` (float, int or uint by `kind`: F, I or UI), through SAMPLE or FETCH.
std::string sampling_source(unsigned dims, const std::string& kind, bool fetch) {
    const char* out_type = kind == "F" ? "float" : kind == "I" ? "int" : "uint";
    const char* vec = kind == "F" ? "float4" : kind == "I" ? "int4" : "uint4";
    std::string coords;
    for (unsigned d = 0; d < dims; ++d)
        coords += fmt::format(", {}xy[{} * i + {}]", fetch ? "(int)" : "", dims, d);
    return fmt::format(R"(
XGPU_KERNEL void read_image(XGPU_IMAGE{0}D_PARAM(im), XGPU_GLOBAL const float* xy, XGPU_GLOBAL {1}* out, const int n) {{
    const int i = (int)XGPU_GLOBAL_ID(0);
    if (i >= n) return;
    const {2} v = XGPU_{3}{0}D_{4}(im{5});
    out[4 * i] = v.x;
    out[4 * i + 1] = v.y;
    out[4 * i + 2] = v.z;
    out[4 * i + 3] = v.w;
}}
)",
                       dims, out_type, vec, fetch ? "FETCH" : "SAMPLE", kind, coords);
}

// Reads `points` (dims coordinates each) through the sampled image; four doubles per point.
std::vector<double> sample(const Context& ctx, const Image& im, const Sampler& s, const std::vector<float>& points,
                           bool fetch = false) {
    const ImageFormat& f = im.format();
    const std::string kind = f.reads_float() ? "F" : f.is_signed_int() ? "I" : "UI";
    const auto k = ctx.compile(sampling_source(im.dims(), kind, fetch)).kernel("read_image");
    const int n = int(points.size() / im.dims());
    auto xy = to_device(ctx, points);
    std::vector<double> out(4 * std::size_t(n));
    if (kind == "F") {
        auto o = empty<float>(ctx, {out.size()});
        k.launch(ctx.queue(), Grid{std::size_t(n)}, im.sampled(s), xy.buffer(), o.buffer(), n);
        const auto h = o.get();
        std::copy(h.begin(), h.end(), out.begin());
    } else {
        auto o = empty<std::int32_t>(ctx, {out.size()});
        k.launch(ctx.queue(), Grid{std::size_t(n)}, im.sampled(s), xy.buffer(), o.buffer(), n);
        const auto h = o.get();
        for (std::size_t i = 0; i < h.size(); ++i)
            out[i] = kind == "I" ? double(h[i]) : double(std::uint32_t(h[i]));
    }
    return out;
}

// The host's sampler, after the OpenCL specification (8.2 and 8.3 of OpenCL C 1.2): where a
// coordinate falls, per dimension, as texel indices and linear weights.
struct Taps {
    int i0, i1;   // texels (linear: both; nearest: i0), -1 or n for the border
    double alpha; // weight of i1 (linear)
};
Taps taps(double s, int n, const Sampler& smp) {
    const bool lin = smp.filter() == Filter::linear;
    double u = smp.normalized_coords() ? s * n : s;
    switch (smp.addressing()) {
    case Addressing::repeat: {
        u = (s - std::floor(s)) * n;
        if (!lin) {
            int i = int(std::floor(u));
            return {i > n - 1 ? i - n : i, 0, 0};
        }
        int i0 = int(std::floor(u - 0.5)), i1 = i0 + 1;
        const double a = (u - 0.5) - std::floor(u - 0.5);
        if (i0 < 0) i0 += n;
        if (i1 > n - 1) i1 -= n;
        return {i0, i1, a};
    }
    case Addressing::mirrored_repeat: {
        const double m = std::fabs(s - 2.0 * std::nearbyint(0.5 * s));
        u = m * n;
        if (!lin) return {std::min(int(std::floor(u)), n - 1), 0, 0};
        int i0 = int(std::floor(u - 0.5)), i1 = i0 + 1;
        const double a = (u - 0.5) - std::floor(u - 0.5);
        return {std::max(i0, 0), std::min(i1, n - 1), a};
    }
    default: {
        const bool edge = smp.addressing() == Addressing::clamp_to_edge;
        const auto fix = [&](int i) { return edge ? std::clamp(i, 0, n - 1) : std::clamp(i, -1, n); };
        if (!lin) return {fix(int(std::floor(u))), 0, 0};
        const int i0 = int(std::floor(u - 0.5));
        return {fix(i0), fix(i0 + 1), (u - 0.5) - std::floor(u - 0.5)};
    }
    }
}

// What the sampler returns at `point` (dims coordinates), four channels.
std::array<double, 4> reference(const Image& im, const std::vector<unsigned char>& texels, const Sampler& s,
                                const float* point) {
    const ImageFormat& f = im.format();
    const int n[3] = {int(im.width()), int(im.height()), int(im.depth())};
    Taps t[3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (unsigned d = 0; d < im.dims(); ++d)
        t[d] = taps(point[d], n[d], s);
    const bool lin = s.filter() == Filter::linear;
    std::array<double, 4> out{};
    const unsigned corners = lin ? 1u << im.dims() : 1u;
    for (unsigned corner = 0; corner < corners; ++corner) {
        double w = 1;
        int idx[3] = {0, 0, 0};
        bool border = false;
        for (unsigned d = 0; d < im.dims(); ++d) {
            const bool hi = lin && (corner >> d & 1);
            idx[d] = hi ? t[d].i1 : t[d].i0;
            if (lin) w *= hi ? t[d].alpha : 1 - t[d].alpha;
            border |= idx[d] < 0 || idx[d] >= n[d];
        }
        const std::size_t i = std::size_t(idx[0]) + std::size_t(n[0]) * (idx[1] + std::size_t(n[1]) * idx[2]);
        for (unsigned c = 0; c < 4; ++c) {
            // Border: 0 in the format's channels, and alpha 1 where it has no alpha.
            const double v = border ? (c == 3 && f.channels < 4 ? 1.0 : 0.0) : channel_value(f, texels.data(), i, c);
            out[c] += w * v;
        }
    }
    return out;
}

// The code a normalised format stores for 1.0 (its step is 1/scale).
double normalized_scale(const ImageFormat& f) {
    const bool s = f.is_signed_int();
    return channel_size(f.type) == 1 ? (s ? 127 : 255) : (s ? 32767 : 65535);
}

// NVIDIA's texture units (CUDA and NVIDIA's OpenCL) interpolate with weights of 8 fractional bits
// (CUDA C Programming Guide, "Linear Filtering": 9-bit fixed point with 8 bits of fraction), so a
// linear read may be off by up to about 1/256 of the spread of the values it blends, per
// dimension; other devices compute in float.
double linear_tolerance(const Context& ctx, unsigned dims, double spread) {
    const bool nvidia = ctx.device().vendor().find("NVIDIA") != std::string::npos;
    return nvidia ? dims * spread / 256.0 + 1e-6 : 1e-5 * (1 + spread);
}

Image make_image(const Context& ctx, const ImageFormat& f, unsigned dims, std::size_t w, std::size_t h, std::size_t d,
                 const std::vector<unsigned char>& texels) {
    return Image::from_host(ctx, f, texels.data(), w, dims > 1 ? h : 0, dims > 2 ? d : 0);
}

} // namespace

TEST_CASE("Image round trips every format the device has, whole and by region") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().info().images.supported) {
            WARN(ctx.device().name() << " has no images");
            continue;
        }
        int tested = 0;
        for (const auto& f : all_formats())
            for (unsigned dims : {1u, 2u, 3u}) {
                if (!Image::supported(ctx, f, dims)) continue;
                ++tested;
                INFO(f.str() << ", " << dims << "-D");
                const std::size_t w = 13, h = dims > 1 ? 7 : 1, d = dims > 2 ? 5 : 1;
                const auto texels = random_texels(f, w * h * d);
                Image im = make_image(ctx, f, dims, w, h, d, texels);
                CHECK(im.dims() == dims);
                CHECK(im.bytes() == texels.size());
                std::vector<unsigned char> back(texels.size());
                im.read(back.data());
                REQUIRE(back == texels);
                // A region: written from fresh texels, then read alone and in the whole image.
                ImageRegion r{{3, dims > 1 ? 2u : 0u, dims > 2 ? 1u : 0u}, {7, dims > 1 ? 4u : 1u, dims > 2 ? 3u : 1u}};
                const auto patch = random_texels(f, r.texels());
                im.write(patch.data(), r);
                std::vector<unsigned char> got(patch.size());
                im.read(got.data(), r);
                REQUIRE(got == patch);
                im.read(back.data());
                const std::size_t tb = f.texel_bytes();
                auto expect = texels;
                for (std::size_t z = 0; z < r.size[2]; ++z)
                    for (std::size_t y = 0; y < r.size[1]; ++y)
                        std::memcpy(&expect[(((z + r.origin[2]) * h + y + r.origin[1]) * w + r.origin[0]) * tb],
                                    &patch[((z * r.size[1] + y) * r.size[0]) * tb], r.size[0] * tb);
                REQUIRE(back == expect);
            }
        CHECK(tested > 0);
    }
}

TEST_CASE("Image copies with buffers and arrays, and image_from_array") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().info().images.supported) continue;
        const ImageFormat f{ChannelType::float32, 4};
        const std::size_t w = 19, h = 11;
        const auto host = random_vector<float>(w * h * 4, -1, 1);
        auto a = to_device(ctx, host, {h, w, 4});
        Image im = Image::from_array(a, 4);
        CHECK(im.dims() == 2);
        CHECK(im.width() == w);
        CHECK(im.height() == h);
        CHECK(im.format() == f);
        std::vector<float> back(host.size());
        im.read(back.data());
        REQUIRE(back == host);
        // A region out to an array, and back into another place of the image through a buffer.
        const ImageRegion r{{2, 3, 0}, {5, 4, 1}};
        auto part = empty<float>(ctx, {r.texels() * 4});
        im.copy_to(part, r);
        const auto hp = part.get();
        for (std::size_t y = 0; y < 4; ++y)
            for (std::size_t x = 0; x < 5; ++x)
                for (std::size_t c = 0; c < 4; ++c)
                    REQUIRE(hp[(y * 5 + x) * 4 + c] == host[((y + 3) * w + x + 2) * 4 + c]);
        auto buf = ctx.alloc(64 + part.nbytes());
        ctx.queue().copy(part.buffer(), buf, part.nbytes(), 0, 64);
        const ImageRegion to{{10, 0, 0}, {5, 4, 1}};
        im.copy_from(buf, 64, to);
        im.read(back.data());
        for (std::size_t y = 0; y < 4; ++y)
            for (std::size_t x = 0; x < 5; ++x)
                for (std::size_t c = 0; c < 4; ++c)
                    REQUIRE(back[(y * w + x + 10) * 4 + c] == host[((y + 3) * w + x + 2) * 4 + c]);
        // 1-D and 3-D from arrays of one channel; integers.
        const auto hi = random_vector<std::int16_t>(6 * 5 * 4, -30000, 30000);
        auto ai = to_device(ctx, hi, {6, 5, 4});
        if (Image::supported(ctx, {ChannelType::int16, 1}, 3)) {
            Image im3 = Image::from_array(ai);
            CHECK(im3.dims() == 3);
            CHECK(im3.width() == 4);
            CHECK(im3.depth() == 6);
            auto out = zeros<std::int16_t>(ctx, {hi.size()});
            im3.copy_to(out);
            REQUIRE(out.get() == hi);
        }
        auto a1 = to_device(ctx, random_vector<std::uint8_t>(33, 0, 255));
        if (Image::supported(ctx, {ChannelType::uint8, 1, true}, 1)) {
            Image im1 = Image::from_array(a1, 1, true);
            CHECK(im1.dims() == 1);
            CHECK(im1.format().normalized);
            std::vector<std::uint8_t> b1(33);
            im1.read(b1.data());
            REQUIRE(b1 == a1.get());
        }
    }
}

TEST_CASE("Sampling at texel centres returns the texels exactly, through SAMPLE and FETCH") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().info().images.supported) continue;
        int tested = 0;
        for (const auto& f : all_formats())
            for (unsigned dims : {1u, 2u, 3u}) {
                if (!Image::supported(ctx, f, dims)) continue;
                INFO(f.str() << ", " << dims << "-D");
                const std::size_t w = 9, h = dims > 1 ? 6 : 1, d = dims > 2 ? 4 : 1;
                const auto texels = random_texels(f, w * h * d);
                Image im = make_image(ctx, f, dims, w, h, d, texels);
                std::vector<float> centres, ints;
                for (std::size_t z = 0; z < d; ++z)
                    for (std::size_t y = 0; y < h; ++y)
                        for (std::size_t x = 0; x < w; ++x) {
                            const std::size_t c[3] = {x, y, z};
                            for (unsigned k = 0; k < dims; ++k) {
                                centres.push_back(float(c[k]) + 0.5f);
                                ints.push_back(float(c[k]));
                            }
                        }
                std::vector<Filter> filters{Filter::nearest};
                if (f.reads_float()) filters.push_back(Filter::linear);
                for (Filter filter : filters) {
                    const Sampler s(false, filter, Addressing::clamp_to_edge);
                    const auto got = sample(ctx, im, s, centres);
                    const auto fetched = sample(ctx, im, s, ints, true);
                    for (std::size_t i = 0; i < w * h * d; ++i)
                        for (unsigned c = 0; c < 4; ++c) {
                            const double want = channel_value(f, texels.data(), i, c);
                            // Normalised formats: the device's float of the integer code, within 1/64 of a
                            // code's step. The texture unit need not round it correctly: the H200's under
                            // CUDA reads int8 -50 as -0.393689 (-50/127 = -0.393701, 0.0016 of a step off).
                            const double tol = f.normalized ? 1.0 / (64 * normalized_scale(f)) : 0;
                            INFO("texel " << i << " channel " << c << ": sampled " << got[4 * i + c] << ", fetched "
                                          << fetched[4 * i + c] << ", want " << want);
                            REQUIRE(std::fabs(got[4 * i + c] - want) <= tol);
                            REQUIRE(std::fabs(fetched[4 * i + c] - want) <= tol);
                        }
                }
                ++tested;
            }
        CHECK(tested > 0);
    }
}

TEST_CASE("Linear filtering matches a host bilinear and trilinear reference") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().info().images.supported) continue;
        for (unsigned dims : {1u, 2u, 3u})
            for (const ImageFormat f :
                 {ImageFormat{ChannelType::float32, 1}, ImageFormat{ChannelType::float32, 4},
                  ImageFormat{ChannelType::uint8, 4, true}, ImageFormat{ChannelType::float16, 2}}) {
                if (!Image::supported(ctx, f, dims)) continue;
                INFO(f.str() << ", " << dims << "-D");
                const std::size_t w = 17, h = dims > 1 ? 12 : 1, d = dims > 2 ? 7 : 1;
                const auto texels = random_texels(f, w * h * d);
                Image im = make_image(ctx, f, dims, w, h, d, texels);
                for (bool normalized : {false, true}) {
                    const Sampler s(normalized, Filter::linear, Addressing::clamp_to_edge);
                    const std::size_t n = 500;
                    std::vector<float> pts;
                    const std::size_t size[3] = {w, h, d};
                    for (std::size_t i = 0; i < n; ++i)
                        for (unsigned k = 0; k < dims; ++k) {
                            const float u = random_vector<float>(1, 0.0f, float(size[k]))[0];
                            pts.push_back(normalized ? u / float(size[k]) : u);
                        }
                    const auto got = sample(ctx, im, s, pts);
                    double lo = 1e300, hi = -1e300;
                    for (std::size_t i = 0; i < w * h * d; ++i)
                        for (unsigned c = 0; c < f.channels; ++c) {
                            lo = std::min(lo, channel_value(f, texels.data(), i, c));
                            hi = std::max(hi, channel_value(f, texels.data(), i, c));
                        }
                    const double tol = linear_tolerance(ctx, dims, hi - lo);
                    double worst = 0;
                    for (std::size_t i = 0; i < n; ++i) {
                        const auto want = reference(im, texels, s, &pts[i * dims]);
                        for (unsigned c = 0; c < 4; ++c)
                            worst = std::max(worst, std::fabs(got[4 * i + c] - want[c]));
                    }
                    INFO("normalised coordinates: " << normalized << ", worst error " << worst << ", tolerance "
                                                    << tol);
                    CHECK(worst <= tol);
                }
            }
    }
}

TEST_CASE("Every addressing mode at and past the edges matches the host") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().info().images.supported) continue;
        // Sizes are powers of two and coordinates quarter-texels, so every product and weight is
        // exact: the comparison is exact on every device, NVIDIA's 8-bit weights included.
        for (unsigned dims : {1u, 2u, 3u})
            for (const ImageFormat f : {ImageFormat{ChannelType::float32, 1}, ImageFormat{ChannelType::float32, 2}}) {
                if (!Image::supported(ctx, f, dims)) continue;
                const std::size_t w = 8, h = dims > 1 ? 4 : 1, d = dims > 2 ? 2 : 1;
                const std::size_t size[3] = {w, h, d};
                const auto texels = random_texels(f, w * h * d);
                Image im = make_image(ctx, f, dims, w, h, d, texels);
                for (bool normalized : {false, true})
                    for (Filter filter : {Filter::nearest, Filter::linear})
                        for (Addressing a : {Addressing::clamp_to_edge, Addressing::clamp_to_border, Addressing::repeat,
                                             Addressing::mirrored_repeat}) {
                            if (!normalized && (a == Addressing::repeat || a == Addressing::mirrored_repeat)) continue;
                            const Sampler s(normalized, filter, a);
                            INFO(f.str() << ", " << dims << "-D, " << s.str());
                            // From 2.5 images before to 2.5 past, in quarter texels off the texel grid.
                            std::vector<float> pts;
                            const int steps = int(5 * w);
                            for (int i = 0; i < steps; ++i)
                                for (unsigned k = 0; k < dims; ++k) {
                                    const int nk = int(size[k]);
                                    const int j = (i * (k == 0 ? 1 : 3) + int(k)) % (5 * nk);
                                    const float u = float(j - 2 * nk) + ((i + int(k)) % 2 ? 0.25f : 0.75f);
                                    pts.push_back(normalized ? u / float(nk) : u);
                                }
                            const auto got = sample(ctx, im, s, pts);
                            // Every point is compared; the first few that differ are named.
                            double worst = 0;
                            int wrong = 0;
                            std::ostringstream first;
                            for (int i = 0; i < steps; ++i) {
                                const auto want = reference(im, texels, s, &pts[std::size_t(i) * dims]);
                                for (unsigned c = 0; c < 4; ++c) {
                                    const double e = std::fabs(got[4 * std::size_t(i) + c] - want[c]);
                                    worst = std::max(worst, e);
                                    if (e > 1e-5 && wrong++ < 6)
                                        first << "\n  point " << i << " (" << pts[std::size_t(i) * dims]
                                              << ", ...) channel " << c << ": " << got[4 * std::size_t(i) + c]
                                              << ", want " << want[c];
                                }
                            }
                            INFO(wrong << " channel values differ; worst " << worst << first.str());
                            CHECK(worst <= 1e-5);
                        }
            }
    }
}

TEST_CASE("Kernels write 2-D images with float, int and uint values") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().info().images.supported) continue;
        const char* source = R"(
XGPU_KERNEL void fill_f(XGPU_WIMAGE2D_PARAM(dst), const float scale) {
    const int x = (int)XGPU_GLOBAL_ID(0), y = (int)XGPU_GLOBAL_ID(1);
    XGPU_WRITE2D_F(dst, x, y, XGPU_FLOAT4(scale * x, scale * y, -scale * x, 0.25f));
}
XGPU_KERNEL void fill_i(XGPU_WIMAGE2D_PARAM(dst)) {
    const int x = (int)XGPU_GLOBAL_ID(0), y = (int)XGPU_GLOBAL_ID(1);
    XGPU_WRITE2D_I(dst, x, y, XGPU_INT4(x - 100 * y, -x, 200 * x, 7));
}
XGPU_KERNEL void fill_ui(XGPU_WIMAGE2D_PARAM(dst)) {
    const int x = (int)XGPU_GLOBAL_ID(0), y = (int)XGPU_GLOBAL_ID(1);
    XGPU_WRITE2D_UI(dst, x, y, XGPU_UINT4(x + 1000u * y, 3u * x, 9u, 7u));
}
XGPU_KERNEL void copy_f(XGPU_IMAGE2D_PARAM(src), XGPU_WIMAGE2D_PARAM(dst)) {
    const int x = (int)XGPU_GLOBAL_ID(0), y = (int)XGPU_GLOBAL_ID(1);
    XGPU_WRITE2D_F(dst, x, y, XGPU_FETCH2D_F(src, XGPU_IMAGE_WIDTH(src) - 1 - x, y));
}
)";
        const auto prog = ctx.compile(source);
        const std::size_t w = 21, h = 10;
        int tested = 0;
        for (const auto& f : all_formats()) {
            if (!Image::supported(ctx, f, 2, true)) continue;
            INFO(f.str());
            ++tested;
            Image im = Image::create(ctx, f, w, h);
            const std::string name = f.reads_float() ? "fill_f" : f.is_signed_int() ? "fill_i" : "fill_ui";
            if (name == "fill_f")
                prog.kernel(name).launch(ctx.queue(), Grid{{w, h}}, im.writable(), 1.0f / 32);
            else
                prog.kernel(name).launch(ctx.queue(), Grid{{w, h}}, im.writable());
            std::vector<unsigned char> texels(im.bytes());
            im.read(texels.data());
            for (std::size_t y = 0; y < h; ++y)
                for (std::size_t x = 0; x < w; ++x)
                    for (unsigned c = 0; c < f.channels; ++c) {
                        const double got = channel_value(f, texels.data(), y * w + x, c);
                        double want = 0;
                        const double X = double(x), Y = double(y);
                        if (name == "fill_f") {
                            const double v[4] = {X / 32, Y / 32, -X / 32, 0.25};
                            want = v[c];
                            // Normalised formats saturate and store a code within 0.6 of the exact value
                            // (OpenCL C 1.2, 8.3.1.1: NVIDIA's OpenCL stores 127 for 0.5 in uint8, where
                            // rounding to nearest even gives 128).
                            if (f.normalized) {
                                const double scale = normalized_scale(f);
                                const double exact = std::clamp(want, f.is_signed_int() ? -1.0 : 0.0, 1.0) * scale;
                                INFO("texel (" << x << ", " << y << ") channel " << c << ": " << got * scale
                                               << ", want " << exact << " within 0.6");
                                REQUIRE(std::fabs(got * scale - exact) <= 0.6);
                                REQUIRE(got * scale == std::nearbyint(got * scale));
                                continue;
                            }
                        } else if (name == "fill_i") {
                            const double v[4] = {X - 100 * Y, -X, 200 * X, 7};
                            const double lim = std::ldexp(1.0, int(8 * channel_size(f.type)) - 1);
                            want = std::clamp(v[c], -lim, lim - 1);
                        } else {
                            const double v[4] = {X + 1000 * Y, 3 * X, 9, 7};
                            want = std::min(v[c], std::ldexp(1.0, int(8 * channel_size(f.type))) - 1);
                        }
                        INFO("texel (" << x << ", " << y << ") channel " << c << ": " << got << ", want " << want);
                        REQUIRE(std::fabs(got - want) <= 1e-6);
                    }
        }
        CHECK(tested > 0);
        // A read image copied into a writable one, mirrored in x.
        const ImageFormat f{ChannelType::float32, 4};
        const auto texels = random_texels(f, w * h);
        Image src = Image::from_host(ctx, f, texels.data(), w, h), dst = Image::create(ctx, f, w, h);
        prog.kernel("copy_f").launch(ctx.queue(), Grid{{w, h}}, src.sampled(Sampler()), dst.writable());
        std::vector<float> got(w * h * 4);
        dst.read(got.data());
        for (std::size_t y = 0; y < h; ++y)
            for (std::size_t x = 0; x < w; ++x)
                for (unsigned c = 0; c < 4; ++c)
                    REQUIRE(got[(y * w + x) * 4 + c] == channel_value(f, texels.data(), y * w + (w - 1 - x), c));
    }
}

TEST_CASE("Image errors are raised before any work, naming the problem") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().info().images.supported) continue;
        const auto& lim = ctx.device().info().images;
        const ImageFormat f{ChannelType::float32, 1};
        CHECK_THROWS_WITH(Image::create(ctx, f, lim.max_width_2d + 1, 4),
                          Contains("width") && Contains("past the device's limit"));
        CHECK_THROWS_WITH(Image::create(ctx, f, 4, 4, lim.max_depth_3d + 1), Contains("depth"));
        CHECK_THROWS_WITH(Image::create(ctx, f, 0, 4), Contains("width 0"));
        CHECK_THROWS_WITH(Image::create(ctx, {ChannelType::float32, 3}, 4, 4),
                          Contains("float32x3") && Contains("1, 2 or 4"));
        CHECK_THROWS_WITH(Image::create(ctx, {ChannelType::float32, 1, true}, 4, 4),
                          Contains("float32x1 normalized") && Contains("normalised"));
        CHECK_THROWS_AS(Image::create(ctx, {ChannelType::uint32, 4, true}, 4), InvalidArgument);
        // A format the device lacks (PoCL: float16 and 2-channel images) is named.
        for (const auto& g : all_formats())
            if (!Image::supported(ctx, g, 2)) {
                CHECK_THROWS_WITH(Image::create(ctx, g, 4, 4), Contains("does not support") && Contains(g.str()));
                break;
            }
        // Sampler modes one backend lacks; filtering integers.
        CHECK_THROWS_WITH(Sampler(false, Filter::nearest, Addressing::repeat),
                          Contains("repeat") && Contains("normalised coordinates"));
        CHECK_THROWS_WITH(Sampler(false, Filter::linear, Addressing::mirrored_repeat), Contains("mirrored-repeat"));
        if (Image::supported(ctx, {ChannelType::int32, 1}, 2)) {
            Image ints = Image::create(ctx, {ChannelType::int32, 1}, 4, 4);
            CHECK_THROWS_WITH(ints.sampled(Sampler(false, Filter::linear, Addressing::clamp_to_edge)),
                              Contains("linear filtering") && Contains("int32x1"));
            // The same made by hand, without Image::sampled, is refused as a kernel argument.
            const SampledImage by_hand{ints.impl(), Sampler(false, Filter::linear, Addressing::clamp_to_edge)};
            CHECK_THROWS_WITH(detail::make_arg(by_hand), Contains("linear filtering"));
        }
        // Regions out of range, on the host and with buffers and arrays.
        Image im = Image::create(ctx, f, 8, 4);
        std::vector<float> host(64);
        CHECK_THROWS_WITH(im.write(host.data(), {{5, 0, 0}, {4, 1, 1}}),
                          Contains("[5, 9) in x") && Contains("width of 8"));
        CHECK_THROWS_WITH(im.read(host.data(), {{0, 3, 0}, {1, 2, 1}}), Contains("in y"));
        CHECK_THROWS_WITH(im.read(host.data(), {{0, 0, 1}, {1, 1, 1}}), Contains("2-D"));
        auto small = ctx.alloc(16);
        CHECK_THROWS_WITH(im.copy_from(small, 0, {{0, 0, 0}, {8, 1, 1}}), Contains("past the buffer's 16 bytes"));
        auto wrong = zeros<double>(ctx, {32});
        CHECK_THROWS_WITH(im.copy_from(wrong), Contains("float64"));
        auto short_array = zeros<float>(ctx, {31});
        CHECK_THROWS_WITH(im.copy_to(short_array), Contains("31 elements"));
        CHECK_THROWS_WITH(Image::from_array(zeros<double>(ctx, {4, 4})), Contains("float64"));
        CHECK_THROWS_WITH(Image::from_array(zeros<float>(ctx, {4, 4, 3}), 4), Contains("last axis"));
        // Writable images are 2-D.
        if (Image::supported(ctx, f, 3)) {
            Image im3 = Image::create(ctx, f, 4, 4, 4);
            CHECK_THROWS_WITH(im3.writable(), Contains("2-D"));
        }
        // An image where a buffer is declared, and the reverse.
        const char* source = R"(
XGPU_KERNEL void takes_buffer(XGPU_GLOBAL float* p) { p[0] = 1.0f; }
XGPU_KERNEL void takes_image(XGPU_IMAGE2D_PARAM(im), XGPU_GLOBAL float* p) { p[0] = XGPU_FETCH2D_F(im, 0, 0).x; }
)";
        const auto prog = ctx.compile(source);
        auto out = zeros<float>(ctx, {4});
        const auto tb = prog.kernel("takes_buffer"), ti = prog.kernel("takes_image");
        const bool checks_params = ti.num_args() >= 0;
        if (checks_params) {
            CHECK_THROWS_AS(tb.launch(ctx.queue(), Grid{1}, im.sampled(Sampler())), InvalidArgument);
            CHECK_THROWS_AS(tb.launch(ctx.queue(), Grid{1}, im.writable()), InvalidArgument);
            if (ctx.backend() == "opencl") {
                CHECK_THROWS_WITH(ti.launch(ctx.queue(), Grid{1}, out.buffer(), out.buffer(), out.buffer()),
                                  Contains("needs a sampled 2-D image"));
                CHECK_THROWS_WITH(ti.launch(ctx.queue(), Grid{1}, im.writable(), out.buffer(), out.buffer()),
                                  Contains("needs a sampled 2-D image"));
            } else {
                CHECK_THROWS_WITH(ti.launch(ctx.queue(), Grid{1}, out.buffer(), out.buffer()),
                                  Contains("a buffer") && Contains("bytes"));
            }
        }
        CHECK(out.get() == std::vector<float>(4, 0.0f)); // nothing ran
        ti.launch(ctx.queue(), Grid{1}, im.sampled(Sampler()), out.buffer());
        // A 1-D image where a 2-D one is declared (OpenCL tells the dimensions apart).
        if (ctx.backend() == "opencl" && checks_params) {
            Image im1 = Image::create(ctx, f, 8);
            CHECK_THROWS_WITH(ti.launch(ctx.queue(), Grid{1}, im1.sampled(Sampler()), out.buffer()),
                              Contains("2-D image parameter, but the image is 1-D"));
        }
        // More sampled images than the device takes samplers per kernel (OpenCL: 16 on PoCL).
        if (lim.max_samplers && lim.max_samplers < 64) {
            codegen::Source many;
            many.kernel("many");
            for (unsigned i = 0; i <= lim.max_samplers; ++i)
                many.image_param(2, "im" + std::to_string(i));
            many.param("XGPU_GLOBAL float*", "out").body().line("out[0] = XGPU_FETCH2D_F(im0, 0, 0).x;").close();
            const auto k = ctx.compile(many.str()).kernel("many");
            std::vector<detail::KernelArg> args(lim.max_samplers + 1, detail::make_arg(im.sampled(Sampler())));
            args.push_back(detail::make_arg(out.buffer()));
            CHECK_THROWS_WITH(k.launch_args(ctx.queue(), Grid{1}, args),
                              Contains(std::to_string(lim.max_samplers) + " samplers"));
        }
        // An empty image.
        CHECK_THROWS_AS(Image().sampled(Sampler()), InvalidArgument);
    }
}

TEST_CASE("ElementwiseKernel and the source builder take images as operands") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        if (!ctx.device().info().images.supported) continue;
        const ImageFormat f{ChannelType::float32, 1};
        const std::size_t w = 12, h = 5;
        const auto host = random_vector<float>(w * h, -1, 1);
        Image src = Image::from_host(ctx, f, host.data(), w, h), dst = Image::create(ctx, f, w, h);
        ElementwiseKernel twice(ctx, "float* out, image2d src, const int w",
                                "out[i] = 2.0f * XGPU_FETCH2D_F(src, (int)(i % w), (int)(i / w)).x", "twice_image");
        auto out = empty<float>(ctx, {w * h});
        twice(out, src.sampled(Sampler()), int(w));
        const auto got = out.get();
        for (std::size_t i = 0; i < w * h; ++i)
            REQUIRE(got[i] == 2.0f * host[i]);
        ElementwiseKernel fill(ctx, "wimage2d dst, image2d src, const int w",
                               "XGPU_WRITE2D_F(dst, (int)(i % w), (int)(i / w), XGPU_FLOAT4(-XGPU_SAMPLE2D_F(src, "
                               "(float)(i % w) + 0.5f, (float)(i / w) + 0.5f).x, 0.0f, 0.0f, 1.0f))",
                               "negate_image");
        fill(slice(0, std::int64_t(w * h)), dst.writable(), src.sampled(Sampler()), int(w));
        std::vector<float> back(w * h);
        dst.read(back.data());
        for (std::size_t i = 0; i < w * h; ++i)
            REQUIRE(back[i] == -host[i]);
        // Arguments of the wrong kind are refused before the launch.
        CHECK_THROWS_WITH(twice(out, dst.writable(), int(w)), Contains("must be a sampled image"));
        CHECK_THROWS_WITH(twice(out, out, int(w)), Contains("must be a sampled image"));
        CHECK_THROWS_WITH(twice(src.sampled(Sampler()), src.sampled(Sampler()), int(w)), Contains("must be an Array"));
        Image one = Image::create(ctx, f, 8);
        CHECK_THROWS_WITH(twice(out, one.sampled(Sampler()), int(w)), Contains("2-D image, but a 1-D"));
        CHECK_THROWS_WITH(ElementwiseKernel(ctx, "float* out, image4d src", "out[i] = 0", "bad"), Contains("image4d"));

        // ReductionKernel too: the sum of the image's texels.
        ReductionKernel<float> total(ctx, "0", "a + b", "XGPU_FETCH2D_F(src, (int)(i % w), (int)(i / w)).x",
                                     "image2d src, const int w", "image_total");
        double want_total = 0;
        for (float v : host)
            want_total += v;
        CHECK(total.over(w * h, src.sampled(Sampler()), int(w)).get() == Approx(want_total).margin(1e-4));
        // The source builder's image parameters.
        codegen::Source s;
        s.kernel("mirror").image_param(2, "src").image_param(2, "dst", true).param("const int", "w").body();
        s.line("const int x = (int)XGPU_GLOBAL_ID(0), y = (int)XGPU_GLOBAL_ID(1);");
        s.line("XGPU_WRITE2D_F(dst, x, y, XGPU_FETCH2D_F(src, w - 1 - x, y));");
        s.close();
        CHECK_THAT(s.str(), Contains("XGPU_IMAGE2D_PARAM(src), XGPU_WIMAGE2D_PARAM(dst), const int w"));
        ctx.compile(s.str()).kernel("mirror").launch(ctx.queue(), Grid{{w, h}}, src.sampled(Sampler()), dst.writable(),
                                                     int(w));
        dst.read(back.data());
        for (std::size_t y = 0; y < h; ++y)
            for (std::size_t x = 0; x < w; ++x)
                REQUIRE(back[y * w + x] == host[y * w + (w - 1 - x)]);
        CHECK_THROWS_AS(codegen::Source().kernel("k").image_param(3, "v", true), std::invalid_argument);
    }
}

TEST_CASE("A 2-D image view of a pitched buffer, where the backend has one") {
    XGPU_FOR_EACH_CONTEXT(ctx) {
        const auto& lim = ctx.device().info().images;
        const ImageFormat f{ChannelType::float32, 4};
        auto buffer = ctx.alloc(std::size_t(4) << 20); // large: the allocation is aligned for textures
        if (!lim.buffer_views) {
            CHECK_THROWS_WITH(Image::view(ctx, buffer, 0, f, 8, 8, 256),
                              Contains("no 2-D images over a buffer") && Contains("copy_from"));
            continue;
        }
        const std::size_t w = 37, h = 19, align = std::max<std::size_t>(lim.view_pitch_alignment, 1);
        const std::size_t pitch = (w * f.texel_bytes() + align - 1) / align * align;
        const auto texels = random_texels(f, pitch / f.texel_bytes() * h);
        ctx.queue().write(buffer, texels.data(), texels.size());
        Image view = Image::view(ctx, buffer, 0, f, w, h, pitch);
        CHECK(view.width() == w);
        CHECK(view.height() == h);
        std::vector<float> ints;
        for (std::size_t y = 0; y < h; ++y)
            for (std::size_t x = 0; x < w; ++x) {
                ints.push_back(float(x));
                ints.push_back(float(y));
            }
        const auto got = sample(ctx, view, Sampler(), ints, true);
        for (std::size_t y = 0; y < h; ++y)
            for (std::size_t x = 0; x < w; ++x)
                for (unsigned c = 0; c < 4; ++c)
                    REQUIRE(got[4 * (y * w + x) + c] == channel_value(f, texels.data(), y * (pitch / 16) + x, c));
        // The view sees later writes to the buffer; it is not written or copied as an image.
        const float one[4] = {1, 2, 3, 4};
        ctx.queue().write(buffer, one, sizeof one);
        CHECK(sample(ctx, view, Sampler(), {0.0f, 0.0f}, true)[3] == 4.0);
        std::vector<float> host(w * h * 4);
        CHECK_THROWS_WITH(view.read(host.data()), Contains("view of a buffer"));
        CHECK_THROWS_WITH(view.writable(), Contains("view of a buffer"));
        // Misfits are refused.
        CHECK_THROWS_WITH(Image::view(ctx, buffer, 0, f, w, h, w * 16 - 16), Contains("shorter than a row"));
        if (align > 1) CHECK_THROWS_WITH(Image::view(ctx, buffer, 0, f, 1, h, align + 1), Contains("not a multiple"));
        CHECK_THROWS_WITH(Image::view(ctx, buffer, buffer.size() - 64, f, w, h, pitch), Contains("past the buffer"));
    }
}

TEST_CASE("Every backend here samples the same values, within the filtering tolerance") {
    // With XGPU_BACKEND unset, one context per backend (on the H200: CUDA and NVIDIA's OpenCL).
    std::vector<Context> with_images;
    for (const auto& ctx : test::contexts())
        if (ctx.device().info().images.supported) with_images.push_back(ctx);
    if (with_images.size() < 2) {
        WARN("one backend with images here: nothing to compare");
        return;
    }
    const ImageFormat f{ChannelType::uint8, 4, true};
    const std::size_t w = 64, h = 48;
    const auto texels = random_texels(f, w * h);
    std::vector<float> pts;
    for (int i = 0; i < 4000; ++i) {
        pts.push_back(random_vector<float>(1, -1.5f, 2.5f)[0]);
        pts.push_back(random_vector<float>(1, -1.5f, 2.5f)[0]);
    }
    for (Addressing a :
         {Addressing::clamp_to_edge, Addressing::clamp_to_border, Addressing::repeat, Addressing::mirrored_repeat})
        for (Filter filter : {Filter::nearest, Filter::linear}) {
            const Sampler s(true, filter, a);
            INFO(s.str());
            std::vector<std::vector<double>> results;
            for (const auto& ctx : with_images)
                results.push_back(sample(ctx, Image::from_host(ctx, f, texels.data(), w, h), s, pts));
            for (std::size_t b = 1; b < results.size(); ++b) {
                INFO(with_images[0].backend() << " against " << with_images[b].backend());
                // Each may be off the exact blend by its own tolerance; nearest reads may differ
                // where a coordinate lies within rounding of a texel boundary, so count those.
                const double tol = linear_tolerance(with_images[0], 2, 1.0) + linear_tolerance(with_images[b], 2, 1.0);
                std::size_t off = 0;
                for (std::size_t i = 0; i < results[0].size(); ++i)
                    off += std::fabs(results[0][i] - results[b][i]) > tol;
                CHECK(off <= (filter == Filter::nearest ? results[0].size() / 200 : 0));
            }
        }
}
