// Bilinear resampling with the texture hardware: a generated RGBA picture (8-bit normalised
// channels) is rotated and scaled by a kernel that reads it through a linear-filtering sampler
// (XGPU_SAMPLE2D_F), compared with a host bilinear reference, and timed: the throughput is
// printed in gigatexels per second (output texels, each a blend of four source texels).
//
//   resample [width height [angle_degrees scale]]   (default 4096 x 4096 on GPUs, 1024 x 1024 on
//                                                    CPUs; 30 degrees, 1.3)
//
// NVIDIA's texture units blend with weights of 8 fractional bits, so a filtered value may differ
// from the host's float blend by up to about 2/256 of the spread of the four texels (two
// dimensions); other devices filter in float. The tolerance below is that bound.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <xgpu/image.hpp>
#include <xgpu/xgpu.hpp>

static const char* source = R"(
/* Output texel (x, y) samples the picture at the rotated and scaled position of its centre. */
XGPU_KERNEL void resample(XGPU_IMAGE2D_PARAM(picture), XGPU_GLOBAL float* out, const int width, const int height,
                          const float c, const float s, const float cx, const float cy) {
    const int x = (int)XGPU_GLOBAL_ID(0), y = (int)XGPU_GLOBAL_ID(1);
    if (x >= width || y >= height) return;
    const float dx = (float)x + 0.5f - cx, dy = (float)y + 0.5f - cy;
    /* Normalised coordinates: position / size. */
    const float4 v = XGPU_SAMPLE2D_F(picture, (c * dx - s * dy + cx) / width, (s * dx + c * dy + cy) / height);
    const size_t at = 4 * ((size_t)y * width + x);
    out[at] = v.x;
    out[at + 1] = v.y;
    out[at + 2] = v.z;
    out[at + 3] = v.w;
}
)";

// The generated picture: rings and stripes in three channels, a gradient in alpha.
static std::vector<unsigned char> picture(int w, int h) {
    std::vector<unsigned char> p(std::size_t(w) * h * 4);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double u = (x + 0.5) / w - 0.5, v = (y + 0.5) / h - 0.5, r = std::hypot(u, v);
            unsigned char* t = &p[(std::size_t(y) * w + x) * 4];
            t[0] = static_cast<unsigned char>(127.5 + 127.5 * std::sin(60 * r));
            t[1] = static_cast<unsigned char>(127.5 + 127.5 * std::cos(25 * u + 10 * v));
            t[2] = static_cast<unsigned char>((x / 32 + y / 32) % 2 ? 230 : 20);
            t[3] = static_cast<unsigned char>(255.0 * (x + y) / (w + h));
        }
    return p;
}

