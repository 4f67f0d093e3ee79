// The OpenCL backend: programs and kernel lookup.
#include "opencl.hpp"

namespace xgpu::opencl {

Kernel::Kernel(std::string name, cl::Kernel k) : KernelImpl(std::move(name)), kernel(std::move(k)) {
    cl_uint n = 0;
    if (kernel.getInfo(CL_KERNEL_NUM_ARGS, &n) == CL_SUCCESS) args = int(n);
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
