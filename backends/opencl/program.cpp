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

Kernel::Kernel(std::string name, cl::Kernel k) : KernelImpl(std::move(name)), kernel(std::move(k)) {
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
// Whether an argument fits its parameter (what check_args reports on, without the message).
bool fits(const Kernel::Param& p, const detail::KernelArg& a) {
    using K = detail::KernelArg::Kind;
    switch (p.kind) {
    case Kernel::Param::Kind::buffer: return a.kind == K::buffer;
    case Kernel::Param::Kind::local: return a.kind == K::local;
    case Kernel::Param::Kind::scalar: return a.kind == K::scalar && (!p.size || p.size == a.size);
    default: return true;
    }
}
} // namespace

void Kernel::check_args(std::span<const detail::KernelArg> given) const {
    // Every launch: a plain comparison per argument; the message is built only for a misfit.
    const std::size_t n = std::min(given.size(), params.size());
    std::size_t first_bad = 0;
    while (first_bad < n && fits(params[first_bad], given[first_bad]))
        ++first_bad;
    if (first_bad == n) return;
    using K = detail::KernelArg::Kind;
    for (std::size_t i = first_bad; i < n; ++i) {
        const Param& p = params[i];
        const K k = given[i].kind;
        const char* what = k == K::buffer ? "a buffer" : k == K::local ? "local memory" : "a scalar";
        std::string want;
        if (p.kind == Param::Kind::buffer && k != K::buffer) want = "a buffer (a global pointer)";
        if (p.kind == Param::Kind::local && k != K::local) want = "local memory (xgpu::Local)";
        if (p.kind == Param::Kind::scalar && k != K::scalar) want = "a scalar";
        if (p.kind == Param::Kind::scalar && k == K::scalar && p.size && p.size != given[i].size)
            want = fmt::format("a scalar of {} bytes", p.size);
        if (!want.empty())
            throw InvalidArgument(fmt::format("xgpu[opencl]: launch of '{}': argument {} is {} of {} bytes, but the "
                                              "kernel's parameter {} ('{}') needs {}",
                                              name, i, what, given[i].size, i, p.type, want),
                                  {"opencl", "launch", 0, ""});
    }
}

std::shared_ptr<detail::KernelImpl> Program::create_kernel(const std::string& name) {
    cl_int err = CL_SUCCESS;
    cl::Kernel k(program, name.c_str(), &err);
    if (err == CL_INVALID_KERNEL_NAME) return nullptr;
    check(err, "clCreateKernel", name);
    return std::make_shared<Kernel>(name, std::move(k));
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
