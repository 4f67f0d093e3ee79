// The OpenCL backend: images, their formats and limits, samplers, and image transfers.
#include <algorithm>

#include <fmt/format.h>

#include "opencl.hpp"

namespace xgpu::opencl {

cl_image_format cl_format(const ImageFormat& f) {
    cl_image_format c{};
    c.image_channel_order = f.channels == 1 ? CL_R : f.channels == 2 ? CL_RG : CL_RGBA;
    switch (f.type) {
    case ChannelType::uint8: c.image_channel_data_type = f.normalized ? CL_UNORM_INT8 : CL_UNSIGNED_INT8; break;
    case ChannelType::int8: c.image_channel_data_type = f.normalized ? CL_SNORM_INT8 : CL_SIGNED_INT8; break;
    case ChannelType::uint16: c.image_channel_data_type = f.normalized ? CL_UNORM_INT16 : CL_UNSIGNED_INT16; break;
    case ChannelType::int16: c.image_channel_data_type = f.normalized ? CL_SNORM_INT16 : CL_SIGNED_INT16; break;
    case ChannelType::uint32: c.image_channel_data_type = CL_UNSIGNED_INT32; break;
    case ChannelType::int32: c.image_channel_data_type = CL_SIGNED_INT32; break;
    case ChannelType::float16: c.image_channel_data_type = CL_HALF_FLOAT; break;
    case ChannelType::float32: c.image_channel_data_type = CL_FLOAT; break;
    }
    return c;
}

ImageLimits image_limits(const cl::Device& d) {
    ImageLimits l;
    cl_bool support = CL_FALSE;
    if (d.getInfo(CL_DEVICE_IMAGE_SUPPORT, &support) != CL_SUCCESS || !support) return l;
    const auto size = [&](cl_device_info what) {
        std::size_t v = 0;
        d.getInfo(what, &v);
        return v;
    };
    const auto uint = [&](cl_device_info what) {
        cl_uint v = 0;
        d.getInfo(what, &v);
        return unsigned(v);
    };
    l.supported = true;
    // A plain 1-D image (not one over a buffer) is bounded by the 2-D width (OpenCL 1.2, 4.2).
    l.max_width_1d = size(CL_DEVICE_IMAGE2D_MAX_WIDTH);
    l.max_width_2d = l.max_width_writable_2d = size(CL_DEVICE_IMAGE2D_MAX_WIDTH);
    l.max_height_2d = l.max_height_writable_2d = size(CL_DEVICE_IMAGE2D_MAX_HEIGHT);
    l.max_width_3d = size(CL_DEVICE_IMAGE3D_MAX_WIDTH);
    l.max_height_3d = size(CL_DEVICE_IMAGE3D_MAX_HEIGHT);
    l.max_depth_3d = size(CL_DEVICE_IMAGE3D_MAX_DEPTH);
    l.max_read_images = uint(CL_DEVICE_MAX_READ_IMAGE_ARGS);
    l.max_write_images = uint(CL_DEVICE_MAX_WRITE_IMAGE_ARGS);
    l.max_samplers = uint(CL_DEVICE_MAX_SAMPLERS);
    return l;
}

namespace {

cl_mem_object_type image_type(unsigned dims) {
    return dims == 1 ? CL_MEM_OBJECT_IMAGE1D : dims == 2 ? CL_MEM_OBJECT_IMAGE2D : CL_MEM_OBJECT_IMAGE3D;
}

cl_mem memory(detail::ImageImpl& im) {
    return static_cast<Image&>(im).memory;
}

cl_mem memory(detail::BufferImpl& b) {
    return static_cast<Buffer&>(b).memory();
}

std::shared_lock<std::shared_mutex> gate(const std::shared_ptr<detail::ContextImpl>& ctx) {
    return static_cast<Context&>(*ctx).enqueue_gate();
}

} // namespace

bool Context::format_listed(const cl_image_format& f, cl_mem_object_type type, cl_mem_flags flags) {
    auto& list = formats_[{type, flags}];
    if (list.empty()) {
        cl_uint n = 0;
        if (clGetSupportedImageFormats(context(), flags, type, 0, nullptr, &n) != CL_SUCCESS || n == 0) return false;
        list.resize(n);
        check(clGetSupportedImageFormats(context(), flags, type, n, list.data(), nullptr),
              "clGetSupportedImageFormats");
    }
    return std::any_of(list.begin(), list.end(), [&](const cl_image_format& g) {
        return g.image_channel_order == f.image_channel_order && g.image_channel_data_type == f.image_channel_data_type;
    });
}

bool Context::image_format_supported(const ImageFormat& format, unsigned dims, bool writable) {
    if (!device_.info().images.supported) return false;
    // PoCL 3.1 lists CL_HALF_FLOAT but reads 234.0 from every texel of a half image holding 1, 2,
    // -2, 0.5 and writes zeros: half images are not offered there.
    if (pocl_ && format.type == ChannelType::float16) return false;
    std::lock_guard lock(image_mutex_);
    return format_listed(cl_format(format), image_type(dims), writable ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY);
}

std::shared_ptr<detail::ImageImpl> Context::create_image(const ImageFormat& format, unsigned dims,
                                                         const std::array<std::size_t, 3>& extent) {
    const cl_image_format f = cl_format(format);
    bool read_write = false;
    {
        std::lock_guard lock(image_mutex_);
        read_write = format_listed(f, image_type(dims), CL_MEM_READ_WRITE);
    }
    cl_image_desc desc{};
    desc.image_type = image_type(dims);
    desc.image_width = extent[0];
    desc.image_height = dims > 1 ? extent[1] : 0;
    desc.image_depth = dims > 2 ? extent[2] : 0;
    cl_int err = CL_SUCCESS;
    // Read-write where the device writes the format too, so that one image can be both.
    cl_mem m = clCreateImage(context(), read_write ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY, &f, &desc, nullptr, &err);
    check(err, "clCreateImage",
          fmt::format("{}-D image {}x{}x{} of {} on {}", dims, extent[0], extent[1], extent[2], format.str(),
                      device_.name()));
    return std::make_shared<Image>(shared_from_this(), format, dims, extent, m);
}

cl_sampler Context::sampler(unsigned key) {
    std::lock_guard lock(image_mutex_);
    auto it = samplers_.find(key);
    if (it != samplers_.end()) return it->second();
    const Sampler s = Sampler::from_key(key);
    cl_addressing_mode mode = CL_ADDRESS_CLAMP_TO_EDGE;
    switch (s.addressing()) {
    case Addressing::clamp_to_edge: mode = CL_ADDRESS_CLAMP_TO_EDGE; break;
    case Addressing::clamp_to_border: mode = CL_ADDRESS_CLAMP; break;
    case Addressing::repeat: mode = CL_ADDRESS_REPEAT; break;
    case Addressing::mirrored_repeat: mode = CL_ADDRESS_MIRRORED_REPEAT; break;
    }
    cl_int err = CL_SUCCESS;
    cl::Sampler made(context, s.normalized_coords() ? CL_TRUE : CL_FALSE, mode,
                     s.filter() == Filter::linear ? CL_FILTER_LINEAR : CL_FILTER_NEAREST, &err);
    check(err, "clCreateSampler", s.str());
    return samplers_.emplace(key, std::move(made)).first->second();
}

// Host transfers pass row and slice pitches of 0: OpenCL then takes the region's packed pitches.
void Queue::write_image(detail::ImageImpl& dst, const ImageRegion& r, const void* src) {
    const auto in_gate = gate(context);
    check(clEnqueueWriteImage(queue(), memory(dst), CL_TRUE, r.origin.data(), r.size.data(), 0, 0, src, 0, nullptr,
                              nullptr),
          "clEnqueueWriteImage");
}

void Queue::read_image(detail::ImageImpl& src, const ImageRegion& r, void* dst) {
    const auto in_gate = gate(context);
    check(clEnqueueReadImage(queue(), memory(src), CL_TRUE, r.origin.data(), r.size.data(), 0, 0, dst, 0, nullptr,
                             nullptr),
          "clEnqueueReadImage");
}

void Queue::copy_buffer_to_image(detail::BufferImpl& src, std::size_t offset, detail::ImageImpl& dst,
                                 const ImageRegion& r) {
    const auto in_gate = gate(context);
    check(clEnqueueCopyBufferToImage(queue(), memory(src), memory(dst), offset, r.origin.data(), r.size.data(), 0,
                                     nullptr, nullptr),
          "clEnqueueCopyBufferToImage");
}

void Queue::copy_image_to_buffer(detail::ImageImpl& src, const ImageRegion& r, detail::BufferImpl& dst,
                                 std::size_t offset) {
    const auto in_gate = gate(context);
    check(clEnqueueCopyImageToBuffer(queue(), memory(src), memory(dst), r.origin.data(), r.size.data(), offset, 0,
                                     nullptr, nullptr),
          "clEnqueueCopyImageToBuffer");
}

} // namespace xgpu::opencl
