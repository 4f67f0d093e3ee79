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

/* OpenCL C's INFINITY and NAN (float), which NVRTC has no header for */
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000)

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
/* ... and v of lane i ^ mask */
#define XGPU_SHUFFLE_XOR(v, mask) __shfl_xor_sync(0xffffffffu, (v), (mask))
/* The same of a value of a named type, as the OpenCL dialect has them on NVIDIA devices
 * (XGPU_HAS_TYPED_SHUFFLE): float, double, int32_t and int64_t */
#define XGPU_HAS_TYPED_SHUFFLE 1
#define XGPU_SHUFFLE_DOWN_T(type, v, offset) XGPU_SHUFFLE_DOWN(v, offset)
#define XGPU_SHUFFLE_XOR_T(type, v, mask) XGPU_SHUFFLE_XOR(v, mask)
/* A barrier of the 32 lanes of a warp (their local memory writes visible to each other), all
 * lanes taking part */
#define XGPU_WARP_SYNC() __syncwarp()

/* 16 bytes of private memory declared XGPU_ALIGNED16 stored at a global address in one store;
 * the caller checks the address with XGPU_IS_ALIGNED16 (a run of four floats or two doubles a
 * work-item writes, which scalar stores 16 bytes apart would write in four times as many
 * partial sectors) */
#define XGPU_ALIGNED16 __align__(16)
#define XGPU_IS_ALIGNED16(p) ((((size_t)(p)) & 15u) == 0)
#define XGPU_STORE16(dst, src) (*(uint4*)(dst) = *(const uint4*)(src))
/* 16 bytes at a 16-byte aligned global address in one load, as T: uint4, int4, float4 or double2
 * (vector types both dialects have, read by their components .x, .y, ...) */
#define XGPU_LOAD16(T, p) (*(const T*)(p))

/* 32-bit integer atomics on global memory; return the old value */
#define XGPU_ATOMIC_ADD(p, v) atomicAdd((p), (v))
/* A 32-bit unsigned word of global memory stored so that every work-group of the launch sees it,
 * and loaded seeing the other groups' stores (the flags of a decoupled look-back, whose groups
 * wait only on groups that started before them) */
#define XGPU_ATOMIC_STORE(p, v) ((void)atomicExch((p), (v)))
#define XGPU_ATOMIC_LOAD(p) (*(volatile const unsigned int*)(p))
/* ... and on local memory */
#define XGPU_LOCAL_ATOMIC_ADD(p, v) atomicAdd((p), (v))

/* Bits: the set bits of a 32-bit value; a float's and a double's bits as uint32_t and uint64_t */
#define XGPU_POPCOUNT32(x) __popc(x)
#define XGPU_FLOAT_BITS(f) __float_as_uint(f)
#define XGPU_DOUBLE_BITS(d) ((unsigned long long)__double_as_longlong(d))

/* Warp votes (XGPU_HAS_WARP_BALLOT): the mask of the lanes whose predicate is nonzero, all 32
 * lanes taking part; the mask of the lanes below this one */
#define XGPU_HAS_WARP_BALLOT 1
#define XGPU_BALLOT(pred) __ballot_sync(0xffffffffu, (pred))
__device__ __forceinline__ unsigned xgpu_lanemask_lt_() {
    unsigned r;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
    return r;
}
#define XGPU_LANEMASK_LT() xgpu_lanemask_lt_()

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

/* Vectors: the four-component types image reads return and writes take */
#define XGPU_FLOAT4(a, b, c, d) make_float4((a), (b), (c), (d))
#define XGPU_INT4(a, b, c, d) make_int4((a), (b), (c), (d))
#define XGPU_UINT4(a, b, c, d) make_uint4((a), (b), (c), (d))

/* Images (xgpu/image.hpp). An image parameter is this descriptor: a texture object (the image
 * with its sampler baked in, made by the backend per image and sampler) for reads, a surface
 * object for writes, the sizes, and the format: channel type (ChannelType's order) | channels << 4
 * | normalised << 8 | normalised coordinates << 9. kernels/preamble_opencl.h is the twin. */
struct xgpu_image {
    unsigned long long tex;  /* cudaTextureObject_t */
    unsigned long long surf; /* cudaSurfaceObject_t */
    int width, height, depth;
    unsigned int format;
};
#define XGPU_IMAGE1D_PARAM(name) const xgpu_image name
#define XGPU_IMAGE2D_PARAM(name) const xgpu_image name
#define XGPU_IMAGE3D_PARAM(name) const xgpu_image name
#define XGPU_WIMAGE2D_PARAM(name) const xgpu_image name
#define XGPU_IMAGE_WIDTH(im) ((im).width)
#define XGPU_IMAGE_HEIGHT(im) ((im).height)
#define XGPU_IMAGE_DEPTH(im) ((im).depth)

