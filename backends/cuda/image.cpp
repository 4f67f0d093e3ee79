// The CUDA backend: images as CUDA arrays (cuArray3DCreate), read through texture objects
// (cuTexObjectCreate, one per image and sampler: CUDA bakes addressing and filtering into the
// object) and written through surface objects; transfers with cuMemcpy3DAsync. No texture
// references: the objects travel as kernel arguments (struct xgpu_image, kernels/preamble_cuda.h).
#include <algorithm>

#include <fmt/format.h>

#include "cuda.hpp"

namespace xgpu::cuda {

ImageLimits image_limits(CUdevice d) {
    const auto attr = [&](CUdevice_attribute what) {
        int v = 0;
        check(api::cuDeviceGetAttribute(&v, what, d), "cuDeviceGetAttribute", "image limits");
        return std::size_t(v);
    };
    ImageLimits l;
    l.supported = true;
    l.max_width_1d = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
    l.max_width_2d = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
    l.max_height_2d = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
    l.max_width_3d = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH);
    l.max_height_3d = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT);
    l.max_depth_3d = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
    // A 2-D array kernels write is made with CUDA_ARRAY3D_SURFACE_LDST, whose extents are the
    // surface limits.
    l.max_width_writable_2d = std::min(l.max_width_2d, attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH));
    l.max_height_writable_2d = std::min(l.max_height_2d, attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT));
    // Views of buffers: pitched-linear textures (CU_RESOURCE_TYPE_PITCH2D).
    l.buffer_views = true;
    l.max_width_view = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH);
    l.max_height_view = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT);
    l.max_pitch_view = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH);
    l.view_pitch_alignment = attr(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
    l.view_base_alignment = attr(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
    return l;
}

namespace {

CUarray_format array_format(ChannelType t) {
    switch (t) {
    case ChannelType::uint8: return CU_AD_FORMAT_UNSIGNED_INT8;
    case ChannelType::int8: return CU_AD_FORMAT_SIGNED_INT8;
    case ChannelType::uint16: return CU_AD_FORMAT_UNSIGNED_INT16;
    case ChannelType::int16: return CU_AD_FORMAT_SIGNED_INT16;
    case ChannelType::uint32: return CU_AD_FORMAT_UNSIGNED_INT32;
    case ChannelType::int32: return CU_AD_FORMAT_SIGNED_INT32;
    case ChannelType::float16: return CU_AD_FORMAT_HALF;
    case ChannelType::float32: return CU_AD_FORMAT_FLOAT;
    }
    return CU_AD_FORMAT_FLOAT;
}

CUaddress_mode address_mode(Addressing a) {
    switch (a) {
    case Addressing::clamp_to_edge: return CU_TR_ADDRESS_MODE_CLAMP;
    case Addressing::clamp_to_border: return CU_TR_ADDRESS_MODE_BORDER;
    case Addressing::repeat: return CU_TR_ADDRESS_MODE_WRAP;
    case Addressing::mirrored_repeat: return CU_TR_ADDRESS_MODE_MIRROR;
    }
    return CU_TR_ADDRESS_MODE_CLAMP;
}

// The resource textures and surfaces are made over: the array, or a view's pitched memory.
CUDA_RESOURCE_DESC resource(const Image& im) {
    CUDA_RESOURCE_DESC r{};
    if (im.array) {
        r.resType = CU_RESOURCE_TYPE_ARRAY;
        r.res.array.hArray = im.array;
    } else {
        r.resType = CU_RESOURCE_TYPE_PITCH2D;
        r.res.pitch2D.devPtr = im.memory;
        r.res.pitch2D.format = array_format(im.format.type);
        r.res.pitch2D.numChannels = im.format.channels;
        r.res.pitch2D.width = im.extent[0];
        r.res.pitch2D.height = im.extent[1];
        r.res.pitch2D.pitchInBytes = im.pitch;
    }
    return r;
}

Image& image(detail::ImageImpl& im) {
    return static_cast<Image&>(im);
}

// A copy between a region of an image and packed texels: what cuMemcpy3DAsync needs on the
// image's side; the caller fills in the other side.
CUDA_MEMCPY3D region_copy(const Image& im, const ImageRegion& r, bool image_is_source) {
    const std::size_t texel = im.format.texel_bytes();
    CUDA_MEMCPY3D c{};
    if (image_is_source) {
        c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        c.srcArray = im.array;
        c.srcXInBytes = r.origin[0] * texel;
        c.srcY = r.origin[1];
        c.srcZ = r.origin[2];
        c.dstPitch = r.size[0] * texel;
        c.dstHeight = r.size[1];
    } else {
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        c.dstArray = im.array;
        c.dstXInBytes = r.origin[0] * texel;
        c.dstY = r.origin[1];
        c.dstZ = r.origin[2];
        c.srcPitch = r.size[0] * texel;
        c.srcHeight = r.size[1];
    }
    c.WidthInBytes = r.size[0] * texel;
    c.Height = r.size[1];
    c.Depth = r.size[2];
    return c;
}

void copy3d(const CUDA_MEMCPY3D& c, CUstream stream, const ImageRegion& r) {
    const CUresult e = api::cuMemcpy3DAsync(&c, stream);
    if (e != CUDA_SUCCESS)
        fail(e, "cuMemcpy3DAsync",
             fmt::format("image region of {}x{}x{} texels at ({}, {}, {})", r.size[0], r.size[1], r.size[2],
                         r.origin[0], r.origin[1], r.origin[2]));
}

} // namespace

Image::Image(std::shared_ptr<Context> ctx, const ImageFormat& f, unsigned d, const std::array<std::size_t, 3>& e)
    : ImageImpl(ctx, f, d, e), owner(*ctx) {
    const auto& limits = ctx->device().info().images;
    CUDA_ARRAY3D_DESCRIPTOR desc{};
    desc.Width = e[0];
    desc.Height = d > 1 ? e[1] : 0; // 0 in the dimensions a 1-D or 2-D array lacks
    desc.Depth = d > 2 ? e[2] : 0;
    desc.Format = array_format(f.type);
    desc.NumChannels = f.channels;
    // Surface loads and stores (Image::writable) for the 2-D arrays that fit the surface limits.
    if (d == 2 && e[0] <= limits.max_width_writable_2d && e[1] <= limits.max_height_writable_2d)
        desc.Flags = CUDA_ARRAY3D_SURFACE_LDST;
    ctx->make_current();
    check(api::cuArray3DCreate(&array, &desc), "cuArray3DCreate",
          fmt::format("{}-D image {}x{}x{} of {} on {}", d, e[0], e[1], e[2], f.str(), ctx->device().name()));
}

Image::Image(std::shared_ptr<Context> ctx, const ImageFormat& f, std::size_t width, std::size_t height,
             CUdeviceptr first, std::size_t row_pitch)
    : ImageImpl(ctx, f, 2, {width, height, 1}), owner(*ctx), memory(first), pitch(row_pitch) {}

Image::~Image() {
    if (!owner.try_make_current()) return; // a destructor cannot report
    // Kernels still queued may read through these objects (OpenCL keeps a released image until
    // its commands finish; CUDA does not say): they finish first.
    api::cuCtxSynchronize();
    for (const auto& [key, tex] : textures_)
        api::cuTexObjectDestroy(tex);
    if (surface_) api::cuSurfObjectDestroy(surface_);
    if (array) api::cuArrayDestroy(array);
}

CUtexObject Image::texture(unsigned key) {
    std::lock_guard lock(mutex_);
    if (auto it = textures_.find(key); it != textures_.end()) return it->second;
    const Sampler s = Sampler::from_key(key);
    const CUDA_RESOURCE_DESC res = resource(*this);
    CUDA_TEXTURE_DESC tex{};
    // The dimensions the image lacks clamp: the H200 filters a 1-D array as a 2-D one of height 1,
    // so a border there blended every linear read half and half with the border's zero.
    for (unsigned k = 0; k < 3; ++k)
        tex.addressMode[k] = k < dims ? address_mode(s.addressing()) : CU_TR_ADDRESS_MODE_CLAMP;
    tex.filterMode = s.filter() == Filter::linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
    // Integer formats read as integers (XGPU_*_I, _UI); 8- and 16-bit normalised ones, half and
    // float as floats. The border colour stays 0 (OpenCL's CL_ADDRESS_CLAMP border).
    tex.flags = (format.reads_float() ? 0u : unsigned(CU_TRSF_READ_AS_INTEGER)) |
                (s.normalized_coords() ? unsigned(CU_TRSF_NORMALIZED_COORDINATES) : 0u);
    owner.make_current();
    CUtexObject t = 0;
    check(api::cuTexObjectCreate(&t, &res, &tex, nullptr), "cuTexObjectCreate",
          fmt::format("{}-D image of {} with a sampler of {}", dims, format.str(), s.str()));
    textures_.emplace(key, t);
    return t;
}

CUsurfObject Image::surface() {
    std::lock_guard lock(mutex_);
    if (surface_) return surface_;
    const CUDA_RESOURCE_DESC res = resource(*this);
    owner.make_current();
    check(api::cuSurfObjectCreate(&surface_, &res), "cuSurfObjectCreate",
          fmt::format("{}-D image of {}", dims, format.str()));
    return surface_;
}

bool Context::image_format_supported(const ImageFormat&, unsigned, bool) {
    return true; // every channel type of xgpu with 1, 2 or 4 channels, as texture and as surface
}

std::shared_ptr<detail::ImageImpl> Context::create_image(const ImageFormat& format, unsigned dims,
                                                         const std::array<std::size_t, 3>& extent) {
    return std::make_shared<Image>(self(), format, dims, extent);
}

std::shared_ptr<detail::ImageImpl> Context::create_image_view(const std::shared_ptr<detail::BufferImpl>& buffer,
                                                              std::size_t offset, const ImageFormat& format,
                                                              std::size_t width, std::size_t height,
                                                              std::size_t pitch) {
    const CUdeviceptr first = static_cast<Buffer&>(*buffer).pointer + offset;
    const std::size_t align = device().info().images.view_base_alignment;
    if (align && first % align != 0)
        throw InvalidArgument(fmt::format("xgpu[cuda]: Image::view: the view's first texel (buffer offset {}) is not "
                                          "aligned to the device's {} bytes for textures",
                                          offset, align),
                              {"cuda", "image", 0, ""});
    return std::make_shared<Image>(self(), format, width, height, first, pitch);
}

void Queue::write_image(detail::ImageImpl& dst, const ImageRegion& r, const void* src) {
    owner.make_current();
    CUDA_MEMCPY3D c = region_copy(image(dst), r, false);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    copy3d(c, stream, r);
    check(api::cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void Queue::read_image(detail::ImageImpl& src, const ImageRegion& r, void* dst) {
    owner.make_current();
    CUDA_MEMCPY3D c = region_copy(image(src), r, true);
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = dst;
    copy3d(c, stream, r);
    check(api::cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void Queue::copy_buffer_to_image(detail::BufferImpl& src, std::size_t offset, detail::ImageImpl& dst,
                                 const ImageRegion& r) {
    owner.make_current();
    CUDA_MEMCPY3D c = region_copy(image(dst), r, false);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = static_cast<Buffer&>(src).pointer + offset;
    copy3d(c, stream, r);
}

void Queue::copy_image_to_buffer(detail::ImageImpl& src, const ImageRegion& r, detail::BufferImpl& dst,
                                 std::size_t offset) {
    owner.make_current();
    CUDA_MEMCPY3D c = region_copy(image(src), r, true);
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = static_cast<Buffer&>(dst).pointer + offset;
    copy3d(c, stream, r);
}

} // namespace xgpu::cuda
