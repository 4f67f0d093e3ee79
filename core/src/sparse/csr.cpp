// Csr<T, I>: CSR arrays on a context. Checked on the host before any upload; the row statistics
// and the diagonal are computed in the same pass (detail::check_csr, over the host's threads), so
// later format choices read them without touching the device.
#include "build.hpp"
#include "layout.hpp"

namespace xgpu::sparse {

template <Value T, Index I>
Csr<T, I>::Csr(const Context& ctx, const HostCsr<T, I>& host)
    : Csr(ctx, host.rows, host.cols, host.row_ptr, host.col_idx, host.values) {}

template <Value T, Index I>
Csr<T, I>::Csr(const Context& ctx, std::int64_t rows, std::int64_t cols, std::span<const I> row_ptr,
               std::span<const I> col_idx, std::span<const T> values) {
    RowStats stats;
    std::vector<T> diagonal;
    detail::check_csr<T, I>(rows, cols, row_ptr, col_idx, values.size(), values.data(), &stats, &diagonal);
    ctx_ = ctx;
    rows_ = rows;
    cols_ = cols;
    stats_ = stats;
    row_ptr_ = to_device<I>(ctx, row_ptr);
    col_idx_ = to_device<I>(ctx, col_idx);
    values_ = to_device<T>(ctx, values);
    diagonal_ = to_device<T>(ctx, diagonal);
    layouts_ = std::make_shared<detail::LayoutCache>();
}

template <Value T, Index I> std::optional<double> Csr<T, I>::build_ms(Format f) const {
    return layouts_ ? layouts_->build_ms(f) : std::nullopt;
}

template <Value T, Index I> HostCsr<T, I> Csr<T, I>::to_host() const {
    HostCsr<T, I> h;
    h.rows = rows_;
    h.cols = cols_;
    if (!row_ptr_.empty()) h.row_ptr = row_ptr_.get();
    if (!col_idx_.empty()) h.col_idx = col_idx_.get();
    if (!values_.empty()) h.values = values_.get();
    return h;
}

template <Value T, Index I> std::string Csr<T, I>::asymmetry(double rtol) const {
    return sparse::asymmetry(to_host(), rtol);
}

#define XGPU_SPARSE_INSTANTIATE(T, I) template class Csr<T, I>;
XGPU_SPARSE_TEMPLATES(XGPU_SPARSE_INSTANTIATE)
#undef XGPU_SPARSE_INSTANTIATE

} // namespace xgpu::sparse
