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


/* 16 bytes of private memory declared XGPU_ALIGNED16 stored at a global address in one store;
 * the caller checks the address with XGPU_IS_ALIGNED16 */
#define XGPU_ALIGNED16 __attribute__((aligned(16)))
#define XGPU_IS_ALIGNED16(p) ((((size_t)(p)) & 15u) == 0)
#define XGPU_STORE16(dst, src) (*(XGPU_GLOBAL uint4*)(dst) = *(const uint4*)(src))
/* 16 bytes at a 16-byte aligned global address in one load, as T: uint4, int4, float4 or double2
 * (vector types both dialects have, read by their components .x, .y, ...) */
#define XGPU_LOAD16(T, p) (*(XGPU_GLOBAL const T*)(p))

/* 32-bit integer atomics on global memory; return the old value */
#define XGPU_ATOMIC_ADD(p, v) atomic_add((p), (v))
/* A 32-bit unsigned word of global memory stored so that every work-group of the launch sees it,
 * and loaded seeing the other groups' stores (the flags of a decoupled look-back, whose groups
 * wait only on groups that started before them) */
#define XGPU_ATOMIC_STORE(p, v) ((void)atomic_xchg((p), (v)))
#define XGPU_ATOMIC_LOAD(p) atomic_or((p), 0u)
/* ... and on local memory */
#define XGPU_LOCAL_ATOMIC_ADD(p, v) atomic_add((p), (v))

/* Bits: the set bits of a 32-bit value; a float's and a double's bits as uint and ulong */
#define XGPU_POPCOUNT32(x) popcount((uint)(x))
#define XGPU_FLOAT_BITS(f) as_uint(f)
#define XGPU_DOUBLE_BITS(d) as_ulong(d)

/* Fixed-width integer types */
typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
typedef ulong uint64_t;

/* Vectors: the four-component types image reads return and writes take */
#define XGPU_FLOAT4(a, b, c, d) ((float4)((a), (b), (c), (d)))
#define XGPU_INT4(a, b, c, d) ((int4)((a), (b), (c), (d)))
#define XGPU_UINT4(a, b, c, d) ((uint4)((a), (b), (c), (d)))

/* Images (xgpu/image.hpp). A sampled image parameter is the image and its sampler, two OpenCL
 * parameters (kernels/preamble_cuda.h: one texture object). SAMPLE reads at float coordinates
 * through the sampler; FETCH reads texel (x, y, z) exactly, inside the image, whatever the
 * sampler. _F for float, half and normalised formats, _I for signed and _UI for unsigned integer
 * formats; each returns four components, (r, 0, 0, 1) and (r, g, 0, 1) for 1 and 2 channels. */
#define XGPU_IMAGE1D_PARAM(name) read_only image1d_t name, sampler_t name##_xgpu_sampler
#define XGPU_IMAGE2D_PARAM(name) read_only image2d_t name, sampler_t name##_xgpu_sampler
#define XGPU_IMAGE3D_PARAM(name) read_only image3d_t name, sampler_t name##_xgpu_sampler
#define XGPU_WIMAGE2D_PARAM(name) write_only image2d_t name
#define XGPU_IMAGE_WIDTH(im) get_image_width(im)
#define XGPU_IMAGE_HEIGHT(im) get_image_height(im)
#define XGPU_IMAGE_DEPTH(im) get_image_depth(im)

/* PoCL 3.1 was seen to return alpha 0 for 1-channel images (integer reads, and the border of
 * CL_ADDRESS_CLAMP), where OpenCL says 1: the channels a format lacks are set here, from the
 * image's channel order, as on CUDA. */
