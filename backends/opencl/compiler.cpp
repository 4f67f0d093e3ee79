// The OpenCL backend: the compiler (programs from source and from cached binaries), and on PoCL
// the gate that keeps work from running while a build does and the lock that keeps processes
// from building into PoCL's kernel cache at once.
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include "opencl.hpp"

namespace xgpu::opencl {

namespace {

std::string build_log(const cl::Program& p, const cl::Device& d) {
    std::string log;
    p.getBuildInfo(d, CL_PROGRAM_BUILD_LOG, &log);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
        log.pop_back();
    return log;
}

// PoCL's kernel cache (POCL_CACHE_DIR, else $XDG_CACHE_HOME/pocl, else ~/.cache/pocl) is shared
// by a user's processes, and PoCL 3.1's clBuildProgram crashes (readdir of a directory another
// process's build has just replaced) or fails without a diagnostic when processes build into an
// empty cache at once. A build holds an exclusive lock on a file in that cache, so the processes
// sharing it build one at a time (each later one finds the first one's result there). Where the
// file cannot be made (a read-only home), the build goes on without it.
class PoclCacheLock {
  public:
    PoclCacheLock() {
        namespace fs = std::filesystem;
        fs::path dir;
        if (const char* d = std::getenv("POCL_CACHE_DIR"); d && *d)
            dir = d;
        else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
            dir = fs::path(x) / "pocl";
        else if (const char* h = std::getenv("HOME"); h && *h)
            dir = fs::path(h) / ".cache" / "pocl";
        else
            return;
        std::error_code ec;
        fs::create_directories(dir, ec);
        fd_ = ::open((dir / "xgpu-build.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) return;
        while (::flock(fd_, LOCK_EX) != 0)
            if (errno != EINTR) {
                ::close(fd_);
                fd_ = -1;
                return;
            }
    }
    ~PoclCacheLock() {
        if (fd_ < 0) return;
        ::flock(fd_, LOCK_UN);
        ::close(fd_);
    }
    PoclCacheLock(const PoclCacheLock&) = delete;
    PoclCacheLock& operator=(const PoclCacheLock&) = delete;

  private:
    int fd_ = -1;
};

} // namespace

// Builds `p` for the context's device; on failure throws CompileError with the log.
void build_or_throw(cl::Program& p, const cl::Device& d, const std::vector<std::string>& options,
                    const std::string& source, const char* what) {
    // With the parameters' kinds and types, so that launches can be checked against them.
    std::vector<std::string> all = options;
    all.push_back("-cl-kernel-arg-info");
    const cl_int err = p.build({d}, join_options(all).c_str());
    if (err == CL_SUCCESS) return;
    detail::throw_compile_error("opencl", what, "clBuildProgram", err, error_name(err), build_log(p, d), all, options,
                                source);
}

std::unique_lock<std::shared_mutex> Context::quiesce_for_build() {
    if (!pocl_) return {};
    std::unique_lock gate(gate_);
    std::lock_guard lock(queues_mutex_);
    for (auto it = queues_.begin(); it != queues_.end();) {
        if (auto q = it->lock()) {
            q->queue.finish();
            ++it;
        } else {
            it = queues_.erase(it);
        }
    }
    return gate;
}

detail::BuildResult Context::build(const std::string& source, const std::vector<std::string>& options) {
    const auto gate = quiesce_for_build();
    std::optional<PoclCacheLock> cache_lock;
    if (pocl_) cache_lock.emplace();
    cl_int err = CL_SUCCESS;
    cl::Program p;
    // A PoCL build that fails with no diagnostic in its log (as builds racing in PoCL's cache did
    // where the lock above could not be taken) is tried again with a fresh program after a pause;
    // a build whose log names an error is not.
    for (int attempt = 0;; ++attempt) {
        p = cl::Program(context, source, false, &err);
        check(err, "clCreateProgramWithSource");
        std::vector<std::string> all = options;
        all.push_back("-cl-kernel-arg-info");
        const cl_int built = p.build({cl_device}, join_options(all).c_str());
        if (built == CL_SUCCESS) break;
        const std::string log = build_log(p, cl_device);
        if (pocl_ && built == CL_BUILD_PROGRAM_FAILURE && attempt < 5 && log.find("error") == std::string::npos) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10 << (2 * attempt)));
            continue;
        }
        detail::throw_compile_error("opencl", "compiling OpenCL C", "clBuildProgram", built, error_name(built), log,
                                    all, options, source);
    }

    auto program = std::make_shared<Program>(p);
    program->build_log = build_log(p, cl_device);
    detail::BuildResult result{program, {}};
    std::vector<std::size_t> sizes;
    if (p.getInfo(CL_PROGRAM_BINARY_SIZES, &sizes) == CL_SUCCESS && sizes.size() == 1 && sizes[0] > 0) {
        result.binary.resize(sizes[0]);
        unsigned char* ptr = result.binary.data();
        if (clGetProgramInfo(p(), CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS) result.binary.clear();
    }
    return result;
}

std::shared_ptr<detail::ProgramImpl> Context::load(const std::vector<unsigned char>& binary,
                                                   const std::vector<std::string>& options) {
    const auto gate = quiesce_for_build();
    std::optional<PoclCacheLock> cache_lock;
    if (pocl_) cache_lock.emplace();
    const unsigned char* ptr = binary.data();
    const std::size_t size = binary.size();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl_device_id dev = cl_device();
    cl_program raw = clCreateProgramWithBinary(context(), 1, &dev, &size, &ptr, &status, &err);
    if (err == CL_SUCCESS) err = status;
    check(err, "clCreateProgramWithBinary");
    cl::Program p(raw); // takes ownership
    build_or_throw(p, cl_device, options, {}, "loading a cached binary");
    return std::make_shared<Program>(p);
}

} // namespace xgpu::opencl
