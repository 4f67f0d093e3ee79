// The triangulation of the square [-1, 1]^2 and everything nodal DG needs from it (book sections
// 6.2 and 6.3): an M x M grid of squares, each cut into two counter-clockwise triangles (K = 2 M^2),
// interior vertices optionally moved at random by up to `perturb` times the grid spacing; the
// physical nodes, the per-element affine geometric factors, the outward face normals, and the
// maps from each face node to its own volume node (vmapM) and its neighbour's (vmapP; equal to
// vmapM on the boundary).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "reference.hpp"

namespace dg {

struct Mesh {
    int k = 0;                            // elements
    std::vector<double> vx, vy;           // vertices
    std::vector<std::array<int, 3>> etov; // element -> vertices, counter-clockwise
    // Node-major within an element: entry e * np + i is node i of element e.
    std::vector<double> x, y;
    // Per element: rx, sx, ry, sy (constant on a straight-sided triangle) and the Jacobian J.
    std::vector<double> rx, sx, ry, sy, jac;
    // Per element face (e * 3 + f): outward unit normal and Fscale = face Jacobian / J.
    std::vector<double> nx, ny, fscale;
    // Per face node (e * 3 nfp + f nfp + i): global volume node indices inside and outside.
    std::vector<std::int32_t> vmap_m, vmap_p;
    // Per element: the radius of the inscribed circle.
    std::vector<double> inradius;
};

// Throws std::invalid_argument for m < 1 or perturb outside [0, 0.3) (past 0.3 a triangle can
// fold over). The perturbation is the same for the same (m, perturb, seed).
Mesh make_square_mesh(const ReferenceElement& ref, int m, double perturb = 0, unsigned seed = 1);

} // namespace dg
