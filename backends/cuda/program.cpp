// The CUDA backend: program binaries, modules, and kernel lookup.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "cuda.hpp"

namespace xgpu::cuda {
namespace {

// A binary is an 8-byte header (magic, format version, kind 'C' cubin or 'P' PTX, two zero bytes)
// and the image, which so starts 8-byte aligned, as an ELF file in memory normally is.
constexpr unsigned char magic[4] = {'X', 'G', 'C', 'U'};
constexpr std::size_t header_size = 8;

[[noreturn]] void bad_binary(const char* why) {
    throw BackendError(fmt::format("xgpu[cuda]: not a program binary of this xgpu build: {}", why),
                       {"cuda", "load", 0, ""});
}

template <class T> T read_le(const unsigned char* p) {
    T v{};
    std::memcpy(&v, p, sizeof v); // ELF fields are little-endian, as is every host CUDA runs on
    return v;
}

// A 64-bit CUDA ELF whose header and section and program tables lie inside `size` bytes: enough
// that the driver is never handed a truncated or foreign file.
bool is_cuda_elf(const unsigned char* p, std::size_t size) {
    constexpr std::uint16_t em_cuda = 190;
    constexpr unsigned char elf_magic[4] = {0x7f, 'E', 'L', 'F'};
    if (size < 64 || std::memcmp(p, elf_magic, 4) != 0 || p[4] != 2 /* 64-bit */ ||
        read_le<std::uint16_t>(p + 18) != em_cuda)
        return false;
    const auto fits = [&](std::uint64_t offset, std::uint64_t count, std::uint64_t entry) {
        return offset <= size && count * entry <= size - offset;
    };
    return fits(read_le<std::uint64_t>(p + 0x20), read_le<std::uint16_t>(p + 0x38), read_le<std::uint16_t>(p + 0x36)) &&
           fits(read_le<std::uint64_t>(p + 0x28), read_le<std::uint16_t>(p + 0x3c), read_le<std::uint16_t>(p + 0x3a));
}

// The image of `binary` after checking it; throws BackendError if it is not one of ours.
const unsigned char* image_of(const std::vector<unsigned char>& binary, char& kind) {
    if (binary.size() <= header_size) bad_binary("too short");
    const unsigned char* p = binary.data();
    if (std::memcmp(p, magic, sizeof magic) != 0) bad_binary("wrong magic");
    if (p[4] != binary_format_version) bad_binary("another format version");
    kind = char(p[5]);
    const unsigned char* image = p + header_size;
    const std::size_t size = binary.size() - header_size;
    if (kind == 'C' && !is_cuda_elf(image, size)) bad_binary("a damaged cubin");
    if (kind == 'P' && (image[size - 1] != '\0' || !std::strstr(reinterpret_cast<const char*>(image), ".target")))
        bad_binary("damaged PTX");
    if (kind != 'C' && kind != 'P') bad_binary("an unknown kind of image");
    return image;
}

} // namespace

std::vector<unsigned char> pack_binary(char kind, const char* image, std::size_t size) {
    std::vector<unsigned char> b(header_size + size);
    std::memcpy(b.data(), magic, sizeof magic);
    b[4] = binary_format_version;
    b[5] = static_cast<unsigned char>(kind);
    std::memcpy(b.data() + header_size, image, size);
    return b;
}

std::shared_ptr<Module> load_module(std::shared_ptr<Context> ctx, const std::vector<unsigned char>& binary,
                                    const std::vector<std::string>& options, const std::string& source) {
    char kind = 0;
    const unsigned char* image = image_of(binary, kind);
    ctx->make_current();
    // The JIT's error log says why the driver rejected the image (PTX it cannot compile, a cubin
    // for another architecture).
    char jit_log[8192] = {};
    CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {jit_log, reinterpret_cast<void*>(std::uintptr_t(sizeof jit_log - 1))};
    CUmodule m = nullptr;
    const CUresult r = api::cuModuleLoadDataEx(&m, image, 2, keys, values);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) fail(r, "cuModuleLoadDataEx");
    if (r != CUDA_SUCCESS) {
        detail::throw_compile_error(
            "cuda", fmt::format("loading the compiled {} on {}", kind == 'C' ? "cubin" : "PTX", ctx->device().name()),
            "cuModuleLoadDataEx", r, error_name(r), jit_log, options, options, source);
    }
    return std::make_shared<Module>(std::move(ctx), m);
}

