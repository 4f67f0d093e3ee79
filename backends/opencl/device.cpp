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
    i.static_local_memory = i.local_memory; // OpenCL draws both kinds from one budget
    i.compute_units = info<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
    i.max_work_group_size = info<std::size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE);
    const std::string extensions = info<std::string>(d, CL_DEVICE_EXTENSIONS);
    i.fp64 = info<cl_device_fp_config>(d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0 ||
             extensions.find("cl_khr_fp64") != std::string::npos;
    i.images = image_limits(d);
    if (extensions.find("cl_nv_device_attribute_query") != std::string::npos) {
        cl_uint major = 0, minor = 0;
        if (d.getInfo(CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, &major) == CL_SUCCESS &&
            d.getInfo(CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, &minor) == CL_SUCCESS && minor < 10)
            i.nv_compute_capability = major * 10 + minor;
    }
    const std::string vendor = i.vendor;
    i.simd_width = i.type != DeviceType::gpu                            ? 1
                   : vendor.find("NVIDIA") != std::string::npos         ? 32
                   : vendor.find("Advanced Micro") != std::string::npos ? 64
                                                                        : 1;
    return i;
}

class Backend final : public detail::ProbedBackend {
public:
    std::string name() const override { return "opencl"; }

    std::shared_ptr<detail::ContextImpl> create_context(const Device& device) override {
        const auto all = devices(); // probes first: cl_devices_ is complete and no longer changes
        const auto i = std::size_t(device.index());
        if (i >= all.size() || all[i].name() != device.name())
            throw InvalidArgument(fmt::format("xgpu[opencl]: no device {} ('{}')", device.index(), device.name()));
        return std::make_shared<Context>(all[i], cl_devices_[i]);
    }

    std::vector<std::string> libraries() override { return icd_libraries(); }

private:
    std::vector<Device> probe() override {
        choose_icds();
        std::vector<cl::Platform> platforms;
        const cl_int err = cl::Platform::get(&platforms);
        if (err != CL_SUCCESS || platforms.empty())
            throw BackendUnavailable(
                fmt::format(
                    "xgpu[opencl]: no OpenCL platform ({}): the ICD loader (libOpenCL.so.1) found no "
                    "driver; install one (Debian: pocl-opencl-icd; from Python: pip install xgpu[pocl]) or point "
                    "OCL_ICD_VENDORS at its .icd file",
                    err == CL_SUCCESS ? "none listed" : error_name(err)),
                {"opencl", "clGetPlatformIDs", err, err == CL_SUCCESS ? "" : error_name(err)});
        std::vector<Device> out;
        for (const auto& p : platforms) {
            std::vector<cl::Device> ds;
            if (p.getDevices(CL_DEVICE_TYPE_ALL, &ds) != CL_SUCCESS) continue; // a platform with no device
            for (const auto& d : ds) {
                out.emplace_back(describe(p, d, int(out.size())));
                cl_devices_.push_back(d);
            }
        }
        if (out.empty())
            throw BackendUnavailable("xgpu[opencl]: OpenCL platforms found, but none has a device",
                                     {"opencl", "clGetDeviceIDs", 0, ""});
        return out;
    }

    std::vector<cl::Device> cl_devices_;
};

} // namespace
} // namespace xgpu::opencl

namespace xgpu::detail {
void register_opencl_backend() {
    register_backend(std::make_shared<opencl::Backend>());
}
} // namespace xgpu::detail
