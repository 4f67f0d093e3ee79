/* Philox4x32-10 on 32 consecutive counters at once, in OpenCL C's vectors (XGPU_HAS_VECTORS): the
 * CPU form of the uniform kernels (core/src/random/generate.cpp). PoCL vectorises a kernel across
 * work-items only where no loop is left in it, and the rounds, the blocks' words and the stores of
 * a block's numbers side by side did not vectorise there; here a work-item makes 32 blocks with
 * whole-register operations, as two independent chains of 16 (one chain waits on each round's
 * multiplication). Each word sits in the low half of a 64-bit lane, so that a round's 32x32-bit
 * products are one vpmuludq per eight blocks with no conversions: the high halves of a product's
 * low word (x1, x3) are left as they are, and masked off wherever a word is read. Lane k runs
 * exactly the rounds of xgpu_philox_at (philox.h) on block b + k, and the conversions are the same
 * integer math and power-of-two scalings, so the stream is the same bits. Included after
 * philox.h. */
#if defined(XGPU_HAS_VECTORS)

/* 16 blocks: word j of block b + k is the low half of v[j].sk. */
typedef struct { ulong16 v[4]; } xgpu_philox_block16;

#define XGPU_PHILOX16_LOW ((ulong16)(0xffffffffu))

/* One round on the 16 blocks `w` with the round key (k0, k1). */
#define XGPU_PHILOX16_ROUND(w, k0, k1)                                                               \
    {                                                                                                \
        const ulong16 p0 = ((w).v[0] & XGPU_PHILOX16_LOW) * (ulong16)(0xD2511F53u);                  \
        const ulong16 p1 = ((w).v[2] & XGPU_PHILOX16_LOW) * (ulong16)(0xCD9E8D57u);                  \
        (w).v[0] = (p1 >> 32) ^ (w).v[1] ^ (ulong16)(k0);                                            \
        (w).v[1] = p1;                                                                               \
        (w).v[2] = (p0 >> 32) ^ (w).v[3] ^ (ulong16)(k1);                                            \
        (w).v[3] = p0;                                                                               \
    }
/* The key schedule, then a round of both chains: written out ten times, no loop (see above). */
#define XGPU_PHILOX32_NEXT(a, b, k0, k1)                                                             \
    k0 += 0x9E3779B9u;                                                                               \
    k1 += 0xBB67AE85u;                                                                               \
    XGPU_PHILOX16_ROUND(a, k0, k1)                                                                   \
    XGPU_PHILOX16_ROUND(b, k0, k1)

XGPU_DEVICE_FN xgpu_philox_block16 xgpu_philox16_counters(uint64_t b) {
    const ulong16 c = (ulong16)(b) + (ulong16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    xgpu_philox_block16 w;
    w.v[0] = c & XGPU_PHILOX16_LOW;
    w.v[1] = c >> 32;
    w.v[2] = (ulong16)(0);
    w.v[3] = (ulong16)(0);
    return w;
}

/* Blocks b .. b + 15 into *a and b + 16 .. b + 31 into *c: counters {low 32 bits, high 32 bits,
 * 0, 0}. */
XGPU_DEVICE_FN void xgpu_philox32_at(uint64_t b, uint32_t k0, uint32_t k1, xgpu_philox_block16* a,
                                     xgpu_philox_block16* c) {
    xgpu_philox_block16 x = xgpu_philox16_counters(b), y = xgpu_philox16_counters(b + 16);
    XGPU_PHILOX16_ROUND(x, k0, k1)
    XGPU_PHILOX16_ROUND(y, k0, k1)
    XGPU_PHILOX32_NEXT(x, y, k0, k1) XGPU_PHILOX32_NEXT(x, y, k0, k1) XGPU_PHILOX32_NEXT(x, y, k0, k1)
    XGPU_PHILOX32_NEXT(x, y, k0, k1) XGPU_PHILOX32_NEXT(x, y, k0, k1) XGPU_PHILOX32_NEXT(x, y, k0, k1)
    XGPU_PHILOX32_NEXT(x, y, k0, k1) XGPU_PHILOX32_NEXT(x, y, k0, k1) XGPU_PHILOX32_NEXT(x, y, k0, k1)
    *a = x;
    *c = y;
}

/* xgpu_philox_float and xgpu_philox_double of philox.h, lane by lane, on words as above. */
XGPU_DEVICE_FN float16 xgpu_philox16_float(ulong16 x) {
    return convert_float16((x & XGPU_PHILOX16_LOW) >> 8) * 5.9604644775390625e-08f;
}
#ifdef XGPU_HAS_FP64
XGPU_DEVICE_FN double16 xgpu_philox16_double(ulong16 a, ulong16 b) {
    return convert_double16((((a & XGPU_PHILOX16_LOW) << 32) | (b & XGPU_PHILOX16_LOW)) >> 11) *
           1.1102230246251565404236316680908203125e-16;
}
#endif

#endif
