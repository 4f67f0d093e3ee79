// 2-D transverse-magnetic Maxwell in the perfectly conducting square, discretised by nodal DG
// with the upwind flux (book section 6.5): the cavity mode and its exact solution, the L2 error in
// the DG mass norm, the time step and the five-stage low-storage RK4, on the host.
//
//   dHx/dt = -dEz/dy,  dHy/dt = dEz/dx,  dEz/dt = dHy/dx - dHx/dy
//   PEC walls: Ez = 0, imposed weakly by the mirror state Ez+ = -Ez-, H+ = H-.
//
// A state is one array of 3 K Np values: the blocks Hx, Hy, Ez, each element-major with the
// element's Np nodes contiguous (entry f K Np + e Np + i), the layout the device kernels use.
#pragma once

#include <vector>

#include "mesh.hpp"
#include "reference.hpp"

namespace dg {

enum Field { hx = 0, hy = 1, ez = 2 };
inline constexpr int fields = 3;

struct Discretization {
    ReferenceElement ref;
    Mesh mesh;
    std::size_t nodes() const { return std::size_t(mesh.k) * ref.np; } // per field
};

Discretization make_discretization(int order, int mesh_size, double perturb = 0, unsigned seed = 1);

// The cavity mode (m, n): Ez = sin(m pi x) sin(n pi y) cos(w t), Hx = -(n pi / w) sin(m pi x)
// cos(n pi y) sin(w t), Hy = (m pi / w) cos(m pi x) sin(n pi y) sin(w t), w = pi sqrt(m^2 + n^2).
std::vector<double> cavity_mode(const Discretization& d, int m, int n, double t);

// sqrt(sum over fields and elements of J e^T M e), e = a - b.
double l2_difference(const Discretization& d, const std::vector<double>& a, const std::vector<double>& b);

// The stable step of the book's Maxwell2D: dt = (2/3) * min over elements of the inscribed radius
// * the smallest spacing of the N+1 Gauss-Legendre nodes on [-1, 1]. Then shortened so that a
// whole number of steps reaches `final_time`: returns {dt, steps}.
struct Steps {
    double dt;
    long steps;
};
Steps time_steps(const Discretization& d, double final_time, double cfl = 1.0);

// The Carpenter-Kennedy five-stage, fourth-order low-storage Runge-Kutta coefficients:
// res = a_i res + dt L(q, t + c_i dt); q = q + b_i res.
inline constexpr double rk4a[5] = {0.0, -567301805773.0 / 1357537059087.0, -2404267990393.0 / 2016746695238.0,
                                   -3550918686646.0 / 2091501179385.0, -1275806237668.0 / 842570457699.0};
inline constexpr double rk4b[5] = {1432997174477.0 / 9575080441934.0, 5161836677717.0 / 13612068292357.0,
                                   1720146321549.0 / 2090206949498.0, 3134564353537.0 / 4481467310338.0,
                                   2277821191437.0 / 14882151754819.0};

} // namespace dg
