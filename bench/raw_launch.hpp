// Raw-API launch loops for xgpu-bench: the same empty kernel with the same three arguments (a
// buffer, a float, a 64-bit count) and the same grid as the bench's xgpu row, launched through the
// CUDA Driver API or OpenCL directly, so that xgpu's host-side launch cost is printed as a ratio
// to the raw call's in the same run.
//
// The bench is the one place outside backends/ that calls CUDA or OpenCL itself, because it
// measures them; that code lives in raw_launch.cpp and nowhere else.
#pragma once

#include <memory>
#include <string>

namespace xgpu_bench {

class RawLauncher {
public:
    virtual ~RawLauncher() = default;
    // Launches the empty kernel `n` times in a row (32 work-items, work-groups of 32), then waits
    // for all of them; returns the host microseconds per launch, waiting included.
    virtual double batch_us(int n) = 0;
    // What was measured, e.g. "raw Driver API (cuLaunchKernel)".
    virtual std::string label() const = 0;
};

// The raw launcher for the device xgpu chose: for "cuda" the device with CUDA ordinal `index`
// (libcuda.so.1 and NVRTC are opened with dlopen: the bench does not link them); for "opencl" the
// device at `index` in the ICD loader's platform-then-device order when its name is `name` (else
// the first device so named). `profiling_queue` asks for an OpenCL queue with profiling on, as
// xgpu's queues have. Returns null and sets `why` where no raw launcher can be made.
std::unique_ptr<RawLauncher> make_raw_launcher(const std::string& backend, int index, const std::string& name,
                                               bool profiling_queue, std::string& why);

} // namespace xgpu_bench
