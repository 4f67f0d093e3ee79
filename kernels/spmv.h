/* xgpu SpMV support, shared by kernels/spmv_*.kernel (core/src/sparse/spmv.hpp fills it): the
   value and index types, the operations on values, a warp shuffle of a value where the dialect
   has them, the flattened work-group index and the store of one result. */
${array_h}
typedef ${value} T;
typedef ${index} I;
XGPU_DEVICE_FN T xgpu_zero(void) { return ${zero}; }
XGPU_DEVICE_FN T xgpu_add(T a, T b) { return ${add}; }
XGPU_DEVICE_FN T xgpu_mul(T a, T b) { return ${mul}; }
#ifdef XGPU_HAS_TYPED_SHUFFLE
/* v of the lane `o` above, a complex value as its two parts; an index of the lane ^ m. */
XGPU_DEVICE_FN T xgpu_shuffle_down(T v, uint32_t o) { return ${shuffle}; }
XGPU_DEVICE_FN I xgpu_index_shuffle_xor(I v, uint32_t m) { return XGPU_SHUFFLE_XOR_T(${index}, v, m); }
#endif

/* Launches past 2^30 work-items are 2-D (core/src/sparse/spmv.cpp): the group's index in both. */
XGPU_DEVICE_FN uint64_t xgpu_group(void) {
    return (uint64_t)XGPU_GROUP_ID(1) * XGPU_NUM_GROUPS(0) + XGPU_GROUP_ID(0);
}

/* y[i] = alpha * sum + beta * y[i]; with beta_zero y is not read (a NaN in it does not
   propagate), as BLAS. */
XGPU_DEVICE_FN void xgpu_store(XGPU_GLOBAL T* y, const int64_t i, const T alpha, const T sum, const T beta,
                               const uint32_t beta_zero) {
    T r = xgpu_mul(alpha, sum);
    if (!beta_zero) r = xgpu_add(r, xgpu_mul(beta, y[i]));
    y[i] = r;
}
