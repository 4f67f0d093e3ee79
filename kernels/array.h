/* xgpu array support, in the dialect: the complex types and integer helpers that generated
 * array kernels use. Prepended (after the preamble) to every generated elementwise kernel. */

/* Infinity as float and double (the dialect has OpenCL C's INFINITY on both backends). */
#define XGPU_INFINITY_F INFINITY
#define XGPU_INFINITY_D ((double)INFINITY)

/* The complex types, declared once for float and double (PyOpenCL's pyopencl-complex.h idea):
 * C##_make, _add, _sub, _mul, _div (Smith's algorithm: no overflow for large |b|, as numpy),
 * _neg, _conj, _abs. */
#define XGPU_DECLARE_COMPLEX(C, T)                                                                    \
    typedef struct { T re, im; } C;                                                                   \
    XGPU_DEVICE_FN C C##_make(T re, T im) { C z; z.re = re; z.im = im; return z; }                    \
    XGPU_DEVICE_FN C C##_add(C a, C b) { return C##_make(a.re + b.re, a.im + b.im); }                 \
    XGPU_DEVICE_FN C C##_sub(C a, C b) { return C##_make(a.re - b.re, a.im - b.im); }                 \
    XGPU_DEVICE_FN C C##_mul(C a, C b) {                                                              \
        return C##_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);                        \
    }                                                                                                 \
    XGPU_DEVICE_FN C C##_div(C a, C b) {                                                              \
        if (fabs(b.re) >= fabs(b.im)) {                                                               \
            if (b.re == (T)0 && b.im == (T)0) return C##_make(a.re / fabs(b.re), a.im / fabs(b.im)); \
            const T r = b.im / b.re, d = b.re + b.im * r;                                             \
            return C##_make((a.re + a.im * r) / d, (a.im - a.re * r) / d);                            \
        }                                                                                             \
        const T r = b.re / b.im, d = b.re * r + b.im;                                                 \
        return C##_make((a.re * r + a.im) / d, (a.im * r - a.re) / d);                                \
    }                                                                                                 \
    XGPU_DEVICE_FN C C##_neg(C a) { return C##_make(-a.re, -a.im); }                                  \
    XGPU_DEVICE_FN C C##_conj(C a) { return C##_make(a.re, -a.im); }                                  \
    XGPU_DEVICE_FN T C##_abs(C a) { return hypot(a.re, a.im); }

XGPU_DECLARE_COMPLEX(xgpu_cfloat, float)
#ifdef XGPU_HAS_FP64
XGPU_DECLARE_COMPLEX(xgpu_cdouble, double)
#endif

/* Integer powers by squaring, wrapping as numpy's (computed unsigned: signed overflow is undefined
 * in C). A negative exponent gives 0 unless the base is 1 or -1; numpy raises instead, which a
 * kernel cannot (a negative host-scalar exponent is refused before launch). */
XGPU_DEVICE_FN int64_t xgpu_ipow(int64_t b, int64_t e) {
    if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0);
    uint64_t r = 1, x = (uint64_t)b;
    while (e) {
        if (e & 1) r *= x;
        x *= x;
        e >>= 1;
    }
    return (int64_t)r;
}
XGPU_DEVICE_FN uint64_t xgpu_upow(uint64_t b, uint64_t e) {
    uint64_t r = 1;
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return r;
}
