// Opens libcuda.so.1 and NVRTC with dlopen and binds the function table (functions.def).
// Neither library is ever closed: the driver cannot be unloaded safely while a process runs, and
// the pointers must stay valid until exit.
#include "loader.hpp"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "xgpu/error.hpp"

namespace xgpu::cuda {
namespace {

// The symbol a table name stands for, after cuda.h's #defines (cuMemAlloc -> "cuMemAlloc_v2").
#define XGPU_SYMBOL_(x) #x
#define XGPU_SYMBOL(x) XGPU_SYMBOL_(x)

// The outcome of loading one library, decided once per process: empty error and the file's path
// on success.
struct Outcome {
    std::once_flag once;
    std::string error;
    std::string path;
};

// The file a dlopen handle stands for (the loader's full path, not the name asked for).
std::string loaded_path(void* lib, const std::string& asked) {
    link_map* map = nullptr;
    if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) return map->l_name;
    return asked;
}

std::string dl_error() {
    const char* e = dlerror();
    return e ? e : "unknown error";
}

// Binds `slot` to `symbol` of `lib`, or to `older` where the library predates `symbol`. A missing
// required function is added to `missing`, named both ways when the header renamed it.
template <class F>
void bind(void* lib, F& slot, const char* symbol, const char* name, bool required, const char* older,
          std::string& missing) {
    void* p = dlsym(lib, symbol);
    if (!p && older) p = dlsym(lib, older);
    slot = reinterpret_cast<F>(p);
    if (p || !required) return;
    if (!missing.empty()) missing += ", ";
    missing += std::strcmp(symbol, name) == 0 ? std::string(name) : fmt::format("{} ({})", symbol, name);
}

std::string open_driver(std::string& loaded) {
    const char* env = std::getenv("XGPU_CUDA_DRIVER");
    const std::string path = env && *env ? env : "libcuda.so.1";
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        if (path == "libcuda.so.1")
            return fmt::format("xgpu[cuda]: libcuda.so.1 not found ({}): the NVIDIA driver is not installed",
                               dl_error());
        return fmt::format("xgpu[cuda]: the driver library '{}' (XGPU_CUDA_DRIVER, in place of libcuda.so.1) "
                           "not found ({})",
                           path, dl_error());
    }
    std::string missing;
#define XGPU_CU(fn) bind(lib, api::fn, XGPU_SYMBOL(fn), #fn, true, nullptr, missing);
#define XGPU_CU_OPTIONAL(fn) bind(lib, api::fn, XGPU_SYMBOL(fn), #fn, false, nullptr, missing);
#define XGPU_CU_FALLBACK(fn, older) bind(lib, api::fn, XGPU_SYMBOL(fn), #fn, true, older, missing);
#define XGPU_NVRTC(fn)
#include "functions.def"
    loaded = loaded_path(lib, path);
    if (missing.empty()) return {};
    return fmt::format("xgpu[cuda]: {} lacks {}: the NVIDIA driver is older than this build of xgpu needs", path,
                       missing);
}

// Where NVRTC may be: XGPU_CUDA_NVRTC alone if set; else the sonames, newest first, in the folders
// of XGPU_CUDA_NVRTC_PATH (where the Python module puts NVIDIA's NVRTC wheels, so that an NVRTC
// installed with pip wins over the system's), then through the loader's search path, then in the
// toolkit's own lib64 (NVRTC ships with the toolkit, which is often outside the search path).
std::vector<std::string> nvrtc_candidates() {
    if (const char* env = std::getenv("XGPU_CUDA_NVRTC"); env && *env) return {env};
    const char* sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};
    std::vector<std::string> paths;
    if (const char* dirs = std::getenv("XGPU_CUDA_NVRTC_PATH"); dirs && *dirs) {
        std::string_view rest = dirs;
        while (!rest.empty()) {
            const auto colon = rest.find(':');
            const std::string_view dir = rest.substr(0, colon);
            rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
            if (dir.empty()) continue;
            for (const char* s : sonames)
                paths.push_back(fmt::format("{}/{}", dir, s));
        }
    }
    paths.insert(paths.end(), std::begin(sonames), std::end(sonames));
    for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
        if (const char* dir = std::getenv(var); dir && *dir)
            for (const char* s : sonames)
                paths.push_back(fmt::format("{}/lib64/{}", dir, s));
    for (const char* s : sonames)
        paths.push_back(fmt::format("/usr/local/cuda/lib64/{}", s));
    return paths;
}

std::string open_nvrtc(std::string& loaded) {
    std::string first_error;
    for (const auto& path : nvrtc_candidates()) {
        void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        std::string missing;
        if (lib) {
#define XGPU_CU(fn)
#define XGPU_CU_OPTIONAL(fn)
#define XGPU_CU_FALLBACK(fn, older)
#define XGPU_NVRTC(fn) bind(lib, api::fn, XGPU_SYMBOL(fn), #fn, true, nullptr, missing);
#include "functions.def"
            if (missing.empty()) {
                loaded = loaded_path(lib, path);
                return {};
            }
            dlclose(lib); // too old: try the next candidate
        }
        if (first_error.empty()) first_error = lib ? fmt::format("{} lacks {}", path, missing) : dl_error();
    }
    return fmt::format("xgpu[cuda]: NVRTC (libnvrtc.so.13) not found ({}): compiling kernels needs the CUDA "
                       "toolkit's NVRTC library on the loader's search path, or from Python NVIDIA's wheel "
                       "(pip install xgpu[cuda])",
                       first_error);
}

Outcome& driver_outcome() {
    static Outcome o;
    return o;
}

Outcome& nvrtc_outcome() {
    static Outcome o;
    return o;
}

} // namespace

void load_driver() {
    auto& o = driver_outcome();
    std::call_once(o.once, [&] { o.error = open_driver(o.path); });
    if (!o.error.empty()) throw BackendUnavailable(o.error, {"cuda", "dlopen", 0, ""});
}

void load_nvrtc() {
    auto& o = nvrtc_outcome();
    std::call_once(o.once, [&] { o.error = open_nvrtc(o.path); });
    if (!o.error.empty()) throw BackendUnavailable(o.error, {"cuda", "dlopen", 0, ""});
}

bool nvrtc_available() noexcept {
    auto& o = nvrtc_outcome();
    try {
        std::call_once(o.once, [&] { o.error = open_nvrtc(o.path); });
    } catch (...) {
        return false; // allocation failure while loading: treat as absent
    }
    return o.error.empty();
}

std::vector<std::string> loaded_libraries() {
    std::vector<std::string> out;
    auto& driver = driver_outcome();
    try {
        load_driver();
        out.push_back("driver: " + driver.path);
    } catch (const Error&) {
        out.push_back("driver: not loaded");
    }
    auto& nvrtc = nvrtc_outcome();
    if (nvrtc_available()) {
        int major = 0, minor = 0;
        api::nvrtcVersion(&major, &minor);
        out.push_back(fmt::format("NVRTC {}.{}: {}", major, minor, nvrtc.path));
    } else {
        out.push_back("NVRTC: " + nvrtc.error);
    }
    return out;
}

} // namespace xgpu::cuda
