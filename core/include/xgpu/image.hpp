// xgpu images and samplers (PyOpenCL's Image, Sampler and image_from_array; PyCUDA's arrays bound
// to textures): 1-, 2- and 3-D images of 1, 2 or 4 channels on a context, read in kernels through
// the hardware's sampling units (CUDA texture objects over CUDA arrays, OpenCL images and samplers).
//
//   xgpu::Image img = xgpu::Image::from_host(ctx, {xgpu::ChannelType::float32, 1}, data.data(), w, h);
//   xgpu::Sampler linear(true, xgpu::Filter::linear, xgpu::Addressing::repeat);
//   kernel.launch(q, grid, img.sampled(linear), out);          // XGPU_IMAGE2D_PARAM(src) in the kernel
//
// An image travels to a kernel as a *sampled image* (image + sampler: XGPU_IMAGE{1,2,3}D_PARAM and
// XGPU_SAMPLE*/XGPU_FETCH* in the dialect) or as a *writable image* (2-D only:
// XGPU_WIMAGE2D_PARAM and XGPU_WRITE2D_*). CUDA bakes the sampler into a texture object, one per
// (image, sampler) pair, made at first use and kept with the image; OpenCL passes the image and a
// sampler object as two kernel parameters, which the parameter macro declares together.
//
// Transfers run on the context's current queue (Context::current_queue, QueueScope) and block.
// Host data is packed: texels in x, then y, then z, no row padding.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "xgpu/array.hpp"
#include "xgpu/context.hpp"
#include "xgpu/image_format.hpp"
#include "xgpu/kernel.hpp"

namespace xgpu {

namespace detail {
class ImageImpl;
// An image argument's dimensions and whether it lives on `ctx`, for the checks of kernels that
// take images (core/src/image.cpp).
unsigned image_dims(const ImageImpl& image);
bool image_on(const ImageImpl& image, const Context& ctx);
} // namespace detail

class Image;
// Kernel arguments (see kernel.hpp's make_arg): an image with the sampler it is read through, or
// an image that the kernel writes (2-D).
struct SampledImage {
    std::shared_ptr<detail::ImageImpl> image;
    Sampler sampler;
};
struct WritableImage {
    std::shared_ptr<detail::ImageImpl> image;
};

class Image {
public:
    Image() = default;
    explicit Image(std::shared_ptr<detail::ImageImpl> impl) : impl_(std::move(impl)) {}

    // An image of `width` (1-D), `width` x `height` (2-D, height > 0) or `width` x `height` x
    // `depth` (3-D, depth > 0) texels; contents undefined. Throws InvalidArgument naming the
    // problem for a format the device lacks or sizes past its limits (DeviceInfo::images).
    static Image create(const Context& ctx, ImageFormat format, std::size_t width, std::size_t height = 0,
                        std::size_t depth = 0);
    // A 2-D image over the memory of `buffer` (of `ctx`) without a copy: `width` x `height` texels from byte
    // `offset`, rows `row_pitch` bytes apart. Kernels read it (Image::sampled) and see the buffer's
    // current contents; it cannot be written or copied as an image (use the buffer). CUDA only
    // (a pitched-linear texture; offset and pitch aligned as DeviceInfo::images says): OpenCL 1.2
    // has no 2-D image over a buffer, and xgpu refuses the call there with a message.
    static Image view(const Context& ctx, const Buffer& buffer, std::size_t offset, ImageFormat format,
                      std::size_t width, std::size_t height, std::size_t row_pitch);
    // Whether `ctx`'s device takes images of `format` in `dims` dimensions (that kernels write,
    // where `writable`).
    static bool supported(const Context& ctx, ImageFormat format, unsigned dims, bool writable = false);
    // An image filled from packed host texels.
    static Image from_host(const Context& ctx, ImageFormat format, const void* texels, std::size_t width,
                           std::size_t height = 0, std::size_t depth = 0);
    // PyOpenCL's image_from_array: an image with the shape of a C-contiguous array, copied on the
    // device: (w), (h, w), (d, h, w), with one more, last axis of `channels` entries where
    // channels > 1. The element type gives the channel type (uint16_t for float16 with `half`).
    template <Element T>
    static Image from_array(const Array<T>& a, unsigned channels = 1, bool normalized = false, bool half = false) {
        return from_array_desc(a.desc(), channels, normalized, half);
    }

    unsigned dims() const;
    std::size_t width() const;
    std::size_t height() const; // 1 for 1-D images
    std::size_t depth() const;  // 1 for 1-D and 2-D images
    const ImageFormat& format() const;
    ImageRegion whole() const;
    std::size_t bytes() const { return whole().texels() * format().texel_bytes(); }
    const Context& context() const;

    // Host transfers of a region (the whole image by default), blocking.
    void write(const void* texels) const { write(texels, whole()); }
    void write(const void* texels, const ImageRegion& region) const;
    void read(void* texels) const { read(texels, whole()); }
    void read(void* texels, const ImageRegion& region) const;
    // Device copies between a region and packed texels in a buffer from byte `offset`.
    void copy_from(const Buffer& src, std::size_t offset, const ImageRegion& region) const;
    void copy_to(const Buffer& dst, std::size_t offset, const ImageRegion& region) const;
    // The same with a C-contiguous array whose elements are the region's channels in order.
    template <Element T> void copy_from(const Array<T>& a, const ImageRegion& region) const {
        copy_array(a.desc(), region, true);
    }
    template <Element T> void copy_from(const Array<T>& a) const { copy_array(a.desc(), whole(), true); }
    template <Element T> void copy_to(const Array<T>& a, const ImageRegion& region) const {
        copy_array(a.desc(), region, false);
    }
    template <Element T> void copy_to(const Array<T>& a) const { copy_array(a.desc(), whole(), false); }

    // Kernel arguments.
    SampledImage sampled(const Sampler& sampler) const;
    WritableImage writable() const;

    explicit operator bool() const { return impl_ != nullptr; }
    const std::shared_ptr<detail::ImageImpl>& impl() const { return impl_; }

private:
    static Image from_array_desc(const detail::ArrayDesc& a, unsigned channels, bool normalized, bool half);
    void copy_array(const detail::ArrayDesc& a, const ImageRegion& region, bool to_image) const;
    std::shared_ptr<detail::ImageImpl> impl_;
};

} // namespace xgpu
