// xgpu-info: every backend (available or not, and why not), its devices, and which one the
// environment (XGPU_BACKEND, XGPU_DEVICE) selects.
#include <cstdio>
#include <cstdlib>
#include <string>

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
