/* xgpu kernel dialect: the OpenCL C 1.2 side. Prepended to every program compiled with
 * Context::compile on an OpenCL device; kernels/preamble_cuda.h is its twin. The backend puts
 * "#define XGPU_HAS_FP64 1" in front of it where the device has double precision. */
#define XGPU_BACKEND_OPENCL 1

#ifdef XGPU_HAS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* Declarations */
#define XGPU_KERNEL __kernel
#define XGPU_GLOBAL __global
#define XGPU_LOCAL __local
#define XGPU_CONSTANT __constant
#define XGPU_RESTRICT restrict
#define XGPU_DEVICE_FN static inline
#define XGPU_LOCAL_PTR(T) __local T*
#define XGPU_CONSTANT_PTR(T) __constant T*
#define XGPU_LOCAL_PARAM(T, name) __local T* name

/* Work-item geometry (size_t, dimension 0..2). NVIDIA's OpenCL was seen to compute wrong results
 * for 1-D ranges past 2^31 work-items: xgpu's own kernels launch 2-D ranges there. */
#define XGPU_GLOBAL_ID(d) get_global_id(d)
#define XGPU_LOCAL_ID(d) get_local_id(d)
#define XGPU_GROUP_ID(d) get_group_id(d)
#define XGPU_LOCAL_SIZE(d) get_local_size(d)
#define XGPU_NUM_GROUPS(d) get_num_groups(d)
#define XGPU_GLOBAL_SIZE(d) get_global_size(d)

/* Synchronisation within a work-group */
#define XGPU_BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define XGPU_LOCAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)

/* 32-bit integer atomics on global memory; return the old value */
#define XGPU_ATOMIC_ADD(p, v) atomic_add((p), (v))

/* Fixed-width integer types */
typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
typedef ulong uint64_t;

/* Vector types (XGPU_HAS_VECTORS): OpenCL C's built-in vectors (char16 ... double16), whose
 * arithmetic, comparisons, logical operators and ?: act per component. The CPU forms of the
 * reductions (core/src/array/reduction.cpp) and of the uniform random numbers
 * (kernels/philox_vectors.h) use them. */
#define XGPU_HAS_VECTORS 1