/* A texture of fewer than four channels reads as OpenCL's do: (r, 0, 0, 1), (r, g, 0, 1). */
template <class T> __device__ __forceinline__ T xgpu_channels_(T v, unsigned int format) {
    const unsigned int c = (format >> 4) & 15u;
    if (c < 2u) v.y = 0;
    if (c < 4u) {
        v.z = 0;
        v.w = 1;
    }
    return v;
}
/* Texel i's centre in the sampler's coordinates: FETCH reads through the texture object (exact
 * for nearest filtering, and for linear filtering with unnormalised coordinates). */
__device__ __forceinline__ float xgpu_texel_(int i, int n, unsigned int format) {
    const float c = (float)i + 0.5f;
    return (format & 512u) ? c / (float)n : c;
}

#define XGPU_SAMPLE1D_F(im, x) xgpu_channels_(tex1D<float4>((im).tex, (float)(x)), (im).format)
#define XGPU_SAMPLE2D_F(im, x, y) xgpu_channels_(tex2D<float4>((im).tex, (float)(x), (float)(y)), (im).format)
#define XGPU_SAMPLE3D_F(im, x, y, z)                                                                                   \
    xgpu_channels_(tex3D<float4>((im).tex, (float)(x), (float)(y), (float)(z)), (im).format)
#define XGPU_SAMPLE1D_I(im, x) xgpu_channels_(tex1D<int4>((im).tex, (float)(x)), (im).format)
#define XGPU_SAMPLE2D_I(im, x, y) xgpu_channels_(tex2D<int4>((im).tex, (float)(x), (float)(y)), (im).format)
#define XGPU_SAMPLE3D_I(im, x, y, z)                                                                                   \
    xgpu_channels_(tex3D<int4>((im).tex, (float)(x), (float)(y), (float)(z)), (im).format)
#define XGPU_SAMPLE1D_UI(im, x) xgpu_channels_(tex1D<uint4>((im).tex, (float)(x)), (im).format)
#define XGPU_SAMPLE2D_UI(im, x, y) xgpu_channels_(tex2D<uint4>((im).tex, (float)(x), (float)(y)), (im).format)
#define XGPU_SAMPLE3D_UI(im, x, y, z)                                                                                  \
    xgpu_channels_(tex3D<uint4>((im).tex, (float)(x), (float)(y), (float)(z)), (im).format)

#define XGPU_TEXEL_X_(im, x) xgpu_texel_((int)(x), (im).width, (im).format)
#define XGPU_TEXEL_Y_(im, y) xgpu_texel_((int)(y), (im).height, (im).format)
#define XGPU_TEXEL_Z_(im, z) xgpu_texel_((int)(z), (im).depth, (im).format)
#define XGPU_FETCH1D_F(im, x) XGPU_SAMPLE1D_F(im, XGPU_TEXEL_X_(im, x))
#define XGPU_FETCH2D_F(im, x, y) XGPU_SAMPLE2D_F(im, XGPU_TEXEL_X_(im, x), XGPU_TEXEL_Y_(im, y))
#define XGPU_FETCH3D_F(im, x, y, z)                                                                                    \
    XGPU_SAMPLE3D_F(im, XGPU_TEXEL_X_(im, x), XGPU_TEXEL_Y_(im, y), XGPU_TEXEL_Z_(im, z))
#define XGPU_FETCH1D_I(im, x) XGPU_SAMPLE1D_I(im, XGPU_TEXEL_X_(im, x))
#define XGPU_FETCH2D_I(im, x, y) XGPU_SAMPLE2D_I(im, XGPU_TEXEL_X_(im, x), XGPU_TEXEL_Y_(im, y))
#define XGPU_FETCH3D_I(im, x, y, z)                                                                                    \
    XGPU_SAMPLE3D_I(im, XGPU_TEXEL_X_(im, x), XGPU_TEXEL_Y_(im, y), XGPU_TEXEL_Z_(im, z))
#define XGPU_FETCH1D_UI(im, x) XGPU_SAMPLE1D_UI(im, XGPU_TEXEL_X_(im, x))
#define XGPU_FETCH2D_UI(im, x, y) XGPU_SAMPLE2D_UI(im, XGPU_TEXEL_X_(im, x), XGPU_TEXEL_Y_(im, y))
#define XGPU_FETCH3D_UI(im, x, y, z)                                                                                   \
    XGPU_SAMPLE3D_UI(im, XGPU_TEXEL_X_(im, x), XGPU_TEXEL_Y_(im, y), XGPU_TEXEL_Z_(im, z))

/* Writes through the surface object, with OpenCL's conversions: the format is known only at run
 * time here, so one switch picks the stored type (the branch is the same for every work-item). */
