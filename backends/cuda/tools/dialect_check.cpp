// xgpu-cuda-dialect-check: compiles kernel sources dumped with XGPU_DUMP_KERNELS on another backend
// (PoCL, on a machine without an NVIDIA GPU) as the CUDA backend would, with NVRTC alone: the
// OpenCL preamble is replaced with the CUDA one. Every generated kernel's CUDA dialect is checked
// this way before a GPU is at hand.
//
//   XGPU_DUMP_KERNELS=/tmp/dump XGPU_BACKEND=opencl ctest ...
//   xgpu-cuda-dialect-check [--arch 90] /tmp/dump/*.xgpu.c
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "../cuda.hpp"
#include "xgpu/detail/backend.hpp"

int main(int argc, char** argv) {
    int arch = 90, failed = 0, checked = 0;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--arch") && i + 1 < argc) {
            arch = std::atoi(argv[++i]);
            continue;
        }
        std::ifstream in(argv[i]);
        std::stringstream s;
        s << in.rdbuf();
        const std::string text = s.str();
        // Dumped programs are: a comment, the backend's preamble, "#line 1", the source.
        const std::size_t at = text.find("\n#line 1\n");
        if (at == std::string::npos) {
            std::fprintf(stderr, "%s: not a dumped xgpu program\n", argv[i]);
            ++failed;
            continue;
        }
        const std::string source = "#define XGPU_HAS_FP64 1\n" +
                                   std::string(xgpu::detail::embedded_kernel("preamble_cuda.h")) + text.substr(at);
        ++checked;
        try {
            xgpu::cuda::compile(source, {}, xgpu::cuda::compile_target(arch));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: %s\n", argv[i], e.what());
            ++failed;
        }
    }
    std::printf("xgpu-cuda-dialect-check: %d programs, %d failed (sm_%d)\n", checked, failed, arch);
    return failed ? 1 : 0;
}
