// Images and samplers: every check before the backends are called (formats, sizes against the
// device's limits, regions, sampler modes), transfers on the current queue, and image kernel
// arguments.
#include "xgpu/image.hpp"

#include <fmt/format.h>

#include "context_shared.hpp"
#include "xgpu/detail/backend.hpp"
#include "xgpu/error.hpp"

namespace xgpu {

const char* name(ChannelType t) noexcept {
    switch (t) {
    case ChannelType::uint8: return "uint8";
    case ChannelType::int8: return "int8";
    case ChannelType::uint16: return "uint16";
    case ChannelType::int16: return "int16";
    case ChannelType::uint32: return "uint32";
    case ChannelType::int32: return "int32";
    case ChannelType::float16: return "float16";
    case ChannelType::float32: return "float32";
    }
    return "?";
}

std::size_t channel_size(ChannelType t) noexcept {
    switch (t) {
    case ChannelType::uint8:
    case ChannelType::int8: return 1;
    case ChannelType::uint16:
    case ChannelType::int16:
    case ChannelType::float16: return 2;
    default: return 4;
    }
}

bool ImageFormat::is_signed_int() const {
    return type == ChannelType::int8 || type == ChannelType::int16 || type == ChannelType::int32;
}

std::string ImageFormat::str() const {
    return fmt::format("{}x{}{}", name(type), channels, normalized ? " normalized" : "");
}

const char* name(Filter f) noexcept {
    return f == Filter::linear ? "linear" : "nearest";
}

const char* name(Addressing a) noexcept {
    switch (a) {
    case Addressing::clamp_to_edge: return "clamp-to-edge";
    case Addressing::clamp_to_border: return "clamp-to-border";
    case Addressing::repeat: return "repeat";
    case Addressing::mirrored_repeat: return "mirrored-repeat";
    }
    return "?";
}

Sampler::Sampler(bool normalized_coords, Filter filter, Addressing addressing)
    : normalized_(normalized_coords), filter_(filter), addressing_(addressing) {
    if (unsigned(filter) > unsigned(Filter::linear) || unsigned(addressing) > unsigned(Addressing::mirrored_repeat))
        throw InvalidArgument("xgpu: Sampler: unknown filter or addressing mode");
    // OpenCL leaves these undefined (CL_INVALID_SAMPLER on some drivers) and CUDA turns them into
    // clamping silently: refused on both.
    if (!normalized_coords && (addressing == Addressing::repeat || addressing == Addressing::mirrored_repeat))
        throw InvalidArgument(fmt::format("xgpu: Sampler: {} addressing needs normalised coordinates on both "
                                          "backends (OpenCL and CUDA define it only for them)",
                                          name(addressing)));
}

std::string Sampler::str() const {
    return fmt::format("{} coordinates, {} filtering, {}", normalized_ ? "normalised" : "unnormalised", name(filter_),
                       name(addressing_));
}

namespace {

const Context& owner(const detail::ImageImpl& im) {
    return *static_cast<const Context*>(im.handle.get());
}

[[noreturn]] void bad(const std::string& backend, const std::string& what) {
    throw InvalidArgument("xgpu: " + what, {backend, "image", 0, ""});
}

void check_format(const std::string& backend, const ImageFormat& f) {
    if (unsigned(f.type) > unsigned(ChannelType::float32)) bad(backend, "image format: unknown channel type");
    if (f.channels != 1 && f.channels != 2 && f.channels != 4)
        bad(backend, fmt::format("image format {}: {} channels; images have 1, 2 or 4", f.str(), f.channels));
    if (f.normalized && (channel_size(f.type) > 2 || f.type == ChannelType::float16))
        bad(backend, fmt::format("image format {}: only 8- and 16-bit integer channels can be normalised", f.str()));
}

std::array<std::size_t, 3> limits(const ImageLimits& l, unsigned dims) {
    switch (dims) {
    case 1: return {l.max_width_1d, 1, 1};
    case 2: return {l.max_width_2d, l.max_height_2d, 1};
    default: return {l.max_width_3d, l.max_height_3d, l.max_depth_3d};
    }
}

// A region inside the image, with the dimensions it lacks at origin 0 and size 1.
void check_region(const detail::ImageImpl& im, const ImageRegion& r, const char* what) {
    static const char* axis[] = {"x", "y", "z"};
    static const char* extent[] = {"width", "height", "depth"};
    const std::string& be = im.context->device().backend();
    for (unsigned d = 0; d < 3; ++d) {
        if (d >= im.dims) {
            if (r.origin[d] != 0 || r.size[d] != 1)
                bad(be, fmt::format("{}: the region has origin {} and size {} in {}, but the image is {}-D (origin 0 "
                                    "and size 1 there)",
                                    what, r.origin[d], r.size[d], axis[d], im.dims));
            continue;
        }
        if (r.origin[d] > im.extent[d] || r.size[d] > im.extent[d] - r.origin[d])
            bad(be, fmt::format("{}: the region [{}, {}) in {} is past the image's {} of {}", what, r.origin[d],
                                r.origin[d] + r.size[d], axis[d], extent[d], im.extent[d]));
    }
}

std::shared_ptr<detail::QueueImpl> queue_of(const detail::ImageImpl& im) {
    const Context& ctx = owner(im);
    return ctx.current_queue().impl();
}

DType channel_dtype(ChannelType t) {
    switch (t) {
    case ChannelType::uint8: return DType::uint8;
    case ChannelType::int8: return DType::int8;
    case ChannelType::uint16:
    case ChannelType::float16: return DType::uint16;
    case ChannelType::int16: return DType::int16;
    case ChannelType::uint32: return DType::uint32;
    case ChannelType::int32: return DType::int32;
    default: return DType::float32;
    }
}

const detail::ImageImpl& need(const std::shared_ptr<detail::ImageImpl>& im, const char* what) {
    if (!im) throw InvalidArgument(fmt::format("xgpu: {} of an empty Image", what));
    return *im;
}

// Transfers and writes are refused on views of a buffer: the buffer is the way to its memory.
const detail::ImageImpl& need_own(const std::shared_ptr<detail::ImageImpl>& im, const char* what) {
    const auto& i = need(im, what);
    if (i.viewed)
        bad(i.context->device().backend(),
            fmt::format("{}: the image is a view of a buffer (Image::view); transfer through the buffer", what));
    return i;
}

} // namespace

Image Image::create(const Context& ctx, ImageFormat format, std::size_t width, std::size_t height, std::size_t depth) {
    if (!ctx.impl()) throw InvalidArgument("xgpu: Image::create on an empty Context");
    const auto& dev = ctx.device().info();
    const std::string& be = dev.backend;
    check_format(be, format);
    if (depth > 0 && height == 0) bad(be, "Image::create: a 3-D image needs a height");
    const unsigned dims = depth > 0 ? 3 : height > 0 ? 2 : 1;
    const std::array<std::size_t, 3> extent{width, dims > 1 ? height : 1, dims > 2 ? depth : 1};
    if (!dev.images.supported) bad(be, fmt::format("Image::create: {} ({}) has no image support", dev.name, be));
    const auto most = limits(dev.images, dims);
    static const char* extent_name[] = {"width", "height", "depth"};
    for (unsigned d = 0; d < dims; ++d) {
        if (extent[d] == 0) bad(be, fmt::format("Image::create: a {}-D image of {} 0", dims, extent_name[d]));
        if (extent[d] > most[d])
            bad(be, fmt::format("Image::create: {} {} of a {}-D image is past the device's limit of {} ({})",
                                extent_name[d], extent[d], dims, most[d], dev.name));
    }
    if (!ctx.impl()->image_format_supported(format, dims, false))
        bad(be, fmt::format("Image::create: {} ({}) does not support {}-D images of format {}", dev.name, be, dims,
                            format.str()));
    detail::check_allocation(dev, extent[0] * extent[1] * extent[2] * format.texel_bytes());
    auto impl = ctx.impl()->create_image(format, dims, extent);
    impl->handle = std::make_shared<Context>(ctx);
    return Image(std::move(impl));
}

bool Image::supported(const Context& ctx, ImageFormat format, unsigned dims, bool writable) {
    if (!ctx.impl() || !ctx.device().info().images.supported || dims < 1 || dims > 3) return false;
    if (writable && dims != 2) return false;
    try {
        check_format(ctx.backend(), format);
    } catch (const InvalidArgument&) {
        return false;
    }
    return ctx.impl()->image_format_supported(format, dims, writable);
}

Image Image::view(const Context& ctx, const Buffer& buffer, std::size_t offset, ImageFormat format, std::size_t width,
                  std::size_t height, std::size_t row_pitch) {
    if (!buffer) throw InvalidArgument("xgpu: Image::view of an empty Buffer");
    if (!ctx.impl() || buffer.impl()->context != ctx.impl())
        throw InvalidArgument("xgpu: Image::view: the buffer belongs to another context");
    const auto& ctx_impl = ctx.impl();
    const auto& dev = ctx_impl->device().info();
    const std::string& be = dev.backend;
    check_format(be, format);
    const auto& lim = dev.images;
    if (!lim.buffer_views)
        bad(be, fmt::format("Image::view: {} ({}) has no 2-D images over a buffer without a copy{}; create an "
                            "image and copy_from the buffer",
                            dev.name, be,
                            be == "opencl" ? " (OpenCL 1.2 has none; cl_khr_image2d_from_buffer is not used)" : ""));
    if (width == 0 || height == 0) bad(be, fmt::format("Image::view: a view of {}x{} texels", width, height));
    if (width > lim.max_width_view || height > lim.max_height_view || row_pitch > lim.max_pitch_view)
        bad(be, fmt::format("Image::view: {}x{} texels with a pitch of {} bytes is past the device's limits of {}x{} "
                            "and {} bytes",
                            width, height, row_pitch, lim.max_width_view, lim.max_height_view, lim.max_pitch_view));
    if (row_pitch < width * format.texel_bytes())
        bad(be, fmt::format("Image::view: a pitch of {} bytes is shorter than a row of {} texels of {} ({} bytes)",
                            row_pitch, width, format.str(), width * format.texel_bytes()));
    if (lim.view_pitch_alignment && row_pitch % lim.view_pitch_alignment != 0)
        bad(be, fmt::format("Image::view: the pitch of {} bytes is not a multiple of the device's {}", row_pitch,
                            lim.view_pitch_alignment));
    const std::size_t bytes = (height - 1) * row_pitch + width * format.texel_bytes();
    if (offset > buffer.size() || bytes > buffer.size() - offset)
        bad(be, fmt::format("Image::view: {} bytes from offset {} are past the buffer's {} bytes", bytes, offset,
                            buffer.size()));
    if (!ctx_impl->image_format_supported(format, 2, false))
        bad(be, fmt::format("Image::view: {} does not support images of format {}", dev.name, format.str()));
    auto impl = ctx_impl->create_image_view(buffer.impl(), offset, format, width, height, row_pitch);
    if (!impl) bad(be, "Image::view: the backend has no buffer views");
    impl->viewed = buffer.impl();
    impl->view_offset = offset;
    impl->view_pitch = row_pitch;
    impl->handle = std::make_shared<Context>(ctx);
    return Image(std::move(impl));
}

Image Image::from_host(const Context& ctx, ImageFormat format, const void* texels, std::size_t width,
                       std::size_t height, std::size_t depth) {
    if (!texels) throw InvalidArgument("xgpu: Image::from_host: null host pointer");
    Image im = create(ctx, format, width, height, depth);
    im.write(texels);
    return im;
}

Image Image::from_array_desc(const detail::ArrayDesc& a, unsigned channels, bool normalized, bool half) {
    if (!a.buffer) throw InvalidArgument("xgpu: Image::from_array: empty Array");
    const std::string& be = a.context.backend();
    if (!a.is_c_contiguous())
        bad(be, "Image::from_array: the array is not C-contiguous; pass a contiguous copy (.copy())");
    ImageFormat f{ChannelType::float32, channels, normalized};
    switch (a.dtype) {
    case DType::uint8: f.type = ChannelType::uint8; break;
    case DType::int8: f.type = ChannelType::int8; break;
    case DType::uint16: f.type = half ? ChannelType::float16 : ChannelType::uint16; break;
    case DType::int16: f.type = ChannelType::int16; break;
    case DType::uint32: f.type = ChannelType::uint32; break;
    case DType::int32: f.type = ChannelType::int32; break;
    case DType::float32: f.type = ChannelType::float32; break;
    default:
        bad(be, fmt::format("Image::from_array: no image channel type holds {} (uint8, int8, uint16, int16, uint32, "
                            "int32, float32; uint16 with half=true for float16)",
                            name(a.dtype)));
    }
    if (half && a.dtype != DType::uint16) bad(be, "Image::from_array: half=true takes an array of uint16 (the bits)");
    check_format(be, f);
    const std::size_t nd = a.shape.size(), extra = channels > 1 ? 1 : 0;
    if (nd < 1 + extra || nd > 3 + extra)
        bad(be, fmt::format("Image::from_array: an array of shape {} is no 1-, 2- or 3-D image of {} channel{}",
                            to_string(a.shape), channels, channels == 1 ? "" : "s"));
    if (extra && a.shape.back() != channels)
        bad(be, fmt::format("Image::from_array: the last axis of shape {} should hold the {} channels",
                            to_string(a.shape), channels));
    const unsigned dims = unsigned(nd - extra);
    // Refused before anything is created: an empty axis would otherwise read as an absent one (a
    // (0, 4) array as a 1-D image of width 4) and fail only at the copy.
    for (unsigned d = 0; d < dims; ++d)
        if (a.shape[d] == 0)
            bad(be, fmt::format("Image::from_array: axis {} of shape {} is empty: an image has at least one texel "
                                "along each axis",
                                d, to_string(a.shape)));
    // numpy order: (d, h, w) -> width is the last spatial axis.
    std::array<std::size_t, 3> e{0, 0, 0};
    for (unsigned d = 0; d < dims; ++d)
        e[d] = a.shape[dims - 1 - d];
    Image im = create(a.context, f, e[0], e[1], e[2]);
    im.copy_array(a, im.whole(), true);
    return im;
}

unsigned Image::dims() const {
    return need(impl_, "dims").dims;
}
std::size_t Image::width() const {
    return need(impl_, "width").extent[0];
}
std::size_t Image::height() const {
    return need(impl_, "height").extent[1];
}
std::size_t Image::depth() const {
    return need(impl_, "depth").extent[2];
}
const ImageFormat& Image::format() const {
    return need(impl_, "format").format;
}
const Context& Image::context() const {
    return owner(need(impl_, "context"));
}

ImageRegion Image::whole() const {
    const auto& im = need(impl_, "whole");
    return {{0, 0, 0}, im.extent};
}

void Image::write(const void* texels, const ImageRegion& region) const {
    const auto& im = need_own(impl_, "Image::write");
    check_region(im, region, "Image::write");
    if (!texels) bad(im.context->device().backend(), "Image::write: null host pointer");
    if (region.texels() == 0) return;
    queue_of(im)->write_image(*impl_, region, texels);
}

void Image::read(void* texels, const ImageRegion& region) const {
    const auto& im = need_own(impl_, "Image::read");
    check_region(im, region, "Image::read");
    if (!texels) bad(im.context->device().backend(), "Image::read: null host pointer");
    if (region.texels() == 0) return;
    queue_of(im)->read_image(*impl_, region, texels);
}

namespace {
void check_buffer(const detail::ImageImpl& im, const Buffer& b, std::size_t offset, const ImageRegion& r,
                  const char* what) {
    const std::string& be = im.context->device().backend();
    if (!b) bad(be, fmt::format("{}: empty Buffer", what));
    if (b.impl()->context != im.context) bad(be, fmt::format("{}: the buffer belongs to another context", what));
    const std::size_t bytes = r.texels() * im.format.texel_bytes();
    if (offset > b.size() || bytes > b.size() - offset)
        bad(be,
            fmt::format("{}: {} bytes from offset {} are past the buffer's {} bytes", what, bytes, offset, b.size()));
}
} // namespace

void Image::copy_from(const Buffer& src, std::size_t offset, const ImageRegion& region) const {
    const auto& im = need_own(impl_, "Image::copy_from");
    check_region(im, region, "Image::copy_from");
    check_buffer(im, src, offset, region, "Image::copy_from");
    if (region.texels() == 0) return;
    auto q = queue_of(im);
    detail::record_use(*src.impl(), q);
    q->copy_buffer_to_image(*src.impl(), offset, *impl_, region);
}

void Image::copy_to(const Buffer& dst, std::size_t offset, const ImageRegion& region) const {
    const auto& im = need_own(impl_, "Image::copy_to");
    check_region(im, region, "Image::copy_to");
    check_buffer(im, dst, offset, region, "Image::copy_to");
    if (region.texels() == 0) return;
    auto q = queue_of(im);
    detail::record_use(*dst.impl(), q);
    q->copy_image_to_buffer(*impl_, region, *dst.impl(), offset);
}

void Image::copy_array(const detail::ArrayDesc& a, const ImageRegion& region, bool to_image) const {
    const auto& im = need_own(impl_, to_image ? "Image::copy_from" : "Image::copy_to");
    const char* what = to_image ? "Image::copy_from(Array)" : "Image::copy_to(Array)";
    const std::string& be = im.context->device().backend();
    if (!a.buffer) bad(be, fmt::format("{}: empty Array", what));
    if (!a.is_c_contiguous()) bad(be, fmt::format("{}: the array is not C-contiguous", what));
    if (a.dtype != channel_dtype(im.format.type))
        bad(be, fmt::format("{}: an array of {} for an image of {} (elements of {} needed)", what, name(a.dtype),
                            im.format.str(), name(channel_dtype(im.format.type))));
    check_region(im, region, what);
    if (a.size() != region.texels() * im.format.channels)
        bad(be, fmt::format("{}: the array has {} elements, the region {} texels of {} channel{}", what, a.size(),
                            region.texels(), im.format.channels, im.format.channels == 1 ? "" : "s"));
    const std::size_t offset = std::size_t(a.offset) * info(a.dtype).size;
    if (to_image)
        copy_from(a.buffer, offset, region);
    else
        copy_to(a.buffer, offset, region);
}

SampledImage Image::sampled(const Sampler& sampler) const {
    const auto& im = need(impl_, "sampled");
    if (sampler.filter() == Filter::linear && !im.format.reads_float())
        bad(im.context->device().backend(),
            fmt::format("Image::sampled: linear filtering of an image of {} (integers): both backends filter only "
                        "float, half and normalised formats",
                        im.format.str()));
    return {impl_, sampler};
}

WritableImage Image::writable() const {
    const auto& im = need_own(impl_, "Image::writable");
    const auto& dev = im.context->device().info();
    if (im.dims != 2)
        bad(dev.backend, fmt::format("Image::writable: kernels write 2-D images only (this one is {}-D): 3-D writes "
                                     "need an OpenCL extension not every device has",
                                     im.dims));
    if (im.extent[0] > dev.images.max_width_writable_2d || im.extent[1] > dev.images.max_height_writable_2d)
        bad(dev.backend,
            fmt::format("Image::writable: {}x{} is past the device's writable-image limit of {}x{}", im.extent[0],
                        im.extent[1], dev.images.max_width_writable_2d, dev.images.max_height_writable_2d));
    if (!im.context->image_format_supported(im.format, 2, true))
        bad(dev.backend,
            fmt::format("Image::writable: {} cannot write images of format {}", dev.name, im.format.str()));
    return {impl_};
}

namespace detail {
// The checks of Image::sampled and Image::writable again, for arguments made without them.
unsigned image_dims(const ImageImpl& image) {
    return image.dims;
}
bool image_on(const ImageImpl& image, const Context& ctx) {
    return image.context == ctx.impl();
}

KernelArg make_arg(const SampledImage& s) {
    if (s.image) Image(s.image).sampled(s.sampler);
    KernelArg a{KernelArg::Kind::sampled_image, s.sampler.key()};
    a.image = s.image.get();
    return a;
}
KernelArg make_arg(const WritableImage& w) {
    if (w.image) Image(w.image).writable();
    KernelArg a{KernelArg::Kind::writable_image, 0};
    a.image = w.image.get();
    return a;
}
} // namespace detail

} // namespace xgpu