int main(int argc, char** argv) {
    try {
        auto ctx = xgpu::Context::from_env();
        const bool gpu = ctx.device().type() == xgpu::DeviceType::gpu;
        const int w = argc > 2 ? std::atoi(argv[1]) : gpu ? 4096 : 1024;
        const int h = argc > 2 ? std::atoi(argv[2]) : gpu ? 4096 : 1024;
        const double angle = (argc > 4 ? std::atof(argv[3]) : 30.0) * M_PI / 180,
                     scale = argc > 4 ? std::atof(argv[4]) : 1.3;
        if (w < 1 || h < 1 || scale <= 0) {
            std::fprintf(stderr, "usage: resample [width height [angle_degrees scale]] (positive sizes and scale)\n");
            return 2;
        }
        std::printf("xgpu resample on %s: %s (%s), %dx%d uint8x4 normalised, %.0f degrees, scale %.2f\n",
                    ctx.backend().c_str(), ctx.device().name().c_str(), ctx.device().vendor().c_str(), w, h,
                    angle * 180 / M_PI, scale);

        const auto host = picture(w, h);
        const xgpu::ImageFormat format{xgpu::ChannelType::uint8, 4, true};
        const auto image = xgpu::Image::from_host(ctx, format, host.data(), std::size_t(w), std::size_t(h));
        const xgpu::Sampler linear(true, xgpu::Filter::linear, xgpu::Addressing::clamp_to_border);
        auto out = ctx.alloc(std::size_t(w) * h * 4 * sizeof(float));
        const auto k = ctx.compile(source).kernel("resample");
        // Rotation by `angle` and zoom by `scale` about the centre: the inverse map per output texel.
        const float c = float(std::cos(angle) / scale), s = float(std::sin(angle) / scale);
        const float cx = 0.5f * float(w), cy = 0.5f * float(h);
        const xgpu::Grid grid{{(std::size_t(w) + 15) / 16 * 16, (std::size_t(h) + 15) / 16 * 16}, {16, 16}};
        auto q = ctx.queue();
        const auto run = [&] { k.launch(q, grid, image.sampled(linear), out, w, h, c, s, cx, cy); };

        // Correctness: the host's bilinear blend of the same position, border texels 0.
        run();
        std::vector<float> got(std::size_t(w) * h * 4);
        q.read(out, got.data(), got.size() * sizeof(float));
        const auto texel = [&](int x, int y, int ch) {
            return x < 0 || y < 0 || x >= w || y >= h ? 0.0 : host[(std::size_t(y) * w + x) * 4 + ch] / 255.0;
        };
        const bool nvidia = ctx.device().vendor().find("NVIDIA") != std::string::npos;
        // The device computes the position in float too, perhaps with fused multiply-adds: a few
        // ulps of the coordinates, which moves a blend by that much times its spread.
        const double du = 8 * 1.1920929e-7 * (w + h);
        double worst = 0, worst_excess = -1;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const float dx = float(x) + 0.5f - cx, dy = float(y) + 0.5f - cy;
                const double u = double(c * dx - s * dy + cx) - 0.5, v = double(s * dx + c * dy + cy) - 0.5;
                const int i = int(std::floor(u)), j = int(std::floor(v));
                const double a = u - i, b = v - j;
                for (int ch = 0; ch < 4; ++ch) {
                    const double t00 = texel(i, j, ch), t10 = texel(i + 1, j, ch), t01 = texel(i, j + 1, ch),
                                 t11 = texel(i + 1, j + 1, ch);
                    const double want = (1 - a) * (1 - b) * t00 + a * (1 - b) * t10 + (1 - a) * b * t01 + a * b * t11;
                    const double spread = std::max({t00, t10, t01, t11}) - std::min({t00, t10, t01, t11});
                    const double tol = 1e-5 + spread * (2 * du + (nvidia ? 2.0 / 256 : 0.0));
                    const double err = std::fabs(got[(std::size_t(y) * w + x) * 4 + ch] - want);
                    worst = std::max(worst, err);
                    worst_excess = std::max(worst_excess, err - tol);
                }
            }
        std::printf("max |device - host bilinear| = %.3g (tolerance: %s)\n", worst,
                    nvidia
                        ? "2/256 of the four texels' spread (NVIDIA's 8-bit filter weights), plus coordinate rounding"
                        : "1e-5 plus coordinate rounding");

        // Throughput: median of timed launches after a warm-up, from device events.
        for (int r = 0; r < 3; ++r)
            run();
        std::vector<double> ms;
        for (int r = 0; r < 21; ++r) {
            auto e0 = q.marker();
            run();
            auto e1 = q.marker();
            ms.push_back(e0.elapsed_ms(e1));
        }
        std::sort(ms.begin(), ms.end());
        const double t = ms[ms.size() / 2];
        std::printf("resample: %.3f ms, %.3g Gtexel/s (bilinear samples of the uint8x4 picture)\n", t,
                    double(w) * h / (t * 1e6));
        if (worst_excess > 0) {
            std::printf("FAILED: device and host differ by more than the tolerance\n");
            return 1;
        }
        std::printf("ok\n");
        return 0;
    } catch (const xgpu::Error& e) {
        std::fprintf(stderr, "resample: %s\n", e.what());
        return 1;
    }
}
