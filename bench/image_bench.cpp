// image-bench: images on the selected backend and device, side by side in one run, medians of
// timed launches after a warm-up, timed with device events.
//
//   image-bench [--n N] [--reps R]        (N x N images; default 8192 on GPUs, 2048 on CPUs)
//
// Rows:
//  - linear-filtered 2-D sampling (float32x1 and uint8x4 normalised): a rotated, scaled read of
//    every output texel through a linear sampler, in gigatexels per second (output texels, each
//    a blend of four);
//  - a 5-point stencil over an N x N float32 grid, read through an image (XGPU_FETCH2D_F, clamp
//    to edge) and from a buffer (clamped indices), in GB/s of counted bytes (the grid read once,
//    the result written once).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "timing.hpp"

#include <xgpu/image.hpp>
#include <xgpu/xgpu.hpp>

namespace {

const char* source = R"(
XGPU_KERNEL void sample_rotated(XGPU_IMAGE2D_PARAM(im), XGPU_GLOBAL float* out, const int n, const float c,
                                const float s) {
    const int x = (int)XGPU_GLOBAL_ID(0), y = (int)XGPU_GLOBAL_ID(1);
    const float h = 0.5f * n, dx = (float)x + 0.5f - h, dy = (float)y + 0.5f - h;
    const float4 v = XGPU_SAMPLE2D_F(im, (c * dx - s * dy + h) / n, (s * dx + c * dy + h) / n);
    out[(size_t)y * n + x] = v.x + v.y + v.z + v.w;
}

XGPU_KERNEL void stencil_image(XGPU_IMAGE2D_PARAM(u), XGPU_GLOBAL float* out, const int n) {
    const int x = (int)XGPU_GLOBAL_ID(0), y = (int)XGPU_GLOBAL_ID(1);
    const float c = XGPU_FETCH2D_F(u, x, y).x;
    const float w = XGPU_SAMPLE2D_F(u, (float)x - 0.5f, (float)y + 0.5f).x;
    const float e = XGPU_SAMPLE2D_F(u, (float)x + 1.5f, (float)y + 0.5f).x;
    const float s = XGPU_SAMPLE2D_F(u, (float)x + 0.5f, (float)y - 0.5f).x;
    const float nn = XGPU_SAMPLE2D_F(u, (float)x + 0.5f, (float)y + 1.5f).x;
    out[(size_t)y * n + x] = 4.0f * c - w - e - s - nn;
}

XGPU_KERNEL void stencil_buffer(XGPU_GLOBAL const float* u, XGPU_GLOBAL float* out, const int n) {
    const int x = (int)XGPU_GLOBAL_ID(0), y = (int)XGPU_GLOBAL_ID(1);
    const size_t row = (size_t)y * n;
    const float c = u[row + x];
    const float w = u[row + (x > 0 ? x - 1 : 0)];
    const float e = u[row + (x < n - 1 ? x + 1 : n - 1)];
    const float s = u[(size_t)(y > 0 ? y - 1 : 0) * n + x];
    const float nn = u[(size_t)(y < n - 1 ? y + 1 : n - 1) * n + x];
    out[row + x] = 4.0f * c - w - e - s - nn;
}
)";

using xgpu::bench::median_ms; // warm-up: compile, texture objects, caches

} // namespace