XGPU_DEVICE_FN float4 xgpu_fixf_(float4 v, int order) {
    if (order == CLK_R) v.y = 0.0f;
    if (order == CLK_R || order == CLK_RG) {
        v.z = 0.0f;
        v.w = 1.0f;
    }
    return v;
}
XGPU_DEVICE_FN int4 xgpu_fixi_(int4 v, int order) {
    if (order == CLK_R) v.y = 0;
    if (order == CLK_R || order == CLK_RG) {
        v.z = 0;
        v.w = 1;
    }
    return v;
}
XGPU_DEVICE_FN uint4 xgpu_fixui_(uint4 v, int order) {
    if (order == CLK_R) v.y = 0u;
    if (order == CLK_R || order == CLK_RG) {
        v.z = 0u;
        v.w = 1u;
    }
    return v;
}
#define XGPU_READ_F_(im, ...) xgpu_fixf_(read_imagef(im, __VA_ARGS__), get_image_channel_order(im))
#define XGPU_READ_I_(im, ...) xgpu_fixi_(read_imagei(im, __VA_ARGS__), get_image_channel_order(im))
#define XGPU_READ_UI_(im, ...) xgpu_fixui_(read_imageui(im, __VA_ARGS__), get_image_channel_order(im))

#define XGPU_SAMPLE1D_F(im, x) XGPU_READ_F_(im, im##_xgpu_sampler, (float)(x))
#define XGPU_SAMPLE2D_F(im, x, y) XGPU_READ_F_(im, im##_xgpu_sampler, (float2)((x), (y)))
#define XGPU_SAMPLE3D_F(im, x, y, z) XGPU_READ_F_(im, im##_xgpu_sampler, (float4)((x), (y), (z), 0.0f))
#define XGPU_SAMPLE1D_I(im, x) XGPU_READ_I_(im, im##_xgpu_sampler, (float)(x))
#define XGPU_SAMPLE2D_I(im, x, y) XGPU_READ_I_(im, im##_xgpu_sampler, (float2)((x), (y)))
#define XGPU_SAMPLE3D_I(im, x, y, z) XGPU_READ_I_(im, im##_xgpu_sampler, (float4)((x), (y), (z), 0.0f))
#define XGPU_SAMPLE1D_UI(im, x) XGPU_READ_UI_(im, im##_xgpu_sampler, (float)(x))
#define XGPU_SAMPLE2D_UI(im, x, y) XGPU_READ_UI_(im, im##_xgpu_sampler, (float2)((x), (y)))
#define XGPU_SAMPLE3D_UI(im, x, y, z) XGPU_READ_UI_(im, im##_xgpu_sampler, (float4)((x), (y), (z), 0.0f))

#define XGPU_FETCH1D_F(im, x) XGPU_READ_F_(im, (int)(x))
#define XGPU_FETCH2D_F(im, x, y) XGPU_READ_F_(im, (int2)((x), (y)))
#define XGPU_FETCH3D_F(im, x, y, z) XGPU_READ_F_(im, (int4)((x), (y), (z), 0))
#define XGPU_FETCH1D_I(im, x) XGPU_READ_I_(im, (int)(x))
#define XGPU_FETCH2D_I(im, x, y) XGPU_READ_I_(im, (int2)((x), (y)))
#define XGPU_FETCH3D_I(im, x, y, z) XGPU_READ_I_(im, (int4)((x), (y), (z), 0))
#define XGPU_FETCH1D_UI(im, x) XGPU_READ_UI_(im, (int)(x))
#define XGPU_FETCH2D_UI(im, x, y) XGPU_READ_UI_(im, (int2)((x), (y)))
#define XGPU_FETCH3D_UI(im, x, y, z) XGPU_READ_UI_(im, (int4)((x), (y), (z), 0))

/* Writes to texel (x, y) of a writable 2-D image: v is a float4, int4 or uint4 (its first
 * channels are stored; normalised formats convert with rounding and saturation, integer
 * formats saturate). */
#define XGPU_WRITE2D_F(im, x, y, v) write_imagef(im, (int2)((x), (y)), (v))
#define XGPU_WRITE2D_I(im, x, y, v) write_imagei(im, (int2)((x), (y)), (v))
#define XGPU_WRITE2D_UI(im, x, y, v) write_imageui(im, (int2)((x), (y)), (v))

/* Vector types (XGPU_HAS_VECTORS, which the backend defines before this preamble wherever the
 * compiler takes them): OpenCL C's built-in vectors (char16 ... double16), whose arithmetic,
 * comparisons, logical operators and ?: act per component. The CPU forms of the reductions
 * (core/src/array/reduction.cpp) and of the uniform random numbers (kernels/philox_vectors.h) use
 * them. */

