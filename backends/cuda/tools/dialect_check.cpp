// xgpu-cuda-dialect-check: compiles kernel sources dumped with XGPU_DUMP_KERNELS on another backend
// (PoCL, on a machine without an NVIDIA GPU) as the CUDA backend would, with NVRTC alone: the
// OpenCL preamble is replaced with the CUDA one. Every generated kernel's CUDA dialect is checked
// this way before a GPU is at hand.
//
//   XGPU_DUMP_KERNELS=/tmp/dump XGPU_BACKEND=opencl ctest ...
//   xgpu-cuda-dialect-check [--arch 90] /tmp/dump/*.xgpu.c
//
// The program's -D options (from the dump's header) are passed on. Programs that failed to build
// where they were dumped are renamed *.xgpu.c.failed and not given here; native programs
// (Context::compile_native: no xgpu preamble) are in the source backend's own language and are
// skipped.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../cuda.hpp"
#include "xgpu/detail/backend.hpp"

int main(int argc, char** argv) {
    int arch = 90, failed = 0, checked = 0, native = 0;
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
        if (text.rfind("/* xgpu program ", 0) != 0) {
            std::fprintf(stderr, "%s: not a dumped xgpu program\n", argv[i]);
            ++failed;
            continue;
        }
        if (at == std::string::npos) {
            ++native;
            continue;
        }
        // " * options: -DK=3 -cl-fast-relaxed-math */": the definitions apply to any dialect.
        std::vector<std::string> options;
        const std::size_t opt = text.find("\n * options: ");
        if (opt != std::string::npos && opt < at) {
            std::istringstream words(text.substr(opt + 13, text.find(" */", opt) - opt - 13));
            for (std::string w; words >> w;)
                if (w.rfind("-D", 0) == 0) options.push_back(w);
        }
        const std::string source = "#define XGPU_HAS_FP64 1\n" +
                                   std::string(xgpu::detail::embedded_kernel("preamble_cuda.h")) + text.substr(at);
        ++checked;
        try {
            xgpu::cuda::compile(source, options, xgpu::cuda::compile_target(arch));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: %s\n", argv[i], e.what());
            ++failed;
        }
    }
    std::printf("xgpu-cuda-dialect-check: %d programs, %d failed (sm_%d); %d native programs skipped\n", checked,
                failed, arch, native);
    return failed ? 1 : 0;
}
