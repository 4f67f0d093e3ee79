// The CUDA backend's compiler: CUDA C++ to a cubin (or PTX) with NVRTC. It needs no device or
// context, so a program that only loads cached binaries never touches NVRTC.
#include <algorithm>

#include <fmt/format.h>

#include "cuda.hpp"

namespace xgpu::cuda {
namespace {

// The real architectures this NVRTC emits cubins for (75, 80, ..., 120), ascending.
const std::vector<int>& supported_archs() {
    static const std::vector<int> archs = [] {
        std::vector<int> a;
        int n = 0;
        if (api::nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0) {
            a.resize(std::size_t(n));
            if (api::nvrtcGetSupportedArchs(a.data()) != NVRTC_SUCCESS) a.clear();
        }
        std::sort(a.begin(), a.end());
        return a;
    }();
    return archs;
}

// Whether `options` already set one of `names` ("-arch" matches "-arch" and "-arch=sm_80").
bool has_option(const std::vector<std::string>& options, std::initializer_list<std::string_view> names) {
    return std::any_of(options.begin(), options.end(), [&](const std::string& o) {
        return std::any_of(names.begin(), names.end(), [&](std::string_view n) {
            return o == n || (o.size() > n.size() && o.compare(0, n.size(), n) == 0 && o[n.size()] == '=');
        });
    });
}

std::string program_log(nvrtcProgram p) {
    std::size_t size = 0;
    if (api::nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS || size == 0) return {};
    std::string log(size, '\0');
    if (api::nvrtcGetProgramLog(p, log.data()) != NVRTC_SUCCESS) return {};
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
        log.pop_back();
    return log;
}

// Destroys an NVRTC program however the compile ends.
struct ProgramGuard {
    nvrtcProgram program = nullptr;
    ~ProgramGuard() {
        if (program) api::nvrtcDestroyProgram(&program);
    }
};

} // namespace

Target compile_target(int sm) {
    const Target native{fmt::format("sm_{}", sm), true};
    if (!nvrtc_available()) return native;
    const auto& archs = supported_archs();
    if (archs.empty() || std::binary_search(archs.begin(), archs.end(), sm)) return native;
    // A device this NVRTC does not know: PTX for the newest architecture it knows below the
    // device's, which the driver compiles for the device when it loads the module.
    const auto below = std::upper_bound(archs.begin(), archs.end(), sm);
    if (below == archs.begin()) return native; // older than NVRTC supports: NVRTC will say so
    return {fmt::format("compute_{}", *std::prev(below)), false};
}

std::string nvrtc_version() {
    int major = 0, minor = 0;
    if (!nvrtc_available() || api::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return {};
    return fmt::format("{}.{}", major, minor);
}

Compiled compile(const std::string& source, const std::vector<std::string>& options, const Target& target) {
    load_nvrtc();
    std::vector<std::string> all = options;
    if (!has_option(options, {"-arch", "--gpu-architecture"})) all.push_back("-arch=" + target.arch);
    if (!has_option(options, {"-std", "--std"})) all.push_back("--std=c++17");
    std::vector<const char*> argv;
    for (const auto& o : all)
        argv.push_back(o.c_str());

    ProgramGuard p;
    check(api::nvrtcCreateProgram(&p.program, source.c_str(), "xgpu.cu", 0, nullptr, nullptr), "nvrtcCreateProgram");
    const nvrtcResult r = api::nvrtcCompileProgram(p.program, int(argv.size()), argv.data());
    Compiled out;
    out.log = program_log(p.program);
    if (r != NVRTC_SUCCESS) {
        detail::throw_compile_error("cuda", "compiling CUDA C++", "nvrtcCompileProgram", r, nvrtc_error_name(r),
                                    out.log, all, options, source);
    }
    // A cubin unless the architecture was a virtual one (compute_XY): then only PTX exists.
    std::size_t size = 0;
    if (api::nvrtcGetCUBINSize(p.program, &size) == NVRTC_SUCCESS && size > 0) {
        std::string image(size, '\0');
        check(api::nvrtcGetCUBIN(p.program, image.data()), "nvrtcGetCUBIN");
        out.binary = pack_binary('C', image.data(), image.size());
    } else {
        check(api::nvrtcGetPTXSize(p.program, &size), "nvrtcGetPTXSize");
        std::string image(size, '\0'); // the size counts the terminating NUL, which the driver needs
        check(api::nvrtcGetPTX(p.program, image.data()), "nvrtcGetPTX");
        out.binary = pack_binary('P', image.data(), image.size());
    }
    return out;
}

} // namespace xgpu::cuda