/* NVIDIA devices (XGPU_NV_SM: the compute capability as major * 10 + minor, which the backend
 * defines where the driver reports it): NVIDIA's OpenCL compiler takes inline PTX, so the CUDA
 * dialect's warp barrier exists here too. */
#if defined(XGPU_NV_SM) && XGPU_NV_SM >= 70
#define XGPU_WARP_SYNC() asm volatile("bar.warp.sync -1;" ::: "memory")
/* ... and its warp shuffles, of a value of a named type (XGPU_HAS_TYPED_SHUFFLE; OpenCL C has no
 * generic functions): XGPU_SHUFFLE_DOWN_T(double, v, o) is v of lane i + o, XGPU_SHUFFLE_XOR_T
 * v of lane i ^ m, all 32 lanes taking part; for float, double, int32_t and int64_t. */
#define XGPU_HAS_TYPED_SHUFFLE 1
XGPU_DEVICE_FN uint xgpu_shfl_down_u32(uint v, uint o) {
    uint r;
    asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, -1;" : "=r"(r) : "r"(v), "r"(o));
    return r;
}
XGPU_DEVICE_FN uint xgpu_shfl_xor_u32(uint v, uint m) {
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, -1;" : "=r"(r) : "r"(v), "r"(m));
    return r;
}
XGPU_DEVICE_FN ulong xgpu_shfl_down_u64(ulong v, uint o) {
    uint2 w = as_uint2(v);
    w.x = xgpu_shfl_down_u32(w.x, o);
    w.y = xgpu_shfl_down_u32(w.y, o);
    return as_ulong(w);
}
XGPU_DEVICE_FN ulong xgpu_shfl_xor_u64(ulong v, uint m) {
    uint2 w = as_uint2(v);
    w.x = xgpu_shfl_xor_u32(w.x, m);
    w.y = xgpu_shfl_xor_u32(w.y, m);
    return as_ulong(w);
}
XGPU_DEVICE_FN float xgpu_shfl_down_float(float v, uint o) { return as_float(xgpu_shfl_down_u32(as_uint(v), o)); }
XGPU_DEVICE_FN int xgpu_shfl_down_int32_t(int v, uint o) { return as_int(xgpu_shfl_down_u32(as_uint(v), o)); }
XGPU_DEVICE_FN long xgpu_shfl_down_int64_t(long v, uint o) { return as_long(xgpu_shfl_down_u64(as_ulong(v), o)); }
XGPU_DEVICE_FN float xgpu_shfl_xor_float(float v, uint m) { return as_float(xgpu_shfl_xor_u32(as_uint(v), m)); }
XGPU_DEVICE_FN int xgpu_shfl_xor_int32_t(int v, uint m) { return as_int(xgpu_shfl_xor_u32(as_uint(v), m)); }
XGPU_DEVICE_FN long xgpu_shfl_xor_int64_t(long v, uint m) { return as_long(xgpu_shfl_xor_u64(as_ulong(v), m)); }
#ifdef XGPU_HAS_FP64
XGPU_DEVICE_FN double xgpu_shfl_down_double(double v, uint o) {
    return as_double(xgpu_shfl_down_u64(as_ulong(v), o));
}
XGPU_DEVICE_FN double xgpu_shfl_xor_double(double v, uint m) {
    return as_double(xgpu_shfl_xor_u64(as_ulong(v), m));
}
#endif
#define XGPU_SHUFFLE_DOWN_T(type, v, offset) xgpu_shfl_down_##type((v), (offset))
#define XGPU_SHUFFLE_XOR_T(type, v, mask) xgpu_shfl_xor_##type((v), (mask))
/* ... and its warp votes (XGPU_HAS_WARP_BALLOT): the lanes whose predicate is nonzero, the lanes
 * below this one */
#define XGPU_HAS_WARP_BALLOT 1
XGPU_DEVICE_FN uint xgpu_ballot_(uint v) {
    uint r;
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, -1; }" : "=r"(r) : "r"(v));
    return r;
}
XGPU_DEVICE_FN uint xgpu_lanemask_lt_(void) {
    uint r;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
    return r;
}
#define XGPU_BALLOT(pred) xgpu_ballot_((uint)((pred) != 0))
#define XGPU_LANEMASK_LT() xgpu_lanemask_lt_()
#endif
