/* xgpu array support, in the dialect: the complex types and integer helpers that generated
 * array kernels use. Prepended (after the preamble) to every generated elementwise kernel. */

/* Infinity in both dialects (NVRTC has no INFINITY macro without headers). */
#ifdef XGPU_BACKEND_CUDA
#define XGPU_INFINITY_F __int_as_float(0x7f800000)
#define XGPU_INFINITY_D __longlong_as_double(0x7ff0000000000000LL)
#else
#define XGPU_INFINITY_F INFINITY
#define XGPU_INFINITY_D ((double)INFINITY)
#endif

typedef struct { float re, im; } xgpu_cfloat;

XGPU_DEVICE_FN xgpu_cfloat xgpu_cfloat_make(float re, float im) { xgpu_cfloat z; z.re = re; z.im = im; return z; }
XGPU_DEVICE_FN xgpu_cfloat xgpu_cfloat_add(xgpu_cfloat a, xgpu_cfloat b) { return xgpu_cfloat_make(a.re + b.re, a.im + b.im); }
XGPU_DEVICE_FN xgpu_cfloat xgpu_cfloat_sub(xgpu_cfloat a, xgpu_cfloat b) { return xgpu_cfloat_make(a.re - b.re, a.im - b.im); }
XGPU_DEVICE_FN xgpu_cfloat xgpu_cfloat_mul(xgpu_cfloat a, xgpu_cfloat b) {
    return xgpu_cfloat_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
/* Smith's algorithm: no overflow for large |b|, as numpy. */
XGPU_DEVICE_FN xgpu_cfloat xgpu_cfloat_div(xgpu_cfloat a, xgpu_cfloat b) {
    if (fabs(b.re) >= fabs(b.im)) {
        if (b.re == 0.0f && b.im == 0.0f) return xgpu_cfloat_make(a.re / fabs(b.re), a.im / fabs(b.im));
        const float r = b.im / b.re, d = b.re + b.im * r;
        return xgpu_cfloat_make((a.re + a.im * r) / d, (a.im - a.re * r) / d);
    }
    const float r = b.re / b.im, d = b.re * r + b.im;
    return xgpu_cfloat_make((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
XGPU_DEVICE_FN xgpu_cfloat xgpu_cfloat_neg(xgpu_cfloat a) { return xgpu_cfloat_make(-a.re, -a.im); }
XGPU_DEVICE_FN xgpu_cfloat xgpu_cfloat_conj(xgpu_cfloat a) { return xgpu_cfloat_make(a.re, -a.im); }
XGPU_DEVICE_FN float xgpu_cfloat_abs(xgpu_cfloat a) { return hypot(a.re, a.im); }

#ifdef XGPU_HAS_FP64
typedef struct { double re, im; } xgpu_cdouble;

XGPU_DEVICE_FN xgpu_cdouble xgpu_cdouble_make(double re, double im) { xgpu_cdouble z; z.re = re; z.im = im; return z; }
XGPU_DEVICE_FN xgpu_cdouble xgpu_cdouble_add(xgpu_cdouble a, xgpu_cdouble b) { return xgpu_cdouble_make(a.re + b.re, a.im + b.im); }
XGPU_DEVICE_FN xgpu_cdouble xgpu_cdouble_sub(xgpu_cdouble a, xgpu_cdouble b) { return xgpu_cdouble_make(a.re - b.re, a.im - b.im); }
XGPU_DEVICE_FN xgpu_cdouble xgpu_cdouble_mul(xgpu_cdouble a, xgpu_cdouble b) {
    return xgpu_cdouble_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
XGPU_DEVICE_FN xgpu_cdouble xgpu_cdouble_div(xgpu_cdouble a, xgpu_cdouble b) {
    if (fabs(b.re) >= fabs(b.im)) {
        if (b.re == 0.0 && b.im == 0.0) return xgpu_cdouble_make(a.re / fabs(b.re), a.im / fabs(b.im));
        const double r = b.im / b.re, d = b.re + b.im * r;
        return xgpu_cdouble_make((a.re + a.im * r) / d, (a.im - a.re * r) / d);
    }
    const double r = b.re / b.im, d = b.re * r + b.im;
    return xgpu_cdouble_make((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
XGPU_DEVICE_FN xgpu_cdouble xgpu_cdouble_neg(xgpu_cdouble a) { return xgpu_cdouble_make(-a.re, -a.im); }
XGPU_DEVICE_FN xgpu_cdouble xgpu_cdouble_conj(xgpu_cdouble a) { return xgpu_cdouble_make(a.re, -a.im); }
XGPU_DEVICE_FN double xgpu_cdouble_abs(xgpu_cdouble a) { return hypot(a.re, a.im); }
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
