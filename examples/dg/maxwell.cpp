#include "maxwell.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace dg {

Discretization make_discretization(int order, int mesh_size, double perturb, unsigned seed) {
    Discretization d;
    d.ref = make_reference_element(order);
    d.mesh = make_square_mesh(d.ref, mesh_size, perturb, seed);
    return d;
}

std::vector<double> cavity_mode(const Discretization& d, int m, int n, double t) {
    if (m < 1 || n < 1)
        throw std::invalid_argument("dg: cavity mode (" + std::to_string(m) + ", " + std::to_string(n) +
                                    ") needs both numbers >= 1");
    const double pi = std::numbers::pi, w = pi * std::sqrt(double(m * m + n * n));
    const std::size_t nodes = d.nodes();
    std::vector<double> q(fields * nodes);
    for (std::size_t i = 0; i < nodes; ++i) {
        const double x = d.mesh.x[i], y = d.mesh.y[i];
        q[hx * nodes + i] = -(n * pi / w) * std::sin(m * pi * x) * std::cos(n * pi * y) * std::sin(w * t);
        q[hy * nodes + i] = (m * pi / w) * std::cos(m * pi * x) * std::sin(n * pi * y) * std::sin(w * t);
        q[ez * nodes + i] = std::sin(m * pi * x) * std::sin(n * pi * y) * std::cos(w * t);
    }
    return q;
}

double l2_difference(const Discretization& d, const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size() || a.size() != fields * d.nodes())
        throw std::invalid_argument("dg::l2_difference: states of " + std::to_string(a.size()) + " and " +
                                    std::to_string(b.size()) + " values");
    const int np = d.ref.np;
    const std::size_t n = d.nodes();
    double total = 0; // sum over fields and elements of J e^T M e
    for (int c = 0; c < fields; ++c)
        for (int e = 0; e < d.mesh.k; ++e) {
            const std::size_t base = c * n + std::size_t(e) * np;
            double s = 0;
            for (int i = 0; i < np; ++i) {
                double me = 0;
                for (int j = 0; j < np; ++j)
                    me += d.ref.mass(i, j) * (a[base + j] - b[base + j]);
                s += (a[base + i] - b[base + i]) * me;
            }
            total += d.mesh.jac[e] * s;
        }
    return std::sqrt(std::max(0.0, total));
}

Steps time_steps(const Discretization& d, double final_time, double cfl) {
    if (!(final_time > 0)) throw std::invalid_argument("dg: final time " + std::to_string(final_time) + " <= 0");
    if (!(cfl > 0)) throw std::invalid_argument("dg: CFL " + std::to_string(cfl) + " <= 0");
    const auto g = gauss_nodes(d.ref.order);
    const double rmin = g[1] - g[0];
    const double rin = *std::min_element(d.mesh.inradius.begin(), d.mesh.inradius.end());
    const double dt0 = cfl * (2.0 / 3.0) * rin * rmin;
    const long steps = long(std::ceil(final_time / dt0));
    return {final_time / double(steps), steps};
}

} // namespace dg
