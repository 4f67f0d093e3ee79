/* Philox4x32-10 on eight consecutive counters at once, in OpenCL C's vectors (XGPU_HAS_VECTORS):
 * the CPU form of the uniform kernels (core/src/random/generate.cpp). PoCL vectorises a kernel
 * across work-items only where no loop is left in it, and the rounds' 32x32-bit products, the
 * blocks' words and the stores of a block's numbers side by side did not vectorise there; here a
 * work-item makes eight blocks with whole-register operations (the products as 64-bit lanes of
 * zero-extended words: one vpmuludq for eight). Lane k runs exactly the rounds of xgpu_philox_at
 * (philox.h) on block b + k, and the conversions are the same integer math and power-of-two
 * scalings, so the stream is the same bits. Included after philox.h. */
#if defined(XGPU_HAS_VECTORS)

typedef struct { uint8 v[4]; } xgpu_philox_block8;

/* One round on the words x0..x3 of eight blocks with the round key (k0, k1). */
#define XGPU_PHILOX8_ROUND(k0, k1)                                                                   \
    {                                                                                                \
        const ulong8 p0 = convert_ulong8(x0) * (ulong8)(0xD2511F53u);                                \
        const ulong8 p1 = convert_ulong8(x2) * (ulong8)(0xCD9E8D57u);                                \
        x0 = convert_uint8(p1 >> 32) ^ x1 ^ (uint8)(k0);                                             \
        x1 = convert_uint8(p1);                                                                      \
        x2 = convert_uint8(p0 >> 32) ^ x3 ^ (uint8)(k1);                                             \
        x3 = convert_uint8(p0);                                                                      \
    }
/* The key schedule, then a round: written out ten times, no loop (see above). */
#define XGPU_PHILOX8_NEXT(k0, k1)                                                                    \
    k0 += 0x9E3779B9u;                                                                               \
    k1 += 0xBB67AE85u;                                                                               \
    XGPU_PHILOX8_ROUND(k0, k1)

/* Blocks b .. b + 7 of the stream: counters {low 32 bits, high 32 bits, 0, 0}. */
XGPU_DEVICE_FN xgpu_philox_block8 xgpu_philox8_at(uint64_t b, uint32_t k0, uint32_t k1) {
    const ulong8 c = (ulong8)(b) + (ulong8)(0, 1, 2, 3, 4, 5, 6, 7);
    uint8 x0 = convert_uint8(c), x1 = convert_uint8(c >> 32), x2 = (uint8)(0), x3 = (uint8)(0);
    XGPU_PHILOX8_ROUND(k0, k1)
    XGPU_PHILOX8_NEXT(k0, k1) XGPU_PHILOX8_NEXT(k0, k1) XGPU_PHILOX8_NEXT(k0, k1)
    XGPU_PHILOX8_NEXT(k0, k1) XGPU_PHILOX8_NEXT(k0, k1) XGPU_PHILOX8_NEXT(k0, k1)
    XGPU_PHILOX8_NEXT(k0, k1) XGPU_PHILOX8_NEXT(k0, k1) XGPU_PHILOX8_NEXT(k0, k1)
    xgpu_philox_block8 w;
    w.v[0] = x0;
    w.v[1] = x1;
    w.v[2] = x2;
    w.v[3] = x3;
    return w;
}

/* xgpu_philox_float and xgpu_philox_double of philox.h, lane by lane. */
XGPU_DEVICE_FN float8 xgpu_philox8_float(uint8 x) { return convert_float8(x >> 8) * 5.9604644775390625e-08f; }
#ifdef XGPU_HAS_FP64
XGPU_DEVICE_FN double8 xgpu_philox8_double(uint8 a, uint8 b) {
    return convert_double8(((convert_ulong8(a) << 32) | convert_ulong8(b)) >> 11) *
           1.1102230246251565404236316680908203125e-16;
}
#endif

#endif
