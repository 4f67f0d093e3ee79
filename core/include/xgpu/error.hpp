// xgpu errors: one exception hierarchy for both backends.
//
// Every error carries the backend it came from, the native call that failed, the native code and
// its name. CompileError adds the full build log, the options and the source that was compiled.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace xgpu {

// Where an error came from.
struct ErrorOrigin {
    std::string backend;   // "cuda", "opencl", or "" for the neutral layer
    std::string call;      // the native call that failed, e.g. "clBuildProgram"
    long long code = 0;    // the native error code, 0 if none
    std::string code_name; // e.g. "CL_BUILD_PROGRAM_FAILURE"
};

class Error : public std::runtime_error {
public:
    using Origin = ErrorOrigin;

    explicit Error(const std::string& what, Origin origin = {});

    const std::string& backend() const noexcept { return origin_.backend; }
    const std::string& call() const noexcept { return origin_.call; }
    long long code() const noexcept { return origin_.code; }
    const std::string& code_name() const noexcept { return origin_.code_name; }

private:
    Origin origin_;
};

// The kernel source did not compile (or a cached binary did not load).
class CompileError : public Error {
public:
    CompileError(const std::string& what, Origin origin, std::string log, std::vector<std::string> options,
                 std::string source);
    const std::string& log() const noexcept { return log_; }
    const std::vector<std::string>& options() const noexcept { return options_; }
    const std::string& source() const noexcept { return source_; }

private:
    std::string log_;
    std::vector<std::string> options_;
    std::string source_;
};

// Device (or pinned host) memory could not be allocated.
class OutOfMemory : public Error {
    using Error::Error;
};

// A kernel launch, or a kernel that ran, failed.
class LaunchError : public Error {
    using Error::Error;
};

// The caller passed something wrong; nothing was enqueued.
class InvalidArgument : public Error {
    using Error::Error;
};

// Array shapes that do not fit together; the message names both shapes.
class ShapeError : public InvalidArgument {
    using InvalidArgument::InvalidArgument;
};

// Types that do not fit together: a kernel argument of another kind or size than the kernel's
// parameter (Python raises it as xgpu.DTypeError, a TypeError).
class DTypeError : public InvalidArgument {
    using InvalidArgument::InvalidArgument;
};

// The requested backend (or device) cannot start here; the message says what is missing.
class BackendUnavailable : public Error {
    using Error::Error;
};

// Any other failure reported by a backend.
class BackendError : public Error {
    using Error::Error;
};

} // namespace xgpu
