// The reference triangle of nodal DG (Hesthaven and Warburton, "Nodal Discontinuous Galerkin
// Methods", 2008, chapters 3 and 6): Warp & Blend nodes of order N on {(r, s): r, s >= -1,
// r + s <= 0}, the orthonormal (Dubiner) basis, and the operators built from its Vandermonde
// matrix: differentiation Dr, Ds, the surface lift LIFT and the mass matrix. All in double, on
// the host; dense matrices row-major.
#pragma once

#include <array>
#include <vector>

namespace dg {

// A dense row-major matrix.
struct Matrix {
    int rows = 0, cols = 0;
    std::vector<double> a;
    Matrix() = default;
    Matrix(int r, int c) : rows(r), cols(c), a(std::size_t(r) * c, 0.0) {}
    double& operator()(int i, int j) { return a[std::size_t(i) * cols + j]; }
    double operator()(int i, int j) const { return a[std::size_t(i) * cols + j]; }
};

Matrix transpose(const Matrix& x);

// The n + 1 Legendre-Gauss nodes on [-1, 1], ascending.
std::vector<double> gauss_nodes(int n);

// The highest order the example supports (the Warp & Blend alpha table and the kernels' sizes).
inline constexpr int max_order = 8;
inline constexpr int faces = 3;

struct ReferenceElement {
    int order = 0, np = 0, nfp = 0;            // N, (N+1)(N+2)/2 nodes, N+1 nodes per face
    std::vector<double> r, s;                  // the nodes
    std::array<std::vector<int>, faces> fmask; // the nodes on faces s = -1, r + s = 0, r = -1
    Matrix v, dr, ds, lift, mass;              // Vandermonde (np x np), Dr, Ds (np x np), LIFT (np x 3 nfp), M
};

// Throws std::invalid_argument for an order outside 1..max_order.
ReferenceElement make_reference_element(int order);

} // namespace dg
