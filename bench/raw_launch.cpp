// Raw-API launch loops for xgpu-bench (see raw_launch.hpp). This file is the one place outside
// backends/ that calls the CUDA Driver API, NVRTC or OpenCL itself: the bench measures them beside
// xgpu. The CUDA driver and NVRTC are opened with dlopen, with the few types and functions used
// declared here, so the bench neither links them nor needs the toolkit's headers.
#include "raw_launch.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef XGPU_BENCH_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#endif

namespace xgpu_bench {
namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// The bench's empty kernel with its three parameters, as the xgpu dialect expands it per backend.
const char* cuda_src = "extern \"C\" __global__ void empty(float* a, const float s, const unsigned long long n) {}\n";
const char* opencl_src = "__kernel void empty(__global float* a, const float s, const ulong n) {}\n";

// ---- CUDA Driver API and NVRTC, through dlopen ------------------------------------------------

namespace cu {
using Result = int;
using Device = int;
using Ctx = struct CUctx_st*;
using Module = struct CUmod_st*;
using Function = struct CUfunc_st*;
using Stream = struct CUstream_st*;
using DevicePtr = unsigned long long;
using NvrtcProgram = struct _nvrtcProgram*;
constexpr int attr_cc_major = 75, attr_cc_minor = 76; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*
constexpr unsigned stream_non_blocking = 1;           // CU_STREAM_NON_BLOCKING, as xgpu's streams

struct Api {
    Result (*cuInit)(unsigned);
    Result (*cuDeviceGet)(Device*, int);
    Result (*cuDeviceGetAttribute)(int*, int, Device);
    Result (*cuDevicePrimaryCtxRetain)(Ctx*, Device);
    Result (*cuDevicePrimaryCtxRelease_v2)(Device);
    Result (*cuCtxGetCurrent)(Ctx*);
    Result (*cuCtxSetCurrent)(Ctx);
    Result (*cuModuleLoadData)(Module*, const void*);
    Result (*cuModuleUnload)(Module);
    Result (*cuModuleGetFunction)(Function*, Module, const char*);
    Result (*cuStreamCreate)(Stream*, unsigned);
    Result (*cuStreamDestroy_v2)(Stream);
    Result (*cuStreamSynchronize)(Stream);
    Result (*cuMemAlloc_v2)(DevicePtr*, std::size_t);
    Result (*cuMemFree_v2)(DevicePtr);
    Result (*cuLaunchKernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Stream,
                             void**, void**);
    Result (*cuGetErrorName)(Result, const char**);

