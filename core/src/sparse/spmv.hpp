// What the SpMV formats share: one checked product handed to a format's launcher, the kernel
// support text (kernels/spmv.h: types, operations on values, the store of a result), the
// work-group size and the launch grid. Each format's launcher lives in its own file (spmv.cpp:
// the CSR ones; merge.cpp, sell.cpp) and spmv.cpp dispatches on the plan's format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xgpu/codegen.hpp"
#include "xgpu/sparse.hpp"

namespace xgpu::sparse::detail {

// y = alpha * A * x + beta * y, everything checked: x and y contiguous, A with entries.
template <Value T, Index I> struct SpmvCall {
    const Csr<T, I>& a;
    const Array<T>& x;
    Array<T>& y;
    T alpha, beta;
    const SpmvPlan& plan;
};

// With `partial`: the fused dot product's kernel (FusedDotOperator in xgpu/operator.hpp).
template <Value T, Index I> void spmv_csr(const SpmvCall<T, I>& c, Array<T>* partial);
// spmv_rows (xgpu/sparse.hpp), checked.
template <Value T, Index I>
void spmv_csr_rows(const Csr<T, I>& a, const Array<I>& at, const Array<T>& x, Array<T>& y, T alpha, T beta,
                   const Array<T>* d, Array<T>* partial);
template <Value T, Index I> void spmv_merge(const SpmvCall<T, I>& c);
template <Value T, Index I> void spmv_sell(const SpmvCall<T, I>& c);

// The launch shapes the planner asks of the formats with their own files.
template <Value T, Index I> LaunchShape merge_shape(const Context& ctx); // the merge path's (merge.cpp)
// The bytes of local memory a staged merge-path tile of wg x items steps declares (merge.cpp).
std::size_t merge_tile_bytes(unsigned wg, unsigned items, std::size_t value_size);
void sell_shape(const Context& ctx, unsigned& chunk, unsigned& sigma);

// A's SELL-C-sigma arrays (sell.cpp) for C = chunk and sigma (a multiple of it), built on the
// device as a product in this format builds them, and downloaded: what tests compare with a
// layout built on the host.
template <Value T, Index I> struct SellArrays {
    std::vector<std::int64_t> chunk_ptr; // chunks + 1
    std::vector<I> len, perm;            // rows padded to whole chunks
    std::vector<I> col;
    std::vector<T> val;
};
template <Value T, Index I> SellArrays<T, I> sell_arrays(const Csr<T, I>& a, unsigned chunk, unsigned sigma);

// Element i of a device array, read by the host (a size or a count the device computed).
template <class E> E read_one(const Array<E>& a, std::size_t i) {
    E v{};
    a.context().current_queue().read(a.buffer(), &v, sizeof v, (std::size_t(a.offset()) + i) * sizeof(E));
    return v;
}

// kernels/spmv.h filled for T and I, for a skeleton's ${spmv_h} hook.
template <Value T, Index I> std::string spmv_support();
// "spmv_<family>|<T>|<I>": the start of a kernel key.
template <Value T, Index I> std::string spmv_key(const char* family);
// 256 work-items, or the device's limit where lower.
unsigned group_size(const Context& ctx);
// Launches: codegen::groups_grid (kernels/spmv.h's xgpu_group() flattens its 2-D rows).

} // namespace xgpu::sparse::detail
