// ElementwiseKernel: parses the argument declarations, wraps the operation in a kernel that binds
// each array argument at its offset, and checks every argument before launching.
#include "xgpu/elementwise.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "../codegen/elementwise.hpp"
#include "../codegen/skeleton.hpp"
#include "xgpu/detail/dynamic.hpp"
#include "xgpu/image.hpp"

namespace xgpu {
namespace detail {
namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\n");
    const auto e = s.find_last_not_of(" \t\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The dtype a declared type names. Every name maps to the same width in both dialects (OpenCL's
// long is 64 bits, as is CUDA's on the 64-bit hosts NVRTC targets).
std::optional<DType> dtype_named(const std::string& t) {
    static const std::pair<const char*, DType> names[] = {{"float", DType::float32},
                                                          {"double", DType::float64},
                                                          {"int8_t", DType::int8},
                                                          {"char", DType::int8},
                                                          {"signed char", DType::int8},
                                                          {"int16_t", DType::int16},
                                                          {"short", DType::int16},
                                                          {"int32_t", DType::int32},
                                                          {"int", DType::int32},
                                                          {"int64_t", DType::int64},
                                                          {"long", DType::int64},
                                                          {"uint8_t", DType::uint8},
                                                          {"uchar", DType::uint8},
                                                          {"unsigned char", DType::uint8},
                                                          {"uint16_t", DType::uint16},
                                                          {"ushort", DType::uint16},
                                                          {"unsigned short", DType::uint16},
                                                          {"uint32_t", DType::uint32},
                                                          {"uint", DType::uint32},
                                                          {"unsigned int", DType::uint32},
                                                          {"unsigned", DType::uint32},
                                                          {"uint64_t", DType::uint64},
                                                          {"ulong", DType::uint64},
                                                          {"unsigned long", DType::uint64},
                                                          {"xgpu_cfloat", DType::complex64},
                                                          {"xgpu_cdouble", DType::complex128}};
    for (const auto& [n, d] : names)
        if (t == n) return d;
    return std::nullopt;
}

std::string known_type_names() {
    return "float, double, int8_t..int64_t, uint8_t..uint64_t, char, short, int, long, uchar, ushort, uint, ulong, "
           "unsigned char/short/int/long, xgpu_cfloat, xgpu_cdouble; images: image1d, image2d, image3d, wimage2d";
}

template <class Param> std::vector<Param> parse(const std::string& arguments) {
    std::vector<Param> out;
    std::size_t start = 0;
    while (start <= arguments.size()) {
        std::size_t end = arguments.find(',', start);
        if (end == std::string::npos) end = arguments.size();
        const std::string decl = trim(arguments.substr(start, end - start));
        start = end + 1;
        if (decl.empty()) continue;
        Param p;
        p.declaration = decl;
        std::size_t e = decl.size();
        while (e > 0 && (std::isalnum(static_cast<unsigned char>(decl[e - 1])) || decl[e - 1] == '_'))
            --e;
        p.name = decl.substr(e);
        if (p.name.empty() || e == 0)
            throw InvalidArgument(fmt::format("xgpu: ElementwiseKernel: cannot read the argument '{}'", decl));
        std::string type = trim(decl.substr(0, e));
        p.pointer = type.find('*') != std::string::npos;
        // The element (or scalar) type: what is left without qualifiers, address spaces and '*'.
        std::string base;
        std::size_t i = 0;
        while (i < type.size()) {
            while (i < type.size() && !(std::isalnum(static_cast<unsigned char>(type[i])) || type[i] == '_'))
                ++i;
            std::size_t j = i;
            while (j < type.size() && (std::isalnum(static_cast<unsigned char>(type[j])) || type[j] == '_'))
                ++j;
            const std::string word = type.substr(i, j - i);
            i = j;
            if (word.empty() || word == "const" || word == "volatile" || word == "XGPU_GLOBAL" ||
                word == "XGPU_RESTRICT" || word == "__global" || word == "restrict" || word == "__restrict__")
                continue;
            base += (base.empty() ? "" : " ") + word;
        }
        p.type = base;
        // Images: "image1d src" ... "image3d src" (sampled), "wimage2d dst" (written).
        if (!p.pointer && (base == "image1d" || base == "image2d" || base == "image3d" || base == "wimage2d")) {
            p.writable = base[0] == 'w';
            p.image = unsigned(base[base.size() - 2] - '0');
            p.dtype = DType::uint8; // unused
            out.push_back(p);
            continue;
        }
        // An argument whose type cannot be checked against what is passed is refused: a wrong
        // element size would let the kernel write past the array's end.
        const auto d = dtype_named(base);
        if (!d)
            throw InvalidArgument(fmt::format("xgpu: kernel argument '{}': the type '{}' is not one xgpu can check "
                                              "(size_t, vector and user types are not accepted); use one of {}",
                                              decl, base, known_type_names()));
        p.dtype = *d;
        out.push_back(p);
    }
    return out;
}

} // namespace

UserArguments::UserArguments(const std::string& declarations, const std::string& kernel_name,
                             const std::vector<std::string>& reserved)
    : params_(parse<Param>(declarations)), kernel_(kernel_name) {
    for (const auto& p : params_) {
        const bool taken = p.name == "i" || p.name.starts_with("xgpu_") || p.name.starts_with("XGPU_") ||
                           std::find(reserved.begin(), reserved.end(), p.name) != reserved.end();
        if (taken)
            throw InvalidArgument(fmt::format("xgpu: kernel '{}': the argument name '{}' is taken by the kernel "
                                              "around the operation (reserved: i, xgpu_..., XGPU_...{}{}); rename "
                                              "the argument",
                                              kernel_, p.name, reserved.size() ? ", " : "", fmt::join(reserved, ", ")));
    }
}

std::vector<DeclaredArgument> declared_arguments(const std::string& declarations) {
    struct Param {
        std::string declaration, name, type;
        bool pointer = false;
        DType dtype{};
        unsigned image = 0;
        bool writable = false;
    };
    std::vector<DeclaredArgument> out;
    for (const auto& p : parse<Param>(declarations))
        out.push_back({p.name, p.pointer, p.image ? std::nullopt : std::optional<DType>(p.dtype)});
    return out;
}

namespace {
std::string array_decl(const std::string& declaration, const std::string& name) {
    std::string decl = declaration.substr(0, declaration.size() - name.size());
    if (decl.find("XGPU_GLOBAL") == std::string::npos && decl.find("__global") == std::string::npos)
        decl = "XGPU_GLOBAL " + decl;
    return decl;
}
} // namespace

std::string UserArguments::params() const {
    std::string out;
    for (const auto& p : params_)
        out += p.image     ? fmt::format("XGPU_{}IMAGE{}D_PARAM({}), ", p.writable ? "W" : "", p.image, p.name)
               : p.pointer ? fmt::format("{} xgpu_base_{}, const int64_t xgpu_off_{}, ",
                                         array_decl(p.declaration, p.name), p.name, p.name)
                           : p.declaration + ", ";
    return out;
}

std::string UserArguments::rebind() const {
    std::string out;
    for (const auto& p : params_)
        if (p.pointer)
            out += fmt::format("    {} {} = xgpu_base_{} + xgpu_off_{};\n", array_decl(p.declaration, p.name), p.name,
                               p.name, p.name);
    return out;
}

std::int64_t UserArguments::pack(const Context& ctx, const std::vector<BoundArg>& args,
                                 std::vector<KernelArg>& out) const {
    if (args.size() != params_.size())
        throw InvalidArgument(
            fmt::format("xgpu: kernel '{}' takes {} arguments, {} given", kernel_, params_.size(), args.size()));
    std::int64_t size = -1;
    for (std::size_t k = 0; k < args.size(); ++k) {
        const auto& p = params_[k];
        const auto& a = args[k];
        using K = KernelArg::Kind;
        const bool is_image = !a.array && (a.scalar.kind == K::sampled_image || a.scalar.kind == K::writable_image);
        if (p.image || is_image) {
            const char* want = p.writable ? "a writable image (Image::writable())" : "a sampled image (Image::sampled)";
            if (!p.image || !is_image || p.writable != (a.scalar.kind == K::writable_image))
                throw InvalidArgument(fmt::format("xgpu: kernel '{}': argument {} ('{}') must be {}", kernel_, k,
                                                  p.declaration,
                                                  p.image     ? want
                                                  : p.pointer ? "an Array"
                                                              : "a scalar"));
            if (!a.scalar.image)
                throw InvalidArgument(
                    fmt::format("xgpu: kernel '{}': argument '{}' is an empty Image", kernel_, p.name));
            if (image_dims(*a.scalar.image) != p.image)
                throw InvalidArgument(fmt::format("xgpu: kernel '{}': argument '{}' declares a {}-D image, but a {}-D "
                                                  "image was given",
                                                  kernel_, p.name, p.image, image_dims(*a.scalar.image)));
            if (!image_on(*a.scalar.image, ctx))
                throw InvalidArgument(
                    fmt::format("xgpu: kernel '{}': argument '{}' is an image of another context", kernel_, p.name));
            continue;
        }
        if (p.pointer != (a.array != nullptr))
            throw InvalidArgument(fmt::format("xgpu: kernel '{}': argument {} ('{}') must be {}", kernel_, k,
                                              p.declaration, p.pointer ? "an Array" : "a scalar"));
        if (p.dtype != a.dtype)
            throw InvalidArgument(fmt::format("xgpu: kernel '{}': argument {} ('{}') declares {}, but {} was given",
                                              kernel_, k, p.declaration, name(p.dtype), name(a.dtype)));
        if (a.array) {
            if (!a.array->buffer)
                throw InvalidArgument(
                    fmt::format("xgpu: kernel '{}': argument '{}' is an empty Array", kernel_, p.name));
            if (!(a.array->context == ctx))
                throw InvalidArgument(
                    fmt::format("xgpu: kernel '{}': argument '{}' is an array of another context", kernel_, p.name));
            if (!a.array->is_c_contiguous())
                throw InvalidArgument(fmt::format("xgpu: kernel '{}': argument '{}' is a non-contiguous view; "
                                                  "pass a contiguous array (e.g. .copy())",
                                                  kernel_, p.name));
            if (size < 0) size = std::int64_t(a.array->size());
        }
    }
    for (const auto& a : args) {
        if (a.array) {
            out.push_back(make_arg(a.array->buffer));
            out.push_back(make_arg(a.array->offset));
        } else {
            out.push_back(a.scalar);
        }
    }
    return size;
}

void UserArguments::note_indexing(const std::string& code) {
    const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    const auto skip_blanks = [&](std::size_t at) {
        while (at < code.size() && std::isspace(static_cast<unsigned char>(code[at])))
            ++at;
        return at;
    };
    for (auto& p : params_) {
        if (!p.pointer) continue;
        for (std::size_t at = code.find(p.name); at != std::string::npos && !p.indexed_by_i;
             at = code.find(p.name, at + 1)) {
            const std::size_t end = at + p.name.size();
            if ((at > 0 && word(code[at - 1])) || (end < code.size() && word(code[end]))) continue;
            std::size_t k = skip_blanks(end);
            if (k >= code.size() || code[k] != '[') continue;
            k = skip_blanks(k + 1);
            if (k >= code.size() || code[k] != 'i') continue;
            k = skip_blanks(k + 1);
            p.indexed_by_i = k < code.size() && code[k] == ']';
        }
    }
}

void UserArguments::check_reach(const std::vector<BoundArg>& args, std::uint64_t end) const {
    for (std::size_t k = 0; k < args.size() && k < params_.size(); ++k)
        if (params_[k].indexed_by_i && args[k].array && args[k].array->size() < end)
            throw InvalidArgument(fmt::format("xgpu: kernel '{}': argument '{}' holds {} elements, but the kernel runs "
                                              "indices up to {} and the operation reads or writes {}[i]",
                                              kernel_, params_[k].name, args[k].array->size(), end - 1,
                                              params_[k].name));
}

} // namespace detail

ElementwiseKernel::ElementwiseKernel(const Context& ctx, const std::string& arguments, const std::string& operation,
                                     const std::string& name, const std::string& preamble)
    : ctx_(ctx), name_(name), args_(arguments, name) {
    args_.note_indexing(operation);
    // The user's index `i` is start + k * step for the k-th index of the stream.
    shape_ = codegen::stream_shape(ctx, DType::uint8);
    source_ = codegen::stream_source({name, std::string(codegen::kernel_file("array.h")) + "\n" + preamble,
                                      args_.params() + "const int64_t xgpu_start, const int64_t xgpu_step, ", "xgpu_k",
                                      "        const int64_t i = xgpu_start + (int64_t)xgpu_k * xgpu_step;\n" +
                                          args_.rebind() + "        " + operation + ";\n"},
                                     shape_);
    kernel_ = ctx.compile(source_).kernel(name);
}

void ElementwiseKernel::launch(const Slice* range, const std::vector<detail::BoundArg>& args) const {
    std::vector<detail::KernelArg> kargs;
    const std::int64_t size = args_.pack(ctx_, args, kargs);
    // The range is resolved exactly as a slice of the first array argument (numpy's rules), so
    // every index i it yields is inside that array.
    SliceRange r{0, 1, size < 0 ? 0 : std::size_t(size)};
    if (range) {
        if (size < 0) {
            const bool bounded = range->start && range->stop && *range->start >= 0 && *range->stop >= 0;
            if (!bounded)
                throw InvalidArgument(fmt::format("xgpu: ElementwiseKernel '{}' has no array argument: its range needs "
                                                  "a start and a stop, both >= 0",
                                                  name_));
            r = resolve(*range, std::size_t(INT64_MAX));
        } else {
            r = resolve(*range, std::size_t(size));
        }
    } else if (size < 0) {
        throw InvalidArgument(fmt::format("xgpu: ElementwiseKernel '{}' has no array argument to size the launch; "
                                          "pass a range",
                                          name_));
    }
    const std::int64_t start = r.start, step = r.step;
    const std::uint64_t n = r.length;
    if (n) args_.check_reach(args, std::uint64_t(step > 0 ? start + std::int64_t(n - 1) * step : start) + 1);
    kargs.push_back(detail::make_arg(start));
    kargs.push_back(detail::make_arg(step));
    codegen::launch_stream(ctx_, kernel_, std::move(kargs), n, shape_);
}

} // namespace xgpu