    int (*nvrtcCreateProgram)(NvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
    int (*nvrtcCompileProgram)(NvrtcProgram, int, const char* const*);
    int (*nvrtcGetCUBINSize)(NvrtcProgram, std::size_t*);
    int (*nvrtcGetCUBIN)(NvrtcProgram, char*);
    int (*nvrtcGetPTXSize)(NvrtcProgram, std::size_t*);
    int (*nvrtcGetPTX)(NvrtcProgram, char*);
    int (*nvrtcDestroyProgram)(NvrtcProgram*);
};

template <class F> void bind(void* lib, F& fn, const char* name) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    if (!fn) throw std::runtime_error(std::string("symbol ") + name + " missing");
}

void* open_first(const std::vector<std::string>& paths) {
    for (const auto& p : paths)
        if (void* lib = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    return nullptr;
}

// Loaded once; the libraries stay open for the process, as the backend's do.
const Api& api() {
    static const Api a = [] {
        Api a{};
        void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!cuda) throw std::runtime_error("libcuda.so.1 not found");
#define XGPU_BIND(lib, fn) bind(lib, a.fn, #fn)
        XGPU_BIND(cuda, cuInit);
        XGPU_BIND(cuda, cuDeviceGet);
        XGPU_BIND(cuda, cuDeviceGetAttribute);
        XGPU_BIND(cuda, cuDevicePrimaryCtxRetain);
        XGPU_BIND(cuda, cuDevicePrimaryCtxRelease_v2);
        XGPU_BIND(cuda, cuCtxGetCurrent);
        XGPU_BIND(cuda, cuCtxSetCurrent);
        XGPU_BIND(cuda, cuModuleLoadData);
        XGPU_BIND(cuda, cuModuleUnload);
        XGPU_BIND(cuda, cuModuleGetFunction);
        XGPU_BIND(cuda, cuStreamCreate);
        XGPU_BIND(cuda, cuStreamDestroy_v2);
        XGPU_BIND(cuda, cuStreamSynchronize);
        XGPU_BIND(cuda, cuMemAlloc_v2);
        XGPU_BIND(cuda, cuMemFree_v2);
        XGPU_BIND(cuda, cuLaunchKernel);
        XGPU_BIND(cuda, cuGetErrorName);
        // NVRTC where the backend looks for it: the loader's path, then the toolkit's lib64.
        std::vector<std::string> paths;
        const char* sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};
        if (const char* env = std::getenv("XGPU_CUDA_NVRTC"); env && *env) paths.push_back(env);
        for (const char* s : sonames)
            paths.push_back(s);
        for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
            if (const char* dir = std::getenv(var); dir && *dir)
                for (const char* s : sonames)
                    paths.push_back(std::string(dir) + "/lib64/" + s);
        for (const char* s : sonames)
            paths.push_back(std::string("/usr/local/cuda/lib64/") + s);
        void* nvrtc = open_first(paths);
        if (!nvrtc) throw std::runtime_error("NVRTC (libnvrtc.so.13) not found");
        XGPU_BIND(nvrtc, nvrtcCreateProgram);
        XGPU_BIND(nvrtc, nvrtcCompileProgram);
        XGPU_BIND(nvrtc, nvrtcGetCUBINSize);
        XGPU_BIND(nvrtc, nvrtcGetCUBIN);
        XGPU_BIND(nvrtc, nvrtcGetPTXSize);
        XGPU_BIND(nvrtc, nvrtcGetPTX);
        XGPU_BIND(nvrtc, nvrtcDestroyProgram);
#undef XGPU_BIND
        return a;
    }();
    return a;
}

void check(Result r, const char* call) {
    if (r == 0) return;
    const char* name = nullptr;
    if (api().cuGetErrorName(r, &name) != 0 || !name) name = "unknown error";
    throw std::runtime_error(std::string(call) + " failed: " + name + " (" + std::to_string(r) + ")");
}

// The kernel as a cubin for the device's architecture, or as PTX for compute_75 where this NVRTC
// does not know the architecture.
std::vector<char> compile(int major, int minor) {
    const Api& a = api();
    const std::string archs[] = {"-arch=sm_" + std::to_string(10 * major + minor), "-arch=compute_75"};
    for (const auto& arch : archs) {
        NvrtcProgram p = nullptr;
        if (a.nvrtcCreateProgram(&p, cuda_src, "empty.cu", 0, nullptr, nullptr) != 0)
            throw std::runtime_error("nvrtcCreateProgram failed");
        const char* opts[] = {arch.c_str()};
        std::vector<char> image;
        if (a.nvrtcCompileProgram(p, 1, opts) == 0) {
            std::size_t size = 0;
            if (a.nvrtcGetCUBINSize(p, &size) == 0 && size > 0) {
                image.resize(size);
                a.nvrtcGetCUBIN(p, image.data());
            } else if (a.nvrtcGetPTXSize(p, &size) == 0 && size > 0) {
                image.resize(size);
                a.nvrtcGetPTX(p, image.data());
            }
        }
        a.nvrtcDestroyProgram(&p);
        if (!image.empty()) return image;
    }
    throw std::runtime_error("NVRTC could not compile the empty kernel");
}

class Launcher final : public RawLauncher {
public:
    explicit Launcher(int ordinal) {
        const Api& a = api();
        check(a.cuInit(0), "cuInit");
        check(a.cuDeviceGet(&device_, ordinal), "cuDeviceGet");
        int major = 0, minor = 0;
        check(a.cuDeviceGetAttribute(&major, attr_cc_major, device_), "cuDeviceGetAttribute");
        check(a.cuDeviceGetAttribute(&minor, attr_cc_minor, device_), "cuDeviceGetAttribute");
        const std::vector<char> image = compile(major, minor);
        check(a.cuDevicePrimaryCtxRetain(&ctx_, device_), "cuDevicePrimaryCtxRetain");
        Current c(ctx_);
        check(a.cuModuleLoadData(&module_, image.data()), "cuModuleLoadData");
        check(a.cuModuleGetFunction(&function_, module_, "empty"), "cuModuleGetFunction");
        check(a.cuStreamCreate(&stream_, stream_non_blocking), "cuStreamCreate");
        check(a.cuMemAlloc_v2(&buffer_, 256), "cuMemAlloc");
    }
    ~Launcher() override {
        const Api& a = api();
        Ctx prev = nullptr;
        a.cuCtxGetCurrent(&prev);
        a.cuCtxSetCurrent(ctx_);
        if (stream_) {
            a.cuStreamSynchronize(stream_);
            a.cuStreamDestroy_v2(stream_);
        }
        if (buffer_) a.cuMemFree_v2(buffer_);
        if (module_) a.cuModuleUnload(module_);
        a.cuCtxSetCurrent(prev);
        a.cuDevicePrimaryCtxRelease_v2(device_);
    }