#define XGPU_SURF_STORE_(T, im, x, y, a, b, c, d)                                                                      \
    switch (((im).format >> 4) & 15u) {                                                                                \
    case 1: surf2Dwrite((T)(a), (im).surf, (x) * (int)sizeof(T), (y)); break;                                          \
    case 2: surf2Dwrite(make_##T##2((a), (b)), (im).surf, (x)*2 * (int)sizeof(T), (y)); break;                         \
    default: surf2Dwrite(make_##T##4((a), (b), (c), (d)), (im).surf, (x)*4 * (int)sizeof(T), (y)); break;              \
    }
__device__ __forceinline__ unsigned short xgpu_half_bits_(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ __forceinline__ int xgpu_norm_(float f, float lo, float scale) {
    return __float2int_rn(fminf(fmaxf(f, lo), 1.0f) * scale);
}
__device__ __forceinline__ int xgpu_sat_(int v, int lo, int hi) {
    return min(max(v, lo), hi);
}
__device__ inline void xgpu_write2d_f_(const xgpu_image& im, int x, int y, float4 v) {
    switch (im.format & 15u) {
    case 0: /* uint8, normalised */
        XGPU_SURF_STORE_(uchar, im, x, y, xgpu_norm_(v.x, 0.f, 255.f), xgpu_norm_(v.y, 0.f, 255.f),
                         xgpu_norm_(v.z, 0.f, 255.f), xgpu_norm_(v.w, 0.f, 255.f))
        break;
    case 1: /* int8, normalised */
        XGPU_SURF_STORE_(char, im, x, y, xgpu_norm_(v.x, -1.f, 127.f), xgpu_norm_(v.y, -1.f, 127.f),
                         xgpu_norm_(v.z, -1.f, 127.f), xgpu_norm_(v.w, -1.f, 127.f))
        break;
    case 2: /* uint16, normalised */
        XGPU_SURF_STORE_(ushort, im, x, y, xgpu_norm_(v.x, 0.f, 65535.f), xgpu_norm_(v.y, 0.f, 65535.f),
                         xgpu_norm_(v.z, 0.f, 65535.f), xgpu_norm_(v.w, 0.f, 65535.f))
        break;
    case 3: /* int16, normalised */
        XGPU_SURF_STORE_(short, im, x, y, xgpu_norm_(v.x, -1.f, 32767.f), xgpu_norm_(v.y, -1.f, 32767.f),
                         xgpu_norm_(v.z, -1.f, 32767.f), xgpu_norm_(v.w, -1.f, 32767.f))
        break;
    case 6: /* float16 */
        XGPU_SURF_STORE_(ushort, im, x, y, xgpu_half_bits_(v.x), xgpu_half_bits_(v.y), xgpu_half_bits_(v.z),
                         xgpu_half_bits_(v.w))
        break;
    case 7: XGPU_SURF_STORE_(float, im, x, y, v.x, v.y, v.z, v.w) break;
    default: break; /* 32-bit integer formats: use XGPU_WRITE2D_I / _UI */
    }
}
__device__ inline void xgpu_write2d_i_(const xgpu_image& im, int x, int y, int4 v) {
    switch (im.format & 15u) {
    case 1:
        XGPU_SURF_STORE_(char, im, x, y, xgpu_sat_(v.x, -128, 127), xgpu_sat_(v.y, -128, 127),
                         xgpu_sat_(v.z, -128, 127), xgpu_sat_(v.w, -128, 127))
        break;
    case 3:
        XGPU_SURF_STORE_(short, im, x, y, xgpu_sat_(v.x, -32768, 32767), xgpu_sat_(v.y, -32768, 32767),
                         xgpu_sat_(v.z, -32768, 32767), xgpu_sat_(v.w, -32768, 32767))
        break;
    case 5: XGPU_SURF_STORE_(int, im, x, y, v.x, v.y, v.z, v.w) break;
    default: break; /* not a signed integer format */
    }
}
__device__ inline void xgpu_write2d_ui_(const xgpu_image& im, int x, int y, uint4 v) {
    switch (im.format & 15u) {
    case 0: XGPU_SURF_STORE_(uchar, im, x, y, min(v.x, 255u), min(v.y, 255u), min(v.z, 255u), min(v.w, 255u)) break;
    case 2:
        XGPU_SURF_STORE_(ushort, im, x, y, min(v.x, 65535u), min(v.y, 65535u), min(v.z, 65535u), min(v.w, 65535u))
        break;
    case 4: XGPU_SURF_STORE_(uint, im, x, y, v.x, v.y, v.z, v.w) break;
    default: break; /* not an unsigned integer format */
    }
}
#define XGPU_WRITE2D_F(im, x, y, v) xgpu_write2d_f_((im), (int)(x), (int)(y), (v))
#define XGPU_WRITE2D_I(im, x, y, v) xgpu_write2d_i_((im), (int)(x), (int)(y), (v))
#define XGPU_WRITE2D_UI(im, x, y, v) xgpu_write2d_ui_((im), (int)(x), (int)(y), (v))
