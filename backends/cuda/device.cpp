// The CUDA backend: driver start-up, device enumeration, and its registration.
#include <mutex>

#include <fmt/format.h>

#include "cuda.hpp"

namespace xgpu::cuda {
namespace {

int attribute(CUdevice d, CUdevice_attribute what, const char* name) {
    int value = 0;
    check(api::cuDeviceGetAttribute(&value, what, d), "cuDeviceGetAttribute", name);
    return value;
}

// "13.0" from the driver's 13000.
std::string version_string(int v) {
    return fmt::format("{}.{}", v / 1000, v % 1000 / 10);
}

DeviceInfo describe(CUdevice d, int index, const std::string& driver, const std::string& nvrtc) {
    DeviceInfo i;
    char name[256] = {};
    check(api::cuDeviceGetName(name, int(sizeof name) - 1, d), "cuDeviceGetName");
    const int major = attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability");
    const int minor = attribute(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability");
    std::size_t total = 0;
    check(api::cuDeviceTotalMem(&total, d), "cuDeviceTotalMem");

    i.backend = "cuda";
    i.index = index;
    i.name = name;
    i.vendor = "NVIDIA Corporation";
    i.platform = "CUDA";
    i.version = fmt::format("compute capability {}.{}", major, minor);
    i.driver_version = driver;
    i.compiler_version = nvrtc.empty() ? "NVRTC not found" : "NVRTC " + nvrtc;
    i.arch = fmt::format("sm_{}{}", major, minor);
    i.nv_compute_capability = unsigned(major * 10 + minor);
    i.type = DeviceType::gpu;
    i.global_memory = total;
    i.max_allocation = total;
    // Launches may opt in to more shared memory than the default 48 KiB (Kernel::allow_shared_memory).
    i.local_memory =
        std::uint64_t(attribute(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared memory"));
    // Static __shared__ arrays stop at the default per-block limit (48 KiB); only dynamic shared
    // memory may use the opt-in size above.
    i.static_local_memory =
        std::uint64_t(attribute(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "static shared memory"));
    i.compute_units = unsigned(attribute(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessors"));
    i.max_work_group_size = std::size_t(attribute(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "threads per block"));
    i.simd_width = unsigned(attribute(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size"));
    i.fp64 = true;
    i.group_ticket = true; // __threadfence and atomicAdd (kernels/preamble_cuda.h)
    i.mapped_memory = attribute(d, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, "host memory mapping") != 0;
    i.images = image_limits(d);
    return i;
}

class Backend final : public detail::ProbedBackend {
public:
    std::string name() const override { return "cuda"; }

    std::shared_ptr<detail::ContextImpl> create_context(const Device& device) override {
        const auto all = devices();
        const auto i = std::size_t(device.index());
        if (device.backend() != "cuda" || i >= all.size() || all[i].name() != device.name())
            throw InvalidArgument(fmt::format("xgpu[cuda]: no device {} ('{}')", device.index(), device.name()));
        CUdevice d = 0;
        check(api::cuDeviceGet(&d, int(i)), "cuDeviceGet");
        return std::make_shared<Context>(all[i], d);
    }

    std::vector<std::string> libraries() override { return loaded_libraries(); }

private:
    std::vector<Device> probe() override {
        load_driver();
        const auto init = [](CUresult r, const char* call) {
            if (r != CUDA_SUCCESS) fail(r, call, "the CUDA driver could not start", Kind::unavailable);
        };
        init(api::cuInit(0), "cuInit");
        int version = 0, count = 0;
        init(api::cuDriverGetVersion(&version), "cuDriverGetVersion");
        init(api::cuDeviceGetCount(&count), "cuDeviceGetCount");
        if (count == 0)
            throw BackendUnavailable("xgpu[cuda]: the CUDA driver reports no device (CUDA_ERROR_NO_DEVICE)",
                                     {"cuda", "cuDeviceGetCount", CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"});
        const std::string nvrtc = nvrtc_version();
        std::vector<Device> out;
        for (int i = 0; i < count; ++i) {
            CUdevice d = 0;
            init(api::cuDeviceGet(&d, i), "cuDeviceGet");
            out.emplace_back(describe(d, i, version_string(version), nvrtc));
        }
        return out;
    }
};

} // namespace
} // namespace xgpu::cuda

namespace xgpu::detail {
void register_cuda_backend() {
    register_backend(std::make_shared<cuda::Backend>());
}
} // namespace xgpu::detail
