// The triangulation of the square [-1, 1]^2 and what nodal DG needs from it (book sections 6.2
// and 6.3): an M x M grid of squares, each cut into two counter-clockwise triangles (K = 2 M^2),
// interior vertices optionally moved at random by up to `perturb` times the grid spacing.
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
    std::vector<double> x, y;             // the nodes: node i of element e at e * np + i
    // Per element: rx, sx, ry, sy (constant on a straight-sided triangle), the Jacobian J and the
    // radius of the inscribed circle.
    std::vector<double> rx, sx, ry, sy, jac, inradius;
    // Per element face (e * 3 + f): outward unit normal and Fscale = face Jacobian / J.
    std::vector<double> nx, ny, fscale;
    // Per face node (e * 3 nfp + f nfp + i): the global volume node inside (vmapM) and outside
    // (vmapP; on the boundary the same as vmapM).
    std::vector<std::int32_t> vmap_m, vmap_p;
};

// Throws std::invalid_argument for m < 1 or perturb outside [0, 0.3) (past 0.3 a triangle can
// fold over). The perturbation is the same for the same (m, perturb, seed).
Mesh make_square_mesh(const ReferenceElement& ref, int m, double perturb = 0, unsigned seed = 1);

} // namespace dg
