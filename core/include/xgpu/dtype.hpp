// xgpu element types: the types an Array may hold, their names in kernel code, and numpy's
// type-promotion rules (the table is in docs/arrays.md).
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace xgpu {

enum class DType : std::uint8_t {
    bool_,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float32,
    float64,
    complex64,
    complex128
};

enum class Kind : std::uint8_t { boolean, signed_int, unsigned_int, floating, complex };

struct DTypeInfo {
    const char* name;        // numpy's name: "int32", "float64", ...
    const char* device_name; // the type in kernel code (dialect): "int32_t", "double", "xgpu_cdouble"
    std::size_t size;
    Kind kind;
};

inline constexpr DTypeInfo dtype_table[] = {
    {"bool", "uint8_t", 1, Kind::boolean},
    {"int8", "int8_t", 1, Kind::signed_int},
    {"int16", "int16_t", 2, Kind::signed_int},
    {"int32", "int32_t", 4, Kind::signed_int},
    {"int64", "int64_t", 8, Kind::signed_int},
    {"uint8", "uint8_t", 1, Kind::unsigned_int},
    {"uint16", "uint16_t", 2, Kind::unsigned_int},
    {"uint32", "uint32_t", 4, Kind::unsigned_int},
    {"uint64", "uint64_t", 8, Kind::unsigned_int},
    {"float32", "float", 4, Kind::floating},
    {"float64", "double", 8, Kind::floating},
    {"complex64", "xgpu_cfloat", 8, Kind::complex},
    {"complex128", "xgpu_cdouble", 16, Kind::complex},
};

constexpr const DTypeInfo& info(DType t) {
    return dtype_table[static_cast<int>(t)];
}
constexpr const char* name(DType t) {
    return info(t).name;
}
constexpr Kind kind(DType t) {
    return info(t).kind;
}
constexpr bool is_integer(DType t) {
    return kind(t) == Kind::signed_int || kind(t) == Kind::unsigned_int;
}
constexpr bool is_inexact(DType t) {
    return kind(t) == Kind::floating || kind(t) == Kind::complex;
}

namespace detail {
constexpr DType int_type(bool is_signed, std::size_t bytes) {
    switch (bytes) {
    case 1: return is_signed ? DType::int8 : DType::uint8;
    case 2: return is_signed ? DType::int16 : DType::uint16;
    case 4: return is_signed ? DType::int32 : DType::uint32;
    default: return is_signed ? DType::int64 : DType::uint64;
    }
}
constexpr DType float_type_of_size(std::size_t bytes) {
    return bytes <= 4 ? DType::float32 : DType::float64;
}
constexpr DType complex_type_of_size(std::size_t real_bytes) {
    return real_bytes <= 4 ? DType::complex64 : DType::complex128;
}
// The real size that holds every value of integer type `t` (no float16 here: 4 for 1-2 bytes).
constexpr std::size_t float_size_for_int(DType t) {
    return info(t).size <= 2 ? 4 : 8;
}
constexpr std::size_t real_size(DType t) {
    return kind(t) == Kind::complex ? info(t).size / 2 : info(t).size;
}
constexpr int rank(Kind k) {
    return k == Kind::boolean                                   ? 0
           : (k == Kind::signed_int || k == Kind::unsigned_int) ? 1
           : k == Kind::floating                                ? 2
                                                                : 3;
}
} // namespace detail

// numpy.promote_types for two array operands.
constexpr DType promote(DType a, DType b) {
    using namespace detail;
    if (a == b) return a;
    if (rank(kind(a)) > rank(kind(b)) || (rank(kind(a)) == rank(kind(b)) && kind(a) == Kind::unsigned_int)) {
        const DType t = a;
        a = b;
        b = t;
    }
    // Now rank(a) <= rank(b); for two integers, a is the signed one if they differ.
    const Kind ka = kind(a), kb = kind(b);
    if (ka == Kind::boolean) return b;
    if (rank(ka) == 1 && rank(kb) == 1) {
        if (ka == kb) return info(a).size >= info(b).size ? a : b;
        // a signed, b unsigned
        if (info(a).size > info(b).size) return a;
        return info(b).size < 8 ? int_type(true, 2 * info(b).size) : DType::float64;
    }
    const std::size_t need = rank(ka) == 1 ? float_size_for_int(a) : real_size(a);
    const std::size_t have = real_size(b);
    const std::size_t bytes = need > have ? need : have;
    return kb == Kind::complex || ka == Kind::complex ? complex_type_of_size(bytes) : float_type_of_size(bytes);
}

// The result of combining an array of type `a` with a C++ scalar of kind `k` (numpy's rules for
// Python scalars, NEP 50): a scalar never widens the array's type within its kind.
constexpr DType promote_weak(DType a, Kind k) {
    using namespace detail;
    if (rank(k) <= rank(kind(a))) return (k == Kind::signed_int && kind(a) == Kind::boolean) ? DType::int64 : a;
    if (k == Kind::signed_int) return DType::int64;
    if (k == Kind::floating) return DType::float64;
    return kind(a) == Kind::floating ? complex_type_of_size(info(a).size) : DType::complex128;
}

// numpy.can_cast(from, to, "same_kind"): bool -> unsigned -> signed -> floating -> complex, any
// size within a kind. In-place operators store their result only where this holds.
constexpr bool can_cast_same_kind(DType from, DType to) {
    auto order = [](Kind k) {
        return k == Kind::boolean        ? 0
               : k == Kind::unsigned_int ? 1
               : k == Kind::signed_int   ? 2
               : k == Kind::floating     ? 3
                                         : 4;
    };
    return order(kind(from)) <= order(kind(to));
}

// The type of true division: integers and bool divide to float64.
constexpr DType true_divide_type(DType t) {
    return is_inexact(t) ? t : DType::float64;
}
// The type a math function (sin, exp, ...) returns for an argument of type `t`.
constexpr DType float_type(DType t) {
    return is_inexact(t) ? t
                         : detail::float_type_of_size(detail::float_size_for_int(t == DType::bool_ ? DType::int8 : t));
}
// The real type underlying `t` (complex64 -> float32), or `t` itself.
constexpr DType real_type(DType t) {
    return kind(t) == Kind::complex ? detail::float_type_of_size(info(t).size / 2) : t;
}

template <class T> struct dtype_of;
#define XGPU_DTYPE_OF(T, D)                                                                                            \
    template <> struct dtype_of<T> { static constexpr DType value = DType::D; };
XGPU_DTYPE_OF(bool, bool_)
XGPU_DTYPE_OF(std::int8_t, int8)
XGPU_DTYPE_OF(std::int16_t, int16)
XGPU_DTYPE_OF(std::int32_t, int32)
XGPU_DTYPE_OF(std::int64_t, int64)
XGPU_DTYPE_OF(std::uint8_t, uint8)
XGPU_DTYPE_OF(std::uint16_t, uint16)
XGPU_DTYPE_OF(std::uint32_t, uint32)
XGPU_DTYPE_OF(std::uint64_t, uint64)
XGPU_DTYPE_OF(float, float32)
XGPU_DTYPE_OF(double, float64)
XGPU_DTYPE_OF(std::complex<float>, complex64)
XGPU_DTYPE_OF(std::complex<double>, complex128)
#undef XGPU_DTYPE_OF
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

template <class T>
concept Element = requires {
    dtype_of<T>::value;
};

// The C++ type for a DType, as a compile-time map.
template <DType D> struct type_of;
template <> struct type_of<DType::bool_> { using type = bool; };
template <> struct type_of<DType::int8> { using type = std::int8_t; };
template <> struct type_of<DType::int16> { using type = std::int16_t; };
template <> struct type_of<DType::int32> { using type = std::int32_t; };
template <> struct type_of<DType::int64> { using type = std::int64_t; };
template <> struct type_of<DType::uint8> { using type = std::uint8_t; };
template <> struct type_of<DType::uint16> { using type = std::uint16_t; };
template <> struct type_of<DType::uint32> { using type = std::uint32_t; };
template <> struct type_of<DType::uint64> { using type = std::uint64_t; };
template <> struct type_of<DType::float32> { using type = float; };
template <> struct type_of<DType::float64> { using type = double; };
template <> struct type_of<DType::complex64> { using type = std::complex<float>; };
template <> struct type_of<DType::complex128> { using type = std::complex<double>; };
template <DType D> using type_of_t = typename type_of<D>::type;

// The kind of a C++ scalar: integers (not bool) are signed_int whatever their signedness, as
// Python ints are; floating types are floating; std::complex is complex.
template <class S> constexpr Kind scalar_kind() {
    if constexpr (std::is_same_v<S, bool>)
        return Kind::boolean;
    else if constexpr (std::is_integral_v<S>)
        return Kind::signed_int;
    else if constexpr (std::is_floating_point_v<S>)
        return Kind::floating;
    else
        return Kind::complex;
}

template <class S>
concept Scalar =
    std::is_arithmetic_v<S> || std::is_same_v<S, std::complex<float>> || std::is_same_v<S, std::complex<double>>;

// The promotion rules at compile time, so that expressions have static result types.
template <class A, class B> using promote_t = type_of_t<promote(dtype_v<A>, dtype_v<B>)>;

} // namespace xgpu
