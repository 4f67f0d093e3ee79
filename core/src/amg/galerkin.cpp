// The Galerkin product: the next level's operator R A P (R = P^T), by the sparse layer's products;
// on refresh, the values on the kept pattern.
#include "hierarchy.hpp"

namespace xgpu::amg::detail {

template <class S>
sparse::Csr<S> galerkin(const sparse::Csr<S>& r, const sparse::Csr<S>& a, const sparse::Csr<S>& p,
                        const sparse::Csr<S>* pattern) {
    const sparse::Csr<S> ap = sparse::multiply(a, p);
    return pattern ? sparse::multiply_values(r, ap, *pattern) : sparse::multiply(r, ap);
}

template sparse::Csr<float> galerkin(const sparse::Csr<float>&, const sparse::Csr<float>&, const sparse::Csr<float>&,
                                     const sparse::Csr<float>*);
template sparse::Csr<double> galerkin(const sparse::Csr<double>&, const sparse::Csr<double>&,
                                      const sparse::Csr<double>&, const sparse::Csr<double>*);

} // namespace xgpu::amg::detail
