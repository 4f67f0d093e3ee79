#include "mesh.hpp"

#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace dg {

Mesh make_square_mesh(const ReferenceElement& ref, int m, double perturb, unsigned seed) {
    if (m < 1) throw std::invalid_argument("dg: mesh size " + std::to_string(m) + " < 1");
    if (!(perturb >= 0 && perturb < 0.3))
        throw std::invalid_argument("dg: perturbation " + std::to_string(perturb) + " is outside [0, 0.3)");
    Mesh mesh;
    const double h = 2.0 / m;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int j = 0; j <= m; ++j)
        for (int i = 0; i <= m; ++i) {
            double x = -1 + i * h, y = -1 + j * h;
            const double dx = u(rng), dy = u(rng); // drawn for every vertex: the pattern does not depend on m's parity
            if (i > 0 && i < m && j > 0 && j < m) {
                x += perturb * h * dx;
                y += perturb * h * dy;
            }
            mesh.vx.push_back(x);
            mesh.vy.push_back(y);
        }
    const auto vid = [m](int i, int j) { return j * (m + 1) + i; };
    for (int j = 0; j < m; ++j)
        for (int i = 0; i < m; ++i) {
            // Alternate the diagonal so the mesh has no preferred direction.
            if ((i + j) % 2 == 0) {
                mesh.etov.push_back({vid(i, j), vid(i + 1, j), vid(i + 1, j + 1)});
                mesh.etov.push_back({vid(i, j), vid(i + 1, j + 1), vid(i, j + 1)});
            } else {
                mesh.etov.push_back({vid(i, j), vid(i + 1, j), vid(i, j + 1)});
                mesh.etov.push_back({vid(i + 1, j), vid(i + 1, j + 1), vid(i, j + 1)});
            }
        }
    const int k = mesh.k = int(mesh.etov.size());
    const int np = ref.np, nfp = ref.nfp;
    const auto node = [&](int e, int f, int i) { return e * np + ref.fmask[f][i]; }; // node i of face f
    for (int e = 0; e < k; ++e) {
        const auto [a, b, c] = mesh.etov[e];
        const double x1 = mesh.vx[a], x2 = mesh.vx[b], x3 = mesh.vx[c];
        const double y1 = mesh.vy[a], y2 = mesh.vy[b], y3 = mesh.vy[c];
        for (int i = 0; i < np; ++i) {
            const double r = ref.r[i], s = ref.s[i];
            mesh.x.push_back(0.5 * (-(r + s) * x1 + (1 + r) * x2 + (1 + s) * x3));
            mesh.y.push_back(0.5 * (-(r + s) * y1 + (1 + r) * y2 + (1 + s) * y3));
        }
        const double xr = (x2 - x1) / 2, xs = (x3 - x1) / 2, yr = (y2 - y1) / 2, ys = (y3 - y1) / 2;
        const double j = xr * ys - xs * yr;
        if (!(j > 0)) throw std::runtime_error("dg: element " + std::to_string(e) + " is inverted or degenerate");
        mesh.jac.push_back(j);
        mesh.rx.push_back(ys / j);
        mesh.sx.push_back(-yr / j);
        mesh.ry.push_back(-xs / j);
        mesh.sy.push_back(xr / j);
        const double fn[faces][2] = {{yr, -xr}, {ys - yr, -xs + xr}, {-ys, xs}};
        for (int f = 0; f < faces; ++f) {
            const double sj = std::hypot(fn[f][0], fn[f][1]);
            mesh.nx.push_back(fn[f][0] / sj);
            mesh.ny.push_back(fn[f][1] / sj);
            mesh.fscale.push_back(sj / j);
            for (int i = 0; i < nfp; ++i)
                mesh.vmap_m.push_back(node(e, f, i)); // each face node's own volume node
        }
        const double l1 = std::hypot(x2 - x1, y2 - y1), l2 = std::hypot(x3 - x2, y3 - y2),
                     l3 = std::hypot(x1 - x3, y1 - y3);
        mesh.inradius.push_back(2 * (2 * j) / (l1 + l2 + l3)); // area = 2 J
    }
    // vmapP: the face node's own volume node on the boundary, else the nearest node of the
    // neighbour's face (the face whose two vertices are the same).
    mesh.vmap_p = mesh.vmap_m;
    const auto connect = [&](int e, int f, int e2, int f2) {
        for (int i = 0; i < nfp; ++i) {
            const int gm = node(e, f, i);
            int best = -1;
            double best_d = 0;
            for (int j = 0; j < nfp; ++j) {
                const int gp = node(e2, f2, j);
                const double d = std::hypot(mesh.x[gp] - mesh.x[gm], mesh.y[gp] - mesh.y[gm]);
                if (best < 0 || d < best_d) best = gp, best_d = d;
            }
            if (best_d > 1e-8) throw std::logic_error("dg: face nodes of neighbouring elements do not match");
            mesh.vmap_p[(std::size_t(e) * faces + f) * nfp + i] = best;
        }
    };
    std::map<std::pair<int, int>, std::pair<int, int>> open; // sorted vertex pair -> (element, face)
    for (int e = 0; e < k; ++e)
        for (int f = 0; f < faces; ++f) {
            const int a = mesh.etov[e][f], b = mesh.etov[e][(f + 1) % faces];
            const std::pair<int, int> key{std::min(a, b), std::max(a, b)};
            if (auto it = open.find(key); it != open.end()) {
                const auto [e2, f2] = it->second;
                connect(e, f, e2, f2);
                connect(e2, f2, e, f);
                open.erase(it);
            } else {
                open.emplace(key, std::pair{e, f});
            }
        }
    return mesh;
}

} // namespace dg
