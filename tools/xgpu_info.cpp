// xgpu-info: every backend (available or not, and why not), its devices, and which one the
// environment (XGPU_BACKEND, XGPU_DEVICE) selects.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <xgpu/image.hpp>
#include <xgpu/xgpu.hpp>

namespace {

std::string bytes(std::uint64_t b) {
    char s[64];
    if (b >= (1ull << 30))
        std::snprintf(s, sizeof s, "%.1f GiB", double(b) / double(1ull << 30));
    else if (b >= (1ull << 20))
        std::snprintf(s, sizeof s, "%.1f MiB", double(b) / double(1ull << 20));
    else
        std::snprintf(s, sizeof s, "%.0f KiB", double(b) / 1024.0);
    return s;
}

// The formats of 2-D images the device reads (and, in brackets, writes): the channel counts of
// each channel type, "-" where none.
std::string image_formats(const xgpu::Device& d) {
    std::string out;
    try {
        const auto ctx = xgpu::Context::create(d);
        for (int t = 0; t <= int(xgpu::ChannelType::float32); ++t)
            for (bool norm : {false, true}) {
                const auto type = xgpu::ChannelType(t);
                if (norm && (xgpu::channel_size(type) > 2 || type == xgpu::ChannelType::float16)) continue;
                std::string read, write;
                const auto add = [](std::string& list, unsigned c) {
                    if (!list.empty()) list += ',';
                    list += char('0' + c);
                };
                for (unsigned c : {1u, 2u, 4u}) {
                    const xgpu::ImageFormat f{type, c, norm};
                    if (xgpu::Image::supported(ctx, f, 2)) add(read, c);
                    if (xgpu::Image::supported(ctx, f, 2, true)) add(write, c);
                }
                out += ' ';
                out += xgpu::name(type);
                if (norm) out += 'n';
                out += ':';
                out += read.empty() ? "-" : read;
                out += '[';
                out += write.empty() ? "-" : write;
                out += ']';
            }
    } catch (const xgpu::Error& e) {
        out = std::string(" (no context: ") + e.what() + ")";
    }
    return out;
}

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : "(unset)";
}

} // namespace

int main() {
    std::printf("xgpu backends, in the order XGPU_BACKEND=auto tries them\n");
    std::printf("XGPU_BACKEND=%s XGPU_DEVICE=%s\n\n", env("XGPU_BACKEND"), env("XGPU_DEVICE"));

    std::string selected_backend, selection_error;
    int selected_index = -1;
    try {
        auto ctx = xgpu::Context::from_env();
        selected_backend = ctx.backend();
        selected_index = ctx.device().index();
    } catch (const xgpu::Error& e) {
        selection_error = e.what();
    }

    for (const auto& b : xgpu::backends()) {
        if (!b.available) {
            std::printf("%s: not available\n  %s\n\n", b.name.c_str(), b.reason.c_str());
            continue;
        }
        std::printf("%s: %zu device%s\n", b.name.c_str(), b.devices.size(), b.devices.size() == 1 ? "" : "s");
        for (const auto& d : b.devices) {
            const auto& i = d.info();
            const bool sel = b.name == selected_backend && i.index == selected_index;
            std::printf("%s [%d] %s%s\n", sel ? "  *" : "   ", i.index, i.name.c_str(), sel ? "   <- selected" : "");
            std::printf("        platform: %s; vendor: %s; type: %s\n", i.platform.c_str(), i.vendor.c_str(),
                        xgpu::to_string(i.type));
            std::printf("        memory: %s (largest buffer %s), local memory %s per work-group\n",
                        bytes(i.global_memory).c_str(), bytes(i.max_allocation).c_str(), bytes(i.local_memory).c_str());
            std::printf("        compute units: %u; max work-group: %zu; SIMD width: %u; fp64: %s\n", i.compute_units,
                        i.max_work_group_size, i.simd_width, i.fp64 ? "yes" : "no");
            std::printf("        version: %s; driver: %s; compiler: %s; arch: %s\n", i.version.c_str(),
                        i.driver_version.c_str(), i.compiler_version.c_str(), i.arch.c_str());
            if (i.nv_compute_capability)
                std::printf("        NVIDIA compute capability %u.%u (the dialect's tensor-core products: %s)\n",
                            i.nv_compute_capability / 10, i.nv_compute_capability % 10,
                            i.nv_compute_capability >= 90   ? "8x8x4, 16x8x4, 16x8x8 f64"
                            : i.nv_compute_capability >= 80 ? "8x8x4 f64"
                                                            : "none");
            const auto& im = i.images;
            if (!im.supported) {
                std::printf("        images: none\n");
                continue;
            }
            const auto limit = [](unsigned v) { return v ? std::to_string(v) : std::string("no limit"); };
            std::printf("        images: 1-D %zu; 2-D %zux%zu; 3-D %zux%zux%zu; writable 2-D %zux%zu; per kernel: %s "
                        "read, %s written, %s samplers\n",
                        im.max_width_1d, im.max_width_2d, im.max_height_2d, im.max_width_3d, im.max_height_3d,
                        im.max_depth_3d, im.max_width_writable_2d, im.max_height_writable_2d,
                        limit(im.max_read_images).c_str(), limit(im.max_write_images).c_str(),
                        limit(im.max_samplers).c_str());
            std::printf("        2-D image channels read [written] (n: normalised):%s\n", image_formats(d).c_str());
            if (im.buffer_views)
                std::printf("        2-D image views of buffers: up to %zux%zu, pitch up to %zu bytes, pitch a "
                            "multiple of %zu, "
                            "first texel aligned to %zu bytes\n",
                            im.max_width_view, im.max_height_view, im.max_pitch_view, im.view_pitch_alignment,
                            im.view_base_alignment);
            else
                std::printf("        2-D image views of buffers: none\n");
        }
        std::printf("\n");
    }
    if (!selection_error.empty()) {
        std::printf("selection: %s\n", selection_error.c_str());
        return 1;
    }
    std::printf("selected: %s device %d\n", selected_backend.c_str(), selected_index);
    return 0;
}
