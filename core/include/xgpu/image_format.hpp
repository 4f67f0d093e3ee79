// xgpu image formats, regions and samplers: the plain values xgpu/image.hpp's Image and the
// backends share.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace xgpu {

// A channel's type. float16 images hold IEEE half floats (uint16_t bits on the host); kernels read
// them as float.
enum class ChannelType : std::uint8_t { uint8, int8, uint16, int16, uint32, int32, float16, float32 };
const char* name(ChannelType t) noexcept;
std::size_t channel_size(ChannelType t) noexcept; // bytes

// The texel format: channel type and count (1, 2 or 4), and for 8- and 16-bit integer channels
// whether kernels read them as normalised floats (unsigned to [0, 1], signed to [-1, 1]; CUDA's
// cudaReadModeNormalizedFloat, OpenCL's CL_UNORM_/CL_SNORM_ types) rather than as integers.
struct ImageFormat {
    ChannelType type = ChannelType::float32;
    unsigned channels = 1;
    bool normalized = false;

    std::size_t texel_bytes() const { return channel_size(type) * channels; }
    // Whether kernels read it with the float macros (XGPU_*_F): float, half and normalised formats.
    bool reads_float() const { return type == ChannelType::float16 || type == ChannelType::float32 || normalized; }
    bool is_signed_int() const;
    // "uint8x4", "int16x1 normalized", "float32x2".
    std::string str() const;
    friend bool operator==(const ImageFormat&, const ImageFormat&) = default;
};

// A box of texels: origin and size per dimension (x, y, z). Dimensions the image lacks have
// origin 0 and size 1.
struct ImageRegion {
    std::array<std::size_t, 3> origin{0, 0, 0};
    std::array<std::size_t, 3> size{1, 1, 1};
    std::size_t texels() const { return size[0] * size[1] * size[2]; }
};

enum class Filter : std::uint8_t { nearest, linear };
enum class Addressing : std::uint8_t { clamp_to_edge, clamp_to_border, repeat, mirrored_repeat };
const char* name(Filter f) noexcept;
const char* name(Addressing a) noexcept;

// How a kernel's coordinates become a texel value: normalised ([0, 1) over the image) or
// unnormalised (texel units) coordinates, nearest or linear filtering, and what lies past the
// edges. Texel i's centre is at i + 0.5 (unnormalised) on both backends. Border texels are 0 in
// every channel the format has (and 1 in alpha for formats of 1 or 2 channels). Both backends
// define repeat and mirrored repeat only for normalised coordinates: other combinations are
// refused here.
class Sampler {
public:
    Sampler() = default;
    Sampler(bool normalized_coords, Filter filter, Addressing addressing);

    bool normalized_coords() const { return normalized_; }
    Filter filter() const { return filter_; }
    Addressing addressing() const { return addressing_; }
    // A small number naming this sampler (a cache key for the backends), and back.
    unsigned key() const { return unsigned(normalized_) | unsigned(filter_) << 1 | unsigned(addressing_) << 2; }
    static Sampler from_key(unsigned key) {
        Sampler s;
        s.normalized_ = key & 1;
        s.filter_ = Filter((key >> 1) & 1);
        s.addressing_ = Addressing((key >> 2) & 3);
        return s;
    }
    std::string str() const;
    friend bool operator==(const Sampler&, const Sampler&) = default;

private:
    bool normalized_ = false;
    Filter filter_ = Filter::nearest;
    Addressing addressing_ = Addressing::clamp_to_edge;
};

} // namespace xgpu
