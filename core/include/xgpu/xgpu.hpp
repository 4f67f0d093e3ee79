// xgpu: GPU programming in the spirit of PyCUDA and PyOpenCL, on CUDA and OpenCL.
// Include this header for the whole runtime.
#pragma once

#include "xgpu/buffer.hpp"
#include "xgpu/context.hpp"
#include "xgpu/device.hpp"
#include "xgpu/error.hpp"
#include "xgpu/event.hpp"
#include "xgpu/grid.hpp"
#include "xgpu/kernel.hpp"
#include "xgpu/pool.hpp"
#include "xgpu/queue.hpp"
#include "xgpu/warning.hpp"
