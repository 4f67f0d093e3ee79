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

void host_rhs(const Discretization& d, const std::vector<double>& q, std::vector<double>& rhs) {
    const auto& ref = d.ref;
    const auto& mesh = d.mesh;
    const int np = ref.np, nfp = ref.nfp, nf = faces * nfp;
    const std::size_t n = d.nodes();
    if (q.size() != fields * n)
        throw std::invalid_argument("dg::host_rhs: the state holds " + std::to_string(q.size()) + " values, not " +
                                    std::to_string(fields * n));
    rhs.assign(fields * n, 0.0);
    std::vector<double> flux(std::size_t(fields) * nf);
    for (int e = 0; e < mesh.k; ++e) {
        const std::size_t base = std::size_t(e) * np;
        const double rx = mesh.rx[e], sx = mesh.sx[e], ry = mesh.ry[e], sy = mesh.sy[e];
        // Volume: local derivatives, then the chain rule.
        for (int i = 0; i < np; ++i) {
            double dr[fields] = {}, ds[fields] = {}; // Dr and Ds of Hx, Hy, Ez at node i
            for (int j = 0; j < np; ++j)
                for (int c = 0; c < fields; ++c) {
                    dr[c] += ref.dr(i, j) * q[c * n + base + j];
                    ds[c] += ref.ds(i, j) * q[c * n + base + j];
                }
            rhs[hx * n + base + i] = -(ry * dr[ez] + sy * ds[ez]);
            rhs[hy * n + base + i] = rx * dr[ez] + sx * ds[ez];
            rhs[ez * n + base + i] = (rx * dr[hy] + sx * ds[hy]) - (ry * dr[hx] + sy * ds[hx]);
        }
        // Surface: jumps, upwind flux (alpha = 1), scaled by Fscale / 2.
        for (int j = 0; j < nf; ++j) {
            const std::size_t f = std::size_t(e) * faces + j / nfp, id = std::size_t(e) * nf + j;
            const std::size_t m = mesh.vmap_m[id], p = mesh.vmap_p[id];
            double dhx = 0, dhy = 0, dez = 2 * q[ez * n + m]; // PEC: H+ = H-, Ez+ = -Ez-
            if (m != p) {
                dhx = q[hx * n + m] - q[hx * n + p];
                dhy = q[hy * n + m] - q[hy * n + p];
                dez = q[ez * n + m] - q[ez * n + p];
            }
            const double nx = mesh.nx[f], ny = mesh.ny[f], fs = 0.5 * mesh.fscale[f];
            const double ndh = nx * dhx + ny * dhy;
            flux[j] = fs * (ny * dez + ndh * nx - dhx);
            flux[nf + j] = fs * (-nx * dez + ndh * ny - dhy);
            flux[2 * nf + j] = fs * (-nx * dhy + ny * dhx - dez);
        }
        for (int i = 0; i < np; ++i)
            for (int c = 0; c < fields; ++c) {
                double acc = 0;
                for (int j = 0; j < nf; ++j)
                    acc += ref.lift(i, j) * flux[c * nf + j];
                rhs[c * n + base + i] += acc;
            }
    }
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

namespace {

// sum over fields and elements of J a^T M b.
double mass_product(const Discretization& d, const std::vector<double>& a, const std::vector<double>& b) {
    const int np = d.ref.np;
    const std::size_t n = d.nodes();
    double total = 0;
    for (int c = 0; c < fields; ++c)
        for (int e = 0; e < d.mesh.k; ++e) {
            const std::size_t base = c * n + std::size_t(e) * np;
            double s = 0;
            for (int i = 0; i < np; ++i) {
                double mb = 0;
                for (int j = 0; j < np; ++j)
                    mb += d.ref.mass(i, j) * b[base + j];
                s += a[base + i] * mb;
            }
            total += d.mesh.jac[e] * s;
        }
    return total;
}

} // namespace

double l2_difference(const Discretization& d, const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size() || a.size() != fields * d.nodes())
        throw std::invalid_argument("dg::l2_difference: states of " + std::to_string(a.size()) + " and " +
                                    std::to_string(b.size()) + " values");
    std::vector<double> e(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        e[i] = a[i] - b[i];
    return std::sqrt(std::max(0.0, mass_product(d, e, e)));
}

double energy(const Discretization& d, const std::vector<double>& q) {
    return 0.5 * mass_product(d, q, q);
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

void host_integrate(const Discretization& d, std::vector<double>& q, double dt, long steps) {
    std::vector<double> res(q.size(), 0.0), rhs;
    for (long step = 0; step < steps; ++step) {
        for (int stage = 0; stage < 5; ++stage) {
            host_rhs(d, q, rhs);
            for (std::size_t i = 0; i < q.size(); ++i) {
                res[i] = rk4a[stage] * res[i] + dt * rhs[i];
                q[i] += rk4b[stage] * res[i];
            }
        }
    }
}

} // namespace dg
