/* Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel random
 * numbers: as easy as 1, 2, 3" (SC'11), in the xgpu dialect, and the conversions from its 32-bit
 * words to numbers. The host twin is xgpu::philox4x32_10 (core/src/random/philox.cpp); the stream
 * both produce is defined in core/include/xgpu/random.hpp. Every conversion here is integer math
 * followed by at most one multiplication by a power of two (and, for ranges, one fused
 * multiply-add), so device and host give the same bits. */

typedef struct { uint32_t v[4]; } xgpu_philox_block;

/* The high and low halves of a 32x32-bit product. */
XGPU_DEVICE_FN uint32_t xgpu_philox_mulhilo(uint32_t a, uint32_t b, uint32_t* lo) {
    const uint64_t p = (uint64_t)a * (uint64_t)b;
    *lo = (uint32_t)p;
    return (uint32_t)(p >> 32);
}

/* One Philox S-box round on four words with the round key (k0, k1). */
XGPU_DEVICE_FN xgpu_philox_block xgpu_philox_round(xgpu_philox_block x, uint32_t k0, uint32_t k1) {
    uint32_t lo0, lo1;
    const uint32_t hi0 = xgpu_philox_mulhilo(0xD2511F53u, x.v[0], &lo0);
    const uint32_t hi1 = xgpu_philox_mulhilo(0xCD9E8D57u, x.v[2], &lo1);
    xgpu_philox_block y;
    y.v[0] = hi1 ^ x.v[1] ^ k0;
    y.v[1] = lo1;
    y.v[2] = hi0 ^ x.v[3] ^ k1;
    y.v[3] = lo0;
    return y;
}

/* Philox4x32 with 10 rounds: the key is bumped by the Weyl constants between rounds. */
XGPU_DEVICE_FN xgpu_philox_block xgpu_philox4x32_10(xgpu_philox_block x, uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; ++r) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        x = xgpu_philox_round(x, k0, k1);
    }
    return x;
}

/* The block at 64-bit index b of the stream: counter {low 32 bits, high 32 bits, 0, 0}. */
XGPU_DEVICE_FN xgpu_philox_block xgpu_philox_at(uint64_t b, uint32_t k0, uint32_t k1) {
    xgpu_philox_block c;
    c.v[0] = (uint32_t)b;
    c.v[1] = (uint32_t)(b >> 32);
    c.v[2] = 0;
    c.v[3] = 0;
    return xgpu_philox4x32_10(c, k0, k1);
}

/* Uniform floats: the top 24 bits of a word scaled by 2^-24, in [0, 1); the (0, 1] variant adds
 * one ulp first (the logarithm in Box-Muller needs a nonzero argument). */
XGPU_DEVICE_FN float xgpu_philox_float(uint32_t x) { return (float)(x >> 8) * 5.9604644775390625e-08f; }
XGPU_DEVICE_FN float xgpu_philox_float_nonzero(uint32_t x) { return (float)((x >> 8) + 1u) * 5.9604644775390625e-08f; }

#ifdef XGPU_HAS_FP64
/* Uniform doubles: the top 53 bits of the 64-bit word (a:b), a the high half, scaled by 2^-53. */
XGPU_DEVICE_FN double xgpu_philox_double(uint32_t a, uint32_t b) {
    return (double)((((uint64_t)a << 32) | b) >> 11) * 1.1102230246251565404236316680908203125e-16;
}
XGPU_DEVICE_FN double xgpu_philox_double_nonzero(uint32_t a, uint32_t b) {
    return (double)(((((uint64_t)a << 32) | b) >> 11) + 1u) * 1.1102230246251565404236316680908203125e-16;
}
#endif

/* The high 64 bits of a 64x64-bit product, from 32-bit pieces (no 128-bit type in the dialect). */
XGPU_DEVICE_FN uint64_t xgpu_philox_mulhi64(uint64_t a, uint64_t b) {
    const uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* An offset in [0, range) by multiply-shift: floor(x * range / 2^bits) for a random x of 32, 64
 * or 128 bits (words most significant first). range < 2^16, < 2^32 and < 2^64 respectively. */
XGPU_DEVICE_FN uint64_t xgpu_philox_bounded32(uint32_t x, uint64_t range) {
    return ((uint64_t)x * range) >> 32;
}
XGPU_DEVICE_FN uint64_t xgpu_philox_bounded64(uint32_t a, uint32_t b, uint64_t range) {
    /* (a 2^32 + b) range / 2^64 = (a range + (b range >> 32)) >> 32; the sum fits in 64 bits. */
    return ((uint64_t)a * range + (((uint64_t)b * range) >> 32)) >> 32;
}
XGPU_DEVICE_FN uint64_t xgpu_philox_bounded128(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint64_t range) {
    /* x = h 2^64 + l: x range / 2^128 = hi(h range) + carry out of lo(h range) + hi(l range). */
    const uint64_t h = ((uint64_t)a << 32) | b, l = ((uint64_t)c << 32) | d;
    const uint64_t lo = h * range, mid = xgpu_philox_mulhi64(l, range);
    return xgpu_philox_mulhi64(h, range) + (lo + mid < lo ? 1u : 0u);
}