    double batch_us(int n) override {
        const Api& a = api();
        Current c(ctx_); // the primary context xgpu uses too: the same CUcontext
        const auto t0 = Clock::now();
        for (int i = 0; i < n; ++i) {
            float s = 2.0f;
            unsigned long long count = 32;
            void* params[] = {&buffer_, &s, &count};
            check(a.cuLaunchKernel(function_, 1, 1, 1, 32, 1, 1, 0, stream_, params, nullptr), "cuLaunchKernel");
        }
        check(a.cuStreamSynchronize(stream_), "cuStreamSynchronize");
        return us_since(t0) / n;
    }
    std::string label() const override { return "raw Driver API (cuLaunchKernel, stream synchronize)"; }

private:
    // Makes `ctx` current for a scope and restores the previous one (xgpu remembers which context
    // it made current on each thread).
    struct Current {
        explicit Current(Ctx ctx) {
            api().cuCtxGetCurrent(&prev);
            check(api().cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
        }
        ~Current() { api().cuCtxSetCurrent(prev); }
        Ctx prev = nullptr;
    };

    Device device_ = 0;
    Ctx ctx_ = nullptr;
    Module module_ = nullptr;
    Function function_ = nullptr;
    Stream stream_ = nullptr;
    DevicePtr buffer_ = 0;
};

} // namespace cu

// ---- OpenCL through the ICD loader (libOpenCL, which xgpu links) ----------------------------

#ifdef XGPU_BENCH_OPENCL
namespace cl {

void check(cl_int err, const char* call) {
    if (err != CL_SUCCESS) throw std::runtime_error(std::string(call) + " failed (" + std::to_string(err) + ")");
}

std::string device_name(cl_device_id d) {
    std::size_t size = 0;
    check(clGetDeviceInfo(d, CL_DEVICE_NAME, 0, nullptr, &size), "clGetDeviceInfo");
    std::string s(size, '\0');
    check(clGetDeviceInfo(d, CL_DEVICE_NAME, size, s.data(), nullptr), "clGetDeviceInfo");
    while (!s.empty() && s.back() == '\0')
        s.pop_back();
    return s;
}

// The device at `index` in platform-then-device order (xgpu's order) if it is named `name`, else
// the first device so named.
cl_device_id find_device(int index, const std::string& name) {
    cl_uint np = 0;
    check(clGetPlatformIDs(0, nullptr, &np), "clGetPlatformIDs");
    std::vector<cl_platform_id> platforms(np);
    check(clGetPlatformIDs(np, platforms.data(), nullptr), "clGetPlatformIDs");
    std::vector<cl_device_id> all;
    for (cl_platform_id p : platforms) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
        std::vector<cl_device_id> ds(nd);
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr) != CL_SUCCESS) continue;
        all.insert(all.end(), ds.begin(), ds.end());
    }
    if (index >= 0 && std::size_t(index) < all.size() && device_name(all[std::size_t(index)]) == name)
        return all[std::size_t(index)];
    for (cl_device_id d : all)
        if (device_name(d) == name) return d;
    throw std::runtime_error("no OpenCL device named '" + name + "'");
}