Module::~Module() {
    if (context->try_make_current()) api::cuModuleUnload(handle); // a destructor cannot report failure
}

Kernel::Kernel(std::string kernel_name, std::shared_ptr<Module> m, CUfunction f)
    : KernelImpl(std::move(kernel_name)), module(std::move(m)), function(f) {
    int threads = 0;
    check(api::cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function), "cuFuncGetAttribute",
          name);
    max_threads = std::size_t(threads);
    if (!api::cuFuncGetParamInfo) return; // a driver before 12.4: the parameters stay unknown
    // Parameters are counted by asking for each index until the driver says there is none.
    for (std::size_t i = 0;; ++i) {
        std::size_t offset = 0, size = 0;
        const CUresult r = api::cuFuncGetParamInfo(function, i, &offset, &size);
        if (r == CUDA_SUCCESS) {
            param_sizes.push_back(size);
        } else {
            if (i == 0 && r != CUDA_ERROR_INVALID_VALUE) return; // cannot tell
            break;
        }
    }
    args = int(param_sizes.size());
}

void Kernel::allow_shared_memory(std::size_t bytes) {
    if (bytes <= shared_limit.load(std::memory_order_acquire)) return;
    // Serialised so that the attribute only ever grows, whatever order racing launches arrive in.
    static std::mutex mutex;
    std::lock_guard lock(mutex);
    if (bytes <= shared_limit.load(std::memory_order_relaxed)) return;
    check(api::cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(bytes)),
          "cuFuncSetAttribute", fmt::format("kernel '{}' with {} bytes of local memory", name, bytes));
    shared_limit.store(bytes, std::memory_order_release);
}

std::shared_ptr<detail::KernelImpl> Program::create_kernel(const std::string& name) {
    // Where the driver can list the module's kernels, an unknown name is answered from the list
    // rather than by a failing call (which compute-sanitizer would report as an API error). A
    // kernel written without extern "C" (CUDA C++ names it _Z<length><name><parameters>, as
    // _Z8doublifyPf) is found by its plain name where that names one kernel, as PyCUDA's
    // SourceModule finds it (it compiles inside extern "C").
    std::string symbol = name;
    if (api::cuModuleGetFunctionCount) {
        const auto names = kernel_names();
        if (std::find(names.begin(), names.end(), name) == names.end()) {
            // Only an identifier has a mangled form ("_Z1" + "1..." would match other lengths' names).
            const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
            if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ||
                !std::all_of(name.begin(), name.end(), word))
                return nullptr;
            const std::string prefix = "_Z" + std::to_string(name.size()) + name;
            std::vector<std::string> mangled;
            for (const auto& n : names)
                if (n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0) mangled.push_back(n);
            if (mangled.size() != 1) return nullptr;
            symbol = mangled.front();
        }
    }
    module->context->make_current();
    CUfunction f = nullptr;
    const CUresult r = api::cuModuleGetFunction(&f, module->handle, symbol.c_str());
    if (r == CUDA_ERROR_NOT_FOUND) return nullptr;
    check(r, "cuModuleGetFunction", name);
    return std::make_shared<Kernel>(name, module, f);
}

std::vector<std::string> Program::kernel_names() {
    // Listing a module's kernels needs a 12.4 driver; older ones list none.
    if (!api::cuModuleGetFunctionCount || !api::cuModuleEnumerateFunctions || !api::cuFuncGetName) return {};
    module->context->make_current();
    unsigned count = 0;
    check(api::cuModuleGetFunctionCount(&count, module->handle), "cuModuleGetFunctionCount");
    std::vector<CUfunction> functions(count);
    check(api::cuModuleEnumerateFunctions(functions.data(), count, module->handle), "cuModuleEnumerateFunctions");
    std::vector<std::string> names;
    for (CUfunction f : functions) {
        const char* n = nullptr;
        check(api::cuFuncGetName(&n, f), "cuFuncGetName");
        if (n) names.emplace_back(n);
    }
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace xgpu::cuda
