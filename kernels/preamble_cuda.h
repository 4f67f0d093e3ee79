/* xgpu kernel dialect: the CUDA C++ (NVRTC) side. Prepended to every program compiled with
 * Context::compile on a CUDA device; kernels/preamble_opencl.h is its twin. The backend puts
 * "#define XGPU_HAS_FP64 1" in front of it (every CUDA device has double precision). */
#define XGPU_BACKEND_CUDA 1
#define XGPU_HAS_WARP_SHUFFLE 1
#define XGPU_WARP_SIZE 32

/* Declarations */
#define XGPU_KERNEL extern "C" __global__
#define XGPU_GLOBAL
#define XGPU_LOCAL __shared__
#define XGPU_CONSTANT __constant__ const
#define XGPU_RESTRICT __restrict__
#define XGPU_DEVICE_FN __device__ inline
#define XGPU_LOCAL_PTR(T) T*
#define XGPU_CONSTANT_PTR(T) const T* __restrict__
#define XGPU_LOCAL_PARAM(T, name) xgpu_local_param<T> name

/* Fixed-width integer types */
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long long ulong;

/* Work-item geometry (size_t, dimension 0..2) */
__device__ __forceinline__ size_t xgpu_pick_(unsigned d, unsigned x, unsigned y, unsigned z) {
    return d == 0 ? x : (d == 1 ? y : z);
}
#define XGPU_LOCAL_ID(d) xgpu_pick_((d), threadIdx.x, threadIdx.y, threadIdx.z)
#define XGPU_GROUP_ID(d) xgpu_pick_((d), blockIdx.x, blockIdx.y, blockIdx.z)
#define XGPU_LOCAL_SIZE(d) xgpu_pick_((d), blockDim.x, blockDim.y, blockDim.z)
#define XGPU_NUM_GROUPS(d) xgpu_pick_((d), gridDim.x, gridDim.y, gridDim.z)
#define XGPU_GLOBAL_ID(d) (XGPU_GROUP_ID(d) * XGPU_LOCAL_SIZE(d) + XGPU_LOCAL_ID(d))
#define XGPU_GLOBAL_SIZE(d) (XGPU_NUM_GROUPS(d) * XGPU_LOCAL_SIZE(d))

/* Synchronisation within a work-group */
#define XGPU_BARRIER() __syncthreads()
#define XGPU_LOCAL_BARRIER() __syncthreads()

/* Within a warp (XGPU_HAS_WARP_SHUFFLE): lane i gets v of lane i + offset, all 32 lanes taking part */
#define XGPU_SHUFFLE_DOWN(v, offset) __shfl_down_sync(0xffffffffu, (v), (offset))

/* 32-bit integer atomics on global memory; return the old value */
#define XGPU_ATOMIC_ADD(p, v) atomicAdd((p), (v))

/* The last work-group of a launch (XGPU_HAS_GROUP_TICKET; DeviceInfo::group_ticket on the host):
 * a group makes its global writes visible to the whole device, then takes a ticket from a counter
 * of unsigned ints; the group that draws the number of groups minus one sees every other group's
 * writes. Returns the ticket. */
#define XGPU_HAS_GROUP_TICKET 1
#define XGPU_GROUP_TICKET(counter) (__threadfence(), atomicAdd((counter), 1u))

/* Local-memory kernel parameters: OpenCL passes them as __local pointers; CUDA has only one
 * dynamic shared-memory block per launch, so the backend passes each parameter's byte offset
 * into it and this wrapper turns the offset back into a pointer. */
extern __shared__ __align__(16) unsigned char xgpu_dynamic_local_[];
template <class T> struct xgpu_local_param {
    unsigned int offset;
    __device__ __forceinline__ operator T*() const { return reinterpret_cast<T*>(xgpu_dynamic_local_ + offset); }
};
