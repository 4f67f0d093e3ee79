// xgpu devices: what a backend reports about one device, and the list of backends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xgpu {

enum class DeviceType { gpu, cpu, accelerator, other };

const char* to_string(DeviceType type) noexcept;

// What a device offers for images (xgpu/image.hpp); zero sizes where it has none.
struct ImageLimits {
    bool supported = false;
    std::size_t max_width_1d = 0;
    std::size_t max_width_2d = 0, max_height_2d = 0;
    std::size_t max_width_3d = 0, max_height_3d = 0, max_depth_3d = 0;
    std::size_t max_width_writable_2d = 0, max_height_writable_2d = 0; // CUDA's surface limits
    unsigned max_read_images = 0;  // per kernel; 0 where the backend sets no limit (CUDA)
    unsigned max_write_images = 0; // per kernel; 0 where the backend sets no limit (CUDA)
    unsigned max_samplers = 0;     // per kernel; 0 where the backend sets no limit (CUDA)
    // 2-D image views of a buffer without a copy (Image::view): CUDA's pitched-linear textures.
    bool buffer_views = false;
    std::size_t max_width_view = 0, max_height_view = 0, max_pitch_view = 0; // pitch in bytes
    std::size_t view_pitch_alignment = 0, view_base_alignment = 0;           // bytes
};

// Plain facts about one device, as the backend reports them.
struct DeviceInfo {
    std::string backend;          // "cuda" or "opencl"
    int index = 0;                // index within the backend's device list
    std::string name;             // e.g. "NVIDIA H200"
    std::string vendor;           // e.g. "NVIDIA Corporation"
    std::string platform;         // OpenCL platform name; "CUDA" for the CUDA backend
    std::string version;          // OpenCL device version, or "compute capability 9.0"
    std::string driver_version;   // driver version string
    std::string compiler_version; // "NVRTC 13.0" or the OpenCL C version
    std::string arch;             // "sm_90" on CUDA; the device name on OpenCL
    DeviceType type = DeviceType::other;
    std::uint64_t global_memory = 0;       // bytes
    std::uint64_t max_allocation = 0;      // largest single buffer, bytes
    std::uint64_t local_memory = 0;        // per work-group, bytes
    std::uint64_t static_local_memory = 0; // what a kernel may declare statically (XGPU_LOCAL arrays), bytes
    unsigned compute_units = 0;
    std::size_t max_work_group_size = 0;
    unsigned simd_width = 1; // warp size on CUDA, preferred work-group multiple on OpenCL
    bool fp64 = false;
    // NVIDIA's compute capability as major * 10 + minor (90 on an H200): on CUDA, and on OpenCL
    // where the driver has cl_nv_device_attribute_query; 0 otherwise. Kernels with inline PTX
    // follow it on both backends (the OpenCL backend defines XGPU_NV_SM from it).
    unsigned nv_compute_capability = 0;
    // The dialect's XGPU_GROUP_TICKET: the last work-group of a launch to finish can see the
    // global writes of all the others (a reduction then combines its partials in one launch).
    bool group_ticket = false;
    // Page-locked host memory kernels write directly (a reduction's result then reaches the host
    // without a copy on the queue).
    bool mapped_memory = false;
    ImageLimits images;
};

// A device handle: cheap to copy.
class Device {
public:
    Device() = default;
    explicit Device(DeviceInfo info) : info_(std::make_shared<const DeviceInfo>(std::move(info))) {}

    const DeviceInfo& info() const { return *info_; }
    const std::string& name() const { return info_->name; }
    const std::string& vendor() const { return info_->vendor; }
    const std::string& backend() const { return info_->backend; }
    int index() const { return info_->index; }
    DeviceType type() const { return info_->type; }
    bool has_fp64() const { return info_->fp64; }
    std::uint64_t global_memory() const { return info_->global_memory; }

private:
    std::shared_ptr<const DeviceInfo> info_;
};

// What one backend offers here, or why it cannot start.
struct BackendStatus {
    std::string name;
    bool available = false;
    std::string reason; // why not, when !available
    std::vector<Device> devices;
    // The libraries the backend loaded, or would load, each with its path: the CUDA driver and
    // NVRTC; the OpenCL ICD loader and the drivers (ICDs) it was given. For xgpu-info and
    // xgpu.show_config(), which say where a backend's pieces come from.
    std::vector<std::string> libraries;
};

// The names of the backends compiled into this build, in the order `auto` tries them.
std::vector<std::string> backend_names();

// Probes every backend (loading drivers as needed) and lists their devices.
std::vector<BackendStatus> backends();

} // namespace xgpu