class Launcher final : public RawLauncher {
public:
    Launcher(int index, const std::string& name, bool profiling) : profiling_(profiling) {
        cl_int err = CL_SUCCESS;
        device_ = find_device(index, name);
        context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
        check(err, "clCreateContext");
        queue_ = clCreateCommandQueue(context_, device_, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
        check(err, "clCreateCommandQueue");
        program_ = clCreateProgramWithSource(context_, 1, &opencl_src, nullptr, &err);
        check(err, "clCreateProgramWithSource");
        check(clBuildProgram(program_, 1, &device_, "", nullptr, nullptr), "clBuildProgram");
        kernel_ = clCreateKernel(program_, "empty", &err);
        check(err, "clCreateKernel");
        buffer_ = clCreateBuffer(context_, CL_MEM_READ_WRITE, 256, nullptr, &err);
        check(err, "clCreateBuffer");
    }
    ~Launcher() override {
        if (queue_) {
            clFinish(queue_);
            clReleaseCommandQueue(queue_);
        }
        if (buffer_) clReleaseMemObject(buffer_);
        if (kernel_) clReleaseKernel(kernel_);
        if (program_) clReleaseProgram(program_);
        if (context_) clReleaseContext(context_);
    }

    // Every launch sets its three arguments, as a caller of the raw API passing them would.
    double batch_us(int n) override {
        const std::size_t global = 32, local = 32;
        const auto t0 = Clock::now();
        for (int i = 0; i < n; ++i) {
            const float s = 2.0f;
            const cl_ulong count = 32;
            check(clSetKernelArg(kernel_, 0, sizeof buffer_, &buffer_), "clSetKernelArg");
            check(clSetKernelArg(kernel_, 1, sizeof s, &s), "clSetKernelArg");
            check(clSetKernelArg(kernel_, 2, sizeof count, &count), "clSetKernelArg");
            check(clEnqueueNDRangeKernel(queue_, kernel_, 1, nullptr, &global, &local, 0, nullptr, nullptr),
                  "clEnqueueNDRangeKernel");
        }
        check(clFinish(queue_), "clFinish");
        return us_since(t0) / n;
    }
    std::string label() const override {
        return profiling_ ? "raw OpenCL, profiling queue as xgpu's (3 clSetKernelArg + clEnqueueNDRangeKernel)"
                          : "raw OpenCL (3 clSetKernelArg + clEnqueueNDRangeKernel, clFinish)";
    }

private:
    bool profiling_;
    cl_device_id device_ = nullptr;
    cl_context context_ = nullptr;
    cl_command_queue queue_ = nullptr;
    cl_program program_ = nullptr;
    cl_kernel kernel_ = nullptr;
    cl_mem buffer_ = nullptr;
};

} // namespace cl
#endif

} // namespace

std::unique_ptr<RawLauncher> make_raw_launcher(const std::string& backend, int index, const std::string& name,
                                               bool profiling_queue, std::string& why) {
    try {
        if (backend == "cuda") return std::make_unique<cu::Launcher>(index);
#ifdef XGPU_BENCH_OPENCL
        if (backend == "opencl") return std::make_unique<cl::Launcher>(index, name, profiling_queue);
#else
        (void)name;
        (void)profiling_queue;
#endif
        why = "no raw loop for backend '" + backend + "' in this build";
    } catch (const std::exception& e) {
        why = e.what();
    }
    return nullptr;
}

} // namespace xgpu_bench
