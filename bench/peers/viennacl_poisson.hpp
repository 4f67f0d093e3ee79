// The ViennaCL peers' matrix: the 2-D 5-point Laplacian on an n x n grid (Dirichlet boundary),
// rows in natural order, the same matrix as spmv-bench's and examples/poisson's.
#pragma once

#include <cstddef>
#include <vector>

#include <viennacl/compressed_matrix.hpp>

inline viennacl::compressed_matrix<double> viennacl_poisson(long n) {
    std::vector<unsigned> row_ptr(1, 0), col;
    std::vector<double> val;
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) {
            const long r = i * n + j;
            auto put = [&](long c, double v) {
                col.push_back(unsigned(c));
                val.push_back(v);
            };
            if (i > 0) put(r - n, -1);
            if (j > 0) put(r - 1, -1);
            put(r, 4);
            if (j + 1 < n) put(r + 1, -1);
            if (i + 1 < n) put(r + n, -1);
            row_ptr.push_back(unsigned(col.size()));
        }
    const std::size_t m = std::size_t(n * n);
    viennacl::compressed_matrix<double> a(m, m);
    a.set(row_ptr.data(), col.data(), val.data(), m, m, val.size());
    return a;
}