int main(int argc, char** argv) {
    try {
        auto ctx = xgpu::Context::from_env();
        const bool gpu = ctx.device().type() == xgpu::DeviceType::gpu;
        int n = gpu ? 8192 : 2048, reps = gpu ? 51 : 11;
        for (int i = 1; i + 1 < argc; i += 2) {
            if (!std::strcmp(argv[i], "--n"))
                n = std::atoi(argv[i + 1]);
            else if (!std::strcmp(argv[i], "--reps"))
                reps = std::atoi(argv[i + 1]);
            else {
                std::fprintf(stderr, "usage: image-bench [--n N] [--reps R]\n");
                return 2;
            }
        }
        if (n < 16 || n % 16 != 0 || reps < 1) {
            std::fprintf(stderr, "image-bench: --n must be a positive multiple of 16, --reps positive\n");
            return 2;
        }
        const auto& lim = ctx.device().info().images;
        std::printf("image-bench on %s: %s, %dx%d, median of %d after warm-up\n", ctx.backend().c_str(),
                    ctx.device().name().c_str(), n, n, reps);
        if (!lim.supported || std::size_t(n) > lim.max_width_2d || std::size_t(n) > lim.max_height_2d) {
            std::printf("the device has no images of %dx%d\n", n, n);
            return 1;
        }
        const auto prog = ctx.compile(source);
        auto q = ctx.queue();
        const std::size_t texels = std::size_t(n) * n;
        const xgpu::Grid grid{{std::size_t(n), std::size_t(n)}, {16, 16}};
        auto out = ctx.alloc(texels * sizeof(float));

        std::printf("\n| linear-filtered 2-D sampling | ms | Gtexel/s |\n|---|---|---|\n");
        const xgpu::Sampler linear(true, xgpu::Filter::linear, xgpu::Addressing::repeat);
        const float c = float(std::cos(0.5) / 1.3), s = float(std::sin(0.5) / 1.3);
        for (const xgpu::ImageFormat f :
             {xgpu::ImageFormat{xgpu::ChannelType::float32, 1}, xgpu::ImageFormat{xgpu::ChannelType::uint8, 4, true}}) {
            if (!xgpu::Image::supported(ctx, f, 2)) {
                std::printf("| %s | not supported | |\n", f.str().c_str());
                continue;
            }
            std::vector<unsigned char> host(texels * f.texel_bytes());
            for (std::size_t i = 0; i < host.size(); ++i)
                host[i] = static_cast<unsigned char>((i * 2654435761u) >> 24);
            if (f.type == xgpu::ChannelType::float32) {
                auto* p = reinterpret_cast<float*>(host.data());
                for (std::size_t i = 0; i < texels; ++i)
                    p[i] = float(std::sin(0.001 * double(i)));
            }
            auto im = xgpu::Image::from_host(ctx, f, host.data(), std::size_t(n), std::size_t(n));
            const auto k = prog.kernel("sample_rotated");
            const double ms = median_ms(q, reps, [&] { k.launch(q, grid, im.sampled(linear), out, n, c, s); });
            std::printf("| %s | %.3f | %.3g |\n", f.str().c_str(), ms, double(texels) / (ms * 1e6));
        }

        std::printf("\n| 5-point stencil, float32 | ms | GB/s |\n|---|---|---|\n");
        std::vector<float> grid_host(texels);
        for (std::size_t i = 0; i < texels; ++i)
            grid_host[i] = float(std::cos(0.0007 * double(i)));
        const double bytes = 2.0 * double(texels) * sizeof(float);
        auto u_image = xgpu::Image::from_host(ctx, {xgpu::ChannelType::float32, 1}, grid_host.data(), std::size_t(n),
                                              std::size_t(n));
        auto u_buffer = ctx.alloc(texels * sizeof(float));
        q.write(u_buffer, grid_host.data(), texels * sizeof(float));
        const xgpu::Sampler nearest(false, xgpu::Filter::nearest, xgpu::Addressing::clamp_to_edge);
        const auto ki = prog.kernel("stencil_image"), kb = prog.kernel("stencil_buffer");
        const double ms_image = median_ms(q, reps, [&] { ki.launch(q, grid, u_image.sampled(nearest), out, n); });
        std::vector<float> from_image(texels), from_buffer(texels);
        q.read(out, from_image.data(), texels * sizeof(float));
        const double ms_buffer = median_ms(q, reps, [&] { kb.launch(q, grid, u_buffer, out, n); });
        q.read(out, from_buffer.data(), texels * sizeof(float));
        std::printf("| read through an image | %.3f | %.3g |\n", ms_image, bytes / (ms_image * 1e6));
        std::printf("| read from a buffer | %.3f | %.3g |\n", ms_buffer, bytes / (ms_buffer * 1e6));
        if (from_image != from_buffer) {
            std::printf("FAILED: the image and buffer stencils differ\n");
            return 1;
        }
        return 0;
    } catch (const xgpu::Error& e) {
        std::fprintf(stderr, "image-bench: %s\n", e.what());
        return 1;
    }
}
