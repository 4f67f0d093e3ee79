// The CUDA driver (libcuda.so.1) and NVRTC, opened with dlopen: one build of xgpu runs on machines
// with or without NVIDIA's driver, and never links either library. The functions come from
// functions.def; the toolkit's headers give their types.
#pragma once

// Per-thread default-stream variants (cuLaunchKernel_ptsz, ...) are not wanted: every call here
// names its stream, and the table must load the plain symbols.
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "xgpu's CUDA backend is built without CUDA_API_PER_THREAD_DEFAULT_STREAM"
#endif

#include <cuda.h>
#include <nvrtc.h>

#include <string>
#include <vector>

namespace xgpu::cuda {

// One pointer per function of functions.def, named as cuda.h names the symbol (api::cuMemAlloc is
// api::cuMemAlloc_v2 after the header's #define, like the call sites). Null until loaded.
namespace api {
#define XGPU_CU(fn) inline decltype(&::fn) fn = nullptr;
#define XGPU_CU_OPTIONAL(fn) XGPU_CU(fn)
#define XGPU_CU_FALLBACK(fn, older) XGPU_CU(fn)
#define XGPU_NVRTC(fn) XGPU_CU(fn)
#include "functions.def"
} // namespace api

// Loads the driver once (XGPU_CUDA_DRIVER names another file than libcuda.so.1) and binds the
// api:: driver pointers. Throws BackendUnavailable naming what is missing, on this and every
// later call.
void load_driver();

// Loads NVRTC once (libnvrtc.so.13, then older sonames) and binds the api:: NVRTC pointers.
// Throws BackendUnavailable naming libnvrtc.so.13 when none loads.
void load_nvrtc();

// load_nvrtc() without the exception: whether NVRTC is there.
bool nvrtc_available() noexcept;

// The driver and NVRTC, loaded if not yet: one line each, with the file's path or why it did not
// load (BackendStatus::libraries).
std::vector<std::string> loaded_libraries();

} // namespace xgpu::cuda
