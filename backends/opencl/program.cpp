// The OpenCL backend: programs and kernel lookup.
#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "opencl.hpp"

namespace xgpu::opencl {

namespace {
// The bytes of an OpenCL C built-in scalar or vector type (the dialect's fixed-width names
// included), or 0 for any other.
std::size_t builtin_size(std::string t) {
    static const std::pair<const char*, std::size_t> scalars[] = {
        {"char", 1},    {"uchar", 1},    {"int8_t", 1}, {"uint8_t", 1}, {"short", 2},   {"ushort", 2},  {"half", 2},
        {"int16_t", 2}, {"uint16_t", 2}, {"int", 4},    {"uint", 4},    {"float", 4},   {"int32_t", 4}, {"uint32_t", 4},
        {"long", 8},    {"ulong", 8},    {"double", 8}, {"int64_t", 8}, {"uint64_t", 8}};
    std::size_t lanes = 1;
    const auto digits = t.find_first_of("0123456789");
    if (digits != std::string::npos && digits > 0 && t.find("_t") == std::string::npos) {
        lanes = std::size_t(std::atoi(t.c_str() + digits));
        if (lanes == 3) lanes = 4; // a 3-vector takes the room of a 4-vector
        t.resize(digits);
    }
    for (const auto& [n, size] : scalars)
        if (t == n) return size * lanes;
    return 0;
}
} // namespace

Kernel::Kernel(std::string name, cl::Kernel k, const cl::Device& device)
    : KernelImpl(std::move(name)), kernel(std::move(k)) {
    std::size_t group = 0;
    if (kernel.getWorkGroupInfo(device, CL_KERNEL_WORK_GROUP_SIZE, &group) == CL_SUCCESS) max_group = group;
    cl_uint n = 0;
    if (kernel.getInfo(CL_KERNEL_NUM_ARGS, &n) != CL_SUCCESS) return;
    args = int(n);
    std::vector<Param> info(n);
    for (cl_uint i = 0; i < n; ++i) {
        cl_kernel_arg_address_qualifier q = 0;
        std::string type;
        // Not available for programs built without -cl-kernel-arg-info (older cache entries):
        // then only the count is checked.
        if (kernel.getArgInfo(i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, &q) != CL_SUCCESS ||
            kernel.getArgInfo(i, CL_KERNEL_ARG_TYPE_NAME, &type) != CL_SUCCESS)
            return;
        while (!type.empty() && type.back() == '\0')
            type.pop_back();
        Param& p = info[i];
        p.type = type;
        // image1d_t, image2d_t, image3d_t (global by the spec; a driver may keep a qualifier in the name)
        if (const auto at = type.find("image"); at != std::string::npos && type.find("_t", at) != std::string::npos) {
            p.kind = Param::Kind::image;
            p.dims =
                at + 5 < type.size() && type[at + 5] >= '1' && type[at + 5] <= '3' ? unsigned(type[at + 5] - '0') : 0;
            cl_kernel_arg_access_qualifier access = 0;
            kernel.getArgInfo(i, CL_KERNEL_ARG_ACCESS_QUALIFIER, &access);
            p.write_only = access == CL_KERNEL_ARG_ACCESS_WRITE_ONLY;
            continue;
        }
        if (type.find("sampler_t") != std::string::npos) {
            p.kind = Param::Kind::sampler;
            continue;
        }
        switch (q) {
        case CL_KERNEL_ARG_ADDRESS_GLOBAL:
        case CL_KERNEL_ARG_ADDRESS_CONSTANT: p.kind = Param::Kind::buffer; break;
        case CL_KERNEL_ARG_ADDRESS_LOCAL: p.kind = Param::Kind::local; break;
        default:
            p.kind = type.find('*') == std::string::npos ? Param::Kind::scalar : Param::Kind::unknown;
            p.size = builtin_size(type);
        }
    }
    params = std::move(info);
}

namespace {
using K = detail::KernelArg::Kind;
using P = Kernel::Param::Kind;

// What an argument needs its parameter to be, or "" where it fits (unknown parameters fit all).
std::string misfit(const Kernel::Param& p, const detail::KernelArg& a, const Kernel::Param* next) {
    if (p.kind == P::unknown) return {};
    switch (a.kind) {
    case K::sampled_image:
        if (p.kind != P::image || p.write_only) break;
        if (p.dims && p.dims != a.image->dims)
            return fmt::format("a {}-D image parameter, but the image is {}-D", p.dims, a.image->dims);
        if (next && next->kind != P::sampler && next->kind != P::unknown)
            return "a sampler parameter after the image (declare it with XGPU_IMAGE*D_PARAM)";
        return {};
    case K::writable_image:
        if (p.kind != P::image || !p.write_only) break;
        if (p.dims && p.dims != a.image->dims)
            return fmt::format("a {}-D image parameter, but the image is {}-D", p.dims, a.image->dims);
        return {};
    case K::buffer:
        if (p.kind == P::buffer) return {};
        break;
    case K::local:
        if (p.kind == P::local) return {};
        break;
    case K::scalar:
        if (p.kind == P::scalar && (!p.size || p.size == a.size)) return {};
        if (p.kind == P::scalar) return fmt::format("a scalar of {} bytes", p.size);
        break;
    }
    switch (p.kind) {
    case P::buffer: return "a buffer (a global pointer)";
    case P::local: return "local memory (xgpu::Local)";
    case P::scalar: return "a scalar";
    case P::image:
        return p.write_only ? fmt::format("a writable {}-D image (Image::writable)", p.dims)
                            : fmt::format("a sampled {}-D image (Image::sampled)", p.dims);
    case P::sampler: return "a sampler (declared by XGPU_IMAGE*D_PARAM after its image)";
    default: return {};
    }
}

const char* describe(const detail::KernelArg& a) {
    switch (a.kind) {
    case K::buffer: return "a buffer";
    case K::local: return "local memory";
    case K::sampled_image: return "a sampled image";
    case K::writable_image: return "a writable image";
    default: return "a scalar";
    }
}
} // namespace

void Kernel::check_args(std::span<const detail::KernelArg> given) const {
    // Every launch: a plain comparison per argument; the message is built only for a misfit.
    std::size_t p = 0;
    for (std::size_t i = 0; i < given.size() && p < params.size(); ++i) {
        const auto& a = given[i];
        const Param* next = p + 1 < params.size() ? &params[p + 1] : nullptr;
        const Param& param = params[p];
        p += a.kind == K::sampled_image ? 2 : 1;
        // The fast path: the kinds agree and nothing more is to be checked.
        if ((a.kind == K::buffer && param.kind == P::buffer) || (a.kind == K::local && param.kind == P::local) ||
            (a.kind == K::scalar && param.kind == P::scalar && (!param.size || param.size == a.size)))
            continue;
        const std::string want = misfit(param, a, next);
        if (!want.empty())
            throw DTypeError(fmt::format("xgpu[opencl]: launch of '{}': argument {} is {}{}, but the kernel's "
                                         "parameter {} ('{}') needs {}",
                                         name, i, describe(a),
                                         a.kind == K::sampled_image || a.kind == K::writable_image
                                             ? ""
                                             : fmt::format(" of {} bytes", a.size),
                                         p - (a.kind == K::sampled_image ? 2 : 1), param.type, want),
                             {"opencl", "launch", 0, ""});
    }
}

std::shared_ptr<detail::KernelImpl> Program::create_kernel(const std::string& name) {
    cl_int err = CL_SUCCESS;
    cl::Kernel k(program, name.c_str(), &err);
    if (err == CL_INVALID_KERNEL_NAME) return nullptr;
    check(err, "clCreateKernel", name);
    // A program is built for its context's one device.
    std::vector<cl::Device> devices;
    check(program.getInfo(CL_PROGRAM_DEVICES, &devices), "clGetProgramInfo", "CL_PROGRAM_DEVICES");
    if (devices.empty())
        throw BackendError(fmt::format("xgpu: the program holding kernel '{}' has no device", name),
                           {"opencl", "clGetProgramInfo", 0, ""});
    return std::make_shared<Kernel>(name, std::move(k), devices.front());
}

std::vector<std::string> Program::kernel_names() {
    std::string all;
    program.getInfo(CL_PROGRAM_KERNEL_NAMES, &all);
    std::vector<std::string> names;
    std::size_t start = 0;
    while (start < all.size()) {
        std::size_t end = all.find(';', start);
        if (end == std::string::npos) end = all.size();
        std::string n = all.substr(start, end - start);
        while (!n.empty() && n.back() == '\0')
            n.pop_back();
        if (!n.empty()) names.push_back(n);
        start = end + 1;
    }
    return names;
}

} // namespace xgpu::opencl
