#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <tuple>

namespace dg {

Matrix transpose(const Matrix& x) {
    Matrix t(x.cols, x.rows);
    for (int i = 0; i < x.rows; ++i)
        for (int j = 0; j < x.cols; ++j)
            t(j, i) = x(i, j);
    return t;
}

namespace {

Matrix multiply(const Matrix& x, const Matrix& y) {
    Matrix z(x.rows, y.cols);
    for (int i = 0; i < x.rows; ++i)
        for (int k = 0; k < x.cols; ++k)
            for (int j = 0; j < y.cols; ++j)
                z(i, j) += x(i, k) * y(k, j);
    return z;
}

// Gauss-Jordan with partial pivoting.
Matrix inverse(const Matrix& x) {
    const int n = x.rows;
    Matrix a = x, b(n, n);
    for (int i = 0; i < n; ++i)
        b(i, i) = 1;
    for (int c = 0; c < n; ++c) {
        int p = c;
        for (int i = c + 1; i < n; ++i)
            if (std::abs(a(i, c)) > std::abs(a(p, c))) p = i;
        if (a(p, c) == 0) throw std::runtime_error("dg::inverse: singular matrix");
        for (int j = 0; j < n; ++j) {
            std::swap(a(c, j), a(p, j));
            std::swap(b(c, j), b(p, j));
        }
        const double d = 1 / a(c, c);
        for (int j = 0; j < n; ++j) {
            a(c, j) *= d;
            b(c, j) *= d;
        }
        for (int i = 0; i < n; ++i) {
            if (i == c || a(i, c) == 0) continue;
            const double f = a(i, c);
            for (int j = 0; j < n; ++j) {
                a(i, j) -= f * a(c, j);
                b(i, j) -= f * b(c, j);
            }
        }
    }
    return b;
}

// The orthonormal Jacobi polynomial P_n^(alpha, beta) at x, and its derivative.
double jacobi_p(double x, double alpha, double beta, int n) {
    const double ab = alpha + beta;
    const double gamma0 =
        std::pow(2.0, ab + 1) / (ab + 1) * std::tgamma(alpha + 1) * std::tgamma(beta + 1) / std::tgamma(ab + 1);
    double p0 = 1 / std::sqrt(gamma0);
    if (n == 0) return p0;
    const double gamma1 = (alpha + 1) * (beta + 1) / (ab + 3) * gamma0;
    double p1 = ((ab + 2) * x / 2 + (alpha - beta) / 2) / std::sqrt(gamma1);
    double a_old = 2 / (2 + ab) * std::sqrt((alpha + 1) * (beta + 1) / (ab + 3));
    for (int i = 1; i < n; ++i) {
        const double h1 = 2 * i + ab;
        const double a_new =
            2 / (h1 + 2) * std::sqrt((i + 1) * (i + 1 + ab) * (i + 1 + alpha) * (i + 1 + beta) / (h1 + 1) / (h1 + 3));
        const double b_new = -(alpha * alpha - beta * beta) / h1 / (h1 + 2);
        const double p2 = (-a_old * p0 + (x - b_new) * p1) / a_new;
        p0 = p1;
        p1 = p2;
        a_old = a_new;
    }
    return p1;
}

double grad_jacobi_p(double x, double alpha, double beta, int n) {
    if (n == 0) return 0;
    return std::sqrt(n * (n + alpha + beta + 1)) * jacobi_p(x, alpha + 1, beta + 1, n - 1);
}

// Legendre P_n and P_{n-1} at x by the three-term recurrence (unnormalised).
std::pair<double, double> legendre(int n, double x) {
    double p0 = 1, p1 = x;
    if (n == 0) return {1, 0};
    for (int k = 1; k < n; ++k) {
        const double p2 = ((2 * k + 1) * x * p1 - k * p0) / (k + 1);
        p0 = p1;
        p1 = p2;
    }
    return {p1, p0};
}

// Newton's method from x: x -= step(x) until a step is below 1e-16 (at most 100 steps).
template <class Step> double newton(double x, Step step) {
    for (int it = 0; it < 100; ++it) {
        const double dx = step(x);
        x -= dx;
        if (std::abs(dx) < 1e-16) break;
    }
    return x;
}

// The n + 1 Legendre-Gauss-Lobatto nodes on [-1, 1], ascending: the ends, and between them Newton
// on (1 - x^2) P_n'(x) = n (P_{n-1} - x P_n) from the Chebyshev-Gauss-Lobatto nodes.
std::vector<double> gauss_lobatto_nodes(int n) {
    std::vector<double> x(n + 1);
    x[0] = -1;
    x[n] = 1;
    for (int i = 1; i < n; ++i)
        x[i] = newton(-std::cos(std::numbers::pi * i / n), [n](double xi) {
            const auto [pn, pm] = legendre(n, xi);
            return (xi * pn - pm) / ((n + 1) * pn);
        });
    return x;
}

// The warp of the equidistant nodes towards the Gauss-Lobatto ones along one edge, divided by the
// edge blend 1 - r^2 (book section 6.1): sum_i l_i(r) (r_i^LGL - r_i^eq) / (1 - r^2), l_i the
// equidistant Lagrange basis.
double warp_factor(int n, double r, const std::vector<double>& lgl) {
    double warp = 0;
    for (int i = 0; i <= n; ++i) {
        const double ri = -1 + 2.0 * i / n;
        double li = 1;
        for (int j = 0; j <= n; ++j)
            if (j != i) li *= (r - (-1 + 2.0 * j / n)) / (ri - (-1 + 2.0 * j / n));
        warp += li * (lgl[i] - ri);
    }
    return std::abs(r) < 1 - 1e-10 ? warp / (1 - r * r) : 0;
}

// The gradient in r, s of the orthonormal basis function (i, j) on the triangle at collapsed (a, b).
std::pair<double, double> grad_simplex_p(double a, double b, int id, int jd) {
    const double fa = jacobi_p(a, 0, 0, id), dfa = grad_jacobi_p(a, 0, 0, id);
    const double gb = jacobi_p(b, 2 * id + 1, 0, jd), dgb = grad_jacobi_p(b, 2 * id + 1, 0, jd);
    double dr = dfa * gb, ds = dfa * (gb * (0.5 * (1 + a)));
    if (id > 0) {
        dr *= std::pow(0.5 * (1 - b), id - 1);
        ds *= std::pow(0.5 * (1 - b), id - 1);
    }
    double tmp = dgb * std::pow(0.5 * (1 - b), id);
    if (id > 0) tmp -= 0.5 * id * gb * std::pow(0.5 * (1 - b), id - 1);
    ds += fa * tmp;
    const double scale = std::pow(2.0, id + 0.5);
    return {dr * scale, ds * scale};
}

} // namespace

std::vector<double> gauss_nodes(int n) {
    const int m = n + 1; // the roots of P_m, by Newton (step P_m / P_m') from their asymptotic positions
    std::vector<double> x(m);
    for (int i = 0; i < m; ++i)
        x[i] = newton(-std::cos(std::numbers::pi * (i + 0.75) / (m + 0.5)), [m](double xi) {
            const auto [pm, pm1] = legendre(m, xi);
            return pm / (m * (xi * pm - pm1) / (xi * xi - 1));
        });
    std::sort(x.begin(), x.end());
    return x;
}

ReferenceElement make_reference_element(int order) {
    if (order < 1 || order > max_order)
        throw std::invalid_argument("dg: order " + std::to_string(order) + " is outside 1.." +
                                    std::to_string(max_order));
    ReferenceElement e;
    const int n = e.order = order;
    e.np = (n + 1) * (n + 2) / 2;
    e.nfp = n + 1;
    // Warp & Blend nodes (book section 6.1), alpha optimised per order.
    static constexpr double alpha_opt[] = {0, 0, 1.4152, 0.1001, 0.2751, 0.9800, 1.0999, 1.2832, 1.3648};
    const double alpha = alpha_opt[n];
    const auto lgl = gauss_lobatto_nodes(n);
    const double sqrt3 = std::sqrt(3.0), pi = std::numbers::pi;
    for (int i = 0; i <= n; ++i)
        for (int j = 0; j <= n - i; ++j) {
            const double l1 = double(i) / n, l3 = double(j) / n, l2 = 1 - l1 - l3;
            double x = -l2 + l3, y = (-l2 - l3 + 2 * l1) / sqrt3;
            const double w1 = 4 * l2 * l3 * warp_factor(n, l3 - l2, lgl) * (1 + (alpha * l1) * (alpha * l1));
            const double w2 = 4 * l1 * l3 * warp_factor(n, l1 - l3, lgl) * (1 + (alpha * l2) * (alpha * l2));
            const double w3 = 4 * l1 * l2 * warp_factor(n, l2 - l1, lgl) * (1 + (alpha * l3) * (alpha * l3));
            x += w1 + std::cos(2 * pi / 3) * w2 + std::cos(4 * pi / 3) * w3;
            y += std::sin(2 * pi / 3) * w2 + std::sin(4 * pi / 3) * w3;
            // Equilateral (x, y) -> (r, s).
            const double b1 = (sqrt3 * y + 1) / 3, b2 = (-3 * x - sqrt3 * y + 2) / 6, b3 = (3 * x - sqrt3 * y + 2) / 6;
            e.r.push_back(-b2 + b3 - b1);
            e.s.push_back(-b2 - b3 + b1);
        }
    for (int i = 0; i < e.np; ++i) {
        const double r = e.r[i], s = e.s[i], tol = 1e-7;
        if (std::abs(s + 1) < tol) e.fmask[0].push_back(i);
        if (std::abs(r + s) < tol) e.fmask[1].push_back(i);
        if (std::abs(r + 1) < tol) e.fmask[2].push_back(i);
    }
    // Vandermonde matrices: V(i, mode) = psi_mode(r_i, s_i), the orthonormal basis function
    // psi_(i, j) at the node's collapsed coordinates (a, b); Vr, Vs its derivatives.
    Matrix vr(e.np, e.np), vs(e.np, e.np);
    e.v = vr;
    for (int p = 0; p < e.np; ++p) {
        const double a = e.s[p] != 1 ? 2 * (1 + e.r[p]) / (1 - e.s[p]) - 1 : -1, b = e.s[p];
        int mode = 0;
        for (int i = 0; i <= n; ++i)
            for (int j = 0; j <= n - i; ++j, ++mode) {
                e.v(p, mode) =
                    std::sqrt(2.0) * jacobi_p(a, 0, 0, i) * jacobi_p(b, 2 * i + 1, 0, j) * std::pow(1 - b, i);
                std::tie(vr(p, mode), vs(p, mode)) = grad_simplex_p(a, b, i, j);
            }
    }
    const Matrix vinv = inverse(e.v);
    e.dr = multiply(vr, vinv);
    e.ds = multiply(vs, vinv);
    e.mass = inverse(multiply(e.v, transpose(e.v)));
    // LIFT = V V^T E, E holding each face's 1-D mass matrix on that face's nodes (book section 6.2).
    Matrix emat(e.np, faces * e.nfp);
    for (int f = 0; f < faces; ++f) {
        Matrix v1(e.nfp, e.nfp);
        for (int i = 0; i < e.nfp; ++i) {
            const int node = e.fmask[f][i];
            for (int m = 0; m < e.nfp; ++m)
                v1(i, m) = jacobi_p(f == 2 ? e.s[node] : e.r[node], 0, 0, m);
        }
        const Matrix m1 = inverse(multiply(v1, transpose(v1)));
        for (int i = 0; i < e.nfp; ++i)
            for (int j = 0; j < e.nfp; ++j)
                emat(e.fmask[f][i], f * e.nfp + j) = m1(i, j);
    }
    e.lift = multiply(e.v, multiply(transpose(e.v), emat));
    return e;
}

} // namespace dg
