// Images and samplers (PyOpenCL's Image, Sampler and image_from_array).
#include "common.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <xgpu/array.hpp>
#include <xgpu/image.hpp>

namespace xgpu::python {

namespace {

ChannelType channel_type(std::string_view t) {
    static constexpr std::pair<const char*, ChannelType> types[] = {
        {"uint8", ChannelType::uint8},     {"int8", ChannelType::int8},      {"uint16", ChannelType::uint16},
        {"int16", ChannelType::int16},     {"uint32", ChannelType::uint32},  {"int32", ChannelType::int32},
        {"float16", ChannelType::float16}, {"float32", ChannelType::float32}};
    for (const auto& [n, c] : types)
        if (t == n) return c;
    throw nb::type_error(("xgpu: no image channel type '" + std::string(t) +
                          "' (uint8, int8, uint16, int16, uint32, int32, float16, float32)")
                             .c_str());
}

Filter filter_of(std::string_view f) {
    if (f == "nearest") return Filter::nearest;
    if (f == "linear") return Filter::linear;
    throw nb::value_error(("xgpu: no filter mode '" + std::string(f) + "' (nearest, linear)").c_str());
}

Addressing addressing_of(std::string_view a) {
    if (a == "clamp_to_edge") return Addressing::clamp_to_edge;
    if (a == "clamp_to_border" || a == "clamp") return Addressing::clamp_to_border;
    if (a == "repeat") return Addressing::repeat;
    if (a == "mirrored_repeat") return Addressing::mirrored_repeat;
    throw nb::value_error(
        ("xgpu: no addressing mode '" + std::string(a) + "' (clamp_to_edge, clamp_to_border, repeat, mirrored_repeat)")
            .c_str());
}

using HostTexels = nb::ndarray<nb::device::cpu, nb::c_contig>;
using HostSource = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig>;

template <class H> void check_bytes(const Image& img, const H& h, const char* what) {
    if (h.nbytes() != img.bytes())
        throw nb::value_error((std::string("xgpu: ") + what + ": the host array has " + std::to_string(h.nbytes()) +
                               " bytes, the image " + std::to_string(img.bytes()))
                                  .c_str());
}

} // namespace

void bind_image(nb::module_& m) {
    nb::class_<ImageFormat>(m, "ImageFormat", "A texel's layout: channel type, 1, 2 or 4 channels, normalized or not.")
        .def(
            "__init__",
            [](ImageFormat* self, std::string_view type, unsigned channels, bool normalized) {
                new (self) ImageFormat{channel_type(type), channels, normalized};
            },
            nb::arg("channel_type"), nb::arg("channels") = 1, nb::arg("normalized") = false,
            "A format of `channels` channels of `channel_type` ('uint8', 'int8', 'uint16', 'int16', 'uint32', "
            "'int32', 'float16', 'float32'), read as floats in [0, 1] or [-1, 1] when `normalized`.")
        .def_prop_ro(
            "channel_type", [](const ImageFormat& f) { return std::string(name(f.type)); },
            "The channel type's name, e.g. 'float32'.")
        .def_ro("channels", &ImageFormat::channels, "Channels per texel: 1, 2 or 4.")
        .def_ro("normalized", &ImageFormat::normalized, "Whether integer channels read as normalized floats.")
        .def_prop_ro("texel_bytes", &ImageFormat::texel_bytes, "Bytes per texel.")
        .def("__repr__", [](const ImageFormat& f) { return "xgpu.ImageFormat(" + f.str() + ")"; });

    nb::class_<Sampler>(m, "Sampler",
                        "How a kernel reads an image: coordinates, addressing and filtering, as PyOpenCL's Sampler.")
        .def(
            "__init__",
            [](Sampler* self, bool normalized, std::string_view addressing, std::string_view filter) {
                new (self) Sampler(normalized, filter_of(filter), addressing_of(addressing));
            },
            nb::arg("normalized_coords") = false, nb::arg("addressing_mode") = "clamp_to_edge",
            nb::arg("filter_mode") = "nearest",
            "A sampler: coordinates in [0, 1) when `normalized_coords`, else in texels; `addressing_mode` "
            "'clamp_to_edge', 'clamp_to_border' ('clamp'), 'repeat' or 'mirrored_repeat'; `filter_mode` 'nearest' or "
            "'linear'.")
        .def_prop_ro("normalized_coords", &Sampler::normalized_coords, "Whether coordinates are normalized.")
        .def_prop_ro(
            "filter_mode", [](const Sampler& s) { return std::string(name(s.filter())); }, "'nearest' or 'linear'.")
        .def_prop_ro(
            "addressing_mode", [](const Sampler& s) { return std::string(name(s.addressing())); },
            "What a read outside the image gives.")
        .def("__repr__", [](const Sampler& s) { return "xgpu.Sampler(" + s.str() + ")"; });

    nb::class_<SampledImage>(m, "SampledImage", "An image with its sampler, as a kernel argument (Image.sampled).");
    nb::class_<WritableImage>(m, "WritableImage",
                              "A 2-D image a kernel writes, as a kernel argument (Image.writable).");

    nb::class_<Image>(m, "Image",
                      "A 1-, 2- or 3-D image on the device (create_image, image_from_array); see docs/images.md.")
        .def_static(
            "create",
            [](const Context& ctx, const ImageFormat& f, const std::vector<std::size_t>& shape) {
                if (shape.empty() || shape.size() > 3)
                    throw nb::value_error(
                        "xgpu: an image's shape is (width,), (width, height) or (width, height, depth)");
                return Image::create(ctx, f, shape[0], shape.size() > 1 ? shape[1] : 0,
                                     shape.size() > 2 ? shape[2] : 0);
            },
            nb::arg("context"), nb::arg("format"), nb::arg("shape"),
            "A new image of `format` and `shape` ((width,), (width, height) or (width, height, depth)).")
        .def_static(
            "from_array",
            [](const detail::ArrayDesc& a, unsigned channels, bool normalized) {
                switch (a.dtype) {
                case DType::uint8: return Image::from_array(Array<std::uint8_t>(a), channels, normalized);
                case DType::int8: return Image::from_array(Array<std::int8_t>(a), channels, normalized);
                case DType::uint16: return Image::from_array(Array<std::uint16_t>(a), channels, normalized);
                case DType::int16: return Image::from_array(Array<std::int16_t>(a), channels, normalized);
                case DType::uint32: return Image::from_array(Array<std::uint32_t>(a), channels, normalized);
                case DType::int32: return Image::from_array(Array<std::int32_t>(a), channels, normalized);
                case DType::float32: return Image::from_array(Array<float>(a), channels, normalized);
                default:
                    throw nb::type_error(("xgpu: no image channel type holds " + std::string(dtype_name(a.dtype)) +
                                          " (uint8, int8, uint16, int16, uint32, int32, float32)")
                                             .c_str());
                }
            },
            nb::arg("array"), nb::arg("channels"), nb::arg("normalized"),
            "An image with an array's values (image_from_array is the friendlier form).")
        .def_static("supported", &Image::supported, nb::arg("context"), nb::arg("format"), nb::arg("dims"),
                    nb::arg("writable") = false,
                    "Whether the device has images of `format` in `dims` dimensions (written by kernels, "
                    "if `writable`).")
        .def_prop_ro("dims", &Image::dims, "1, 2 or 3.")
        .def_prop_ro("width", &Image::width, "Texels along x.")
        .def_prop_ro("height", &Image::height, "Texels along y (1 for a 1-D image).")
        .def_prop_ro("depth", &Image::depth, "Texels along z (1 below 3-D).")
        .def_prop_ro("format", &Image::format, "The ImageFormat.")
        .def_prop_ro("context", &Image::context, "The Context the image lives on.")
        .def(
            "write",
            [](const Image& img, HostSource h) {
                check_bytes(img, h, "Image.write");
                nb::gil_scoped_release unlocked;
                img.write(h.data());
            },
            "Writes packed host texels of the channel type (Image.set converts first).")
        .def(
            "read",
            [](const Image& img, HostTexels h) {
                check_bytes(img, h, "Image.read");
                nb::gil_scoped_release unlocked;
                img.read(h.data());
            },
            "Reads the texels into a packed host array of the channel type (Image.get allocates it).")
        .def("sampled", &Image::sampled, nb::arg("sampler"), "The image read through `sampler`, as a kernel argument.")
        .def("writable", &Image::writable, "The 2-D image as a kernel argument to write.");
}

} // namespace xgpu::python
