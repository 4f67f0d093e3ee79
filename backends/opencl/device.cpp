// The OpenCL backend: platform and device enumeration, and its registration.
#include <fmt/format.h>

#include "opencl.hpp"

namespace xgpu::opencl {
namespace {

template <class T> T info(const cl::Device& d, cl_device_info what) {
    T value{};
    d.getInfo(what, &value);
    return value;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\0' || s.back() == ' '))
        s.pop_back();
    return s;
}

DeviceInfo describe(const cl::Platform& platform, const cl::Device& d, int index) {
    DeviceInfo i;
    i.backend = "opencl";
    i.index = index;
    i.name = trim(info<std::string>(d, CL_DEVICE_NAME));
    i.vendor = trim(info<std::string>(d, CL_DEVICE_VENDOR));
    i.platform = trim(platform.getInfo<CL_PLATFORM_NAME>());
    i.version = trim(info<std::string>(d, CL_DEVICE_VERSION));
    i.driver_version = trim(info<std::string>(d, CL_DRIVER_VERSION));
    i.compiler_version = trim(info<std::string>(d, CL_DEVICE_OPENCL_C_VERSION));
    i.arch = i.name;
    const auto type = info<cl_device_type>(d, CL_DEVICE_TYPE);
    i.type = (type & CL_DEVICE_TYPE_GPU)           ? DeviceType::gpu
             : (type & CL_DEVICE_TYPE_CPU)         ? DeviceType::cpu
             : (type & CL_DEVICE_TYPE_ACCELERATOR) ? DeviceType::accelerator
                                                   : DeviceType::other;
    i.global_memory = info<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
    i.max_allocation = info<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    i.local_memory = info<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE);
    i.compute_units = info<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    i.max_work_group_size = info<std::size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    i.fp64 = info<cl_device_fp_config>(d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0 ||
             info<std::string>(d, CL_DEVICE_EXTENSIONS).find("cl_khr_fp64") != std::string::npos;
    const std::string vendor = i.vendor;
    i.simd_width = i.type != DeviceType::gpu                            ? 1
                   : vendor.find("NVIDIA") != std::string::npos         ? 32
                   : vendor.find("Advanced Micro") != std::string::npos ? 64
                                                                        : 1;
    return i;
}

class Backend final : public detail::BackendImpl {
public:
    std::string name() const override { return "opencl"; }

    std::vector<Device> devices() override {
        std::lock_guard lock(mutex_);
        if (!probed_) probe();
        if (!unavailable_.empty()) throw BackendUnavailable(unavailable_, {"opencl", "clGetPlatformIDs", 0, ""});
        return devices_;
    }

    std::shared_ptr<detail::ContextImpl> create_context(const Device& device) override {
        devices();
        std::lock_guard lock(mutex_);
        const auto i = std::size_t(device.index());
        if (i >= cl_devices_.size() || devices_[i].name() != device.name())
            throw InvalidArgument(fmt::format("xgpu[opencl]: no device {} ('{}')", device.index(), device.name()));
        return std::make_shared<Context>(devices_[i], cl_devices_[i]);
    }

private:
    void probe() {
        probed_ = true;
        std::vector<cl::Platform> platforms;
        const cl_int err = cl::Platform::get(&platforms);
        if (err != CL_SUCCESS || platforms.empty()) {
            unavailable_ =
                fmt::format("xgpu[opencl]: no OpenCL platform ({}): the ICD loader (libOpenCL.so.1) found no "
                            "driver; install one (e.g. pocl-opencl-icd) or point OCL_ICD_VENDORS at its .icd file",
                            err == CL_SUCCESS ? "none listed" : error_name(err));
            return;
        }
        for (const auto& p : platforms) {
            std::vector<cl::Device> ds;
            if (p.getDevices(CL_DEVICE_TYPE_ALL, &ds) != CL_SUCCESS) continue; // a platform with no device
            for (const auto& d : ds) {
                devices_.emplace_back(describe(p, d, int(devices_.size())));
                cl_devices_.push_back(d);
            }
        }
        if (devices_.empty()) unavailable_ = "xgpu[opencl]: OpenCL platforms found, but none has a device";
    }

    std::mutex mutex_;
    bool probed_ = false;
    std::string unavailable_;
    std::vector<Device> devices_;
    std::vector<cl::Device> cl_devices_;
};

} // namespace
} // namespace xgpu::opencl

namespace xgpu::detail {
void register_opencl_backend() {
    register_backend(std::make_shared<opencl::Backend>());
}
} // namespace xgpu::detail
