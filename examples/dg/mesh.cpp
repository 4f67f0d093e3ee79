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
    mesh.x.resize(std::size_t(k) * np);
    mesh.y.resize(std::size_t(k) * np);
    for (auto* v : {&mesh.rx, &mesh.sx, &mesh.ry, &mesh.sy, &mesh.jac, &mesh.inradius})
        v->resize(std::size_t(k));
    for (auto* v : {&mesh.nx, &mesh.ny, &mesh.fscale})
        v->resize(std::size_t(k) * faces);
    for (int e = 0; e < k; ++e) {
        const auto [a, b, c] = mesh.etov[std::size_t(e)];
        const double x1 = mesh.vx[std::size_t(a)], x2 = mesh.vx[std::size_t(b)], x3 = mesh.vx[std::size_t(c)];
        const double y1 = mesh.vy[std::size_t(a)], y2 = mesh.vy[std::size_t(b)], y3 = mesh.vy[std::size_t(c)];
        for (int i = 0; i < np; ++i) {
            const double r = ref.r[std::size_t(i)], s = ref.s[std::size_t(i)];
            mesh.x[std::size_t(e) * np + i] = 0.5 * (-(r + s) * x1 + (1 + r) * x2 + (1 + s) * x3);
            mesh.y[std::size_t(e) * np + i] = 0.5 * (-(r + s) * y1 + (1 + r) * y2 + (1 + s) * y3);
        }
        const double xr = (x2 - x1) / 2, xs = (x3 - x1) / 2, yr = (y2 - y1) / 2, ys = (y3 - y1) / 2;
        const double j = xr * ys - xs * yr;
        if (!(j > 0)) throw std::runtime_error("dg: element " + std::to_string(e) + " is inverted or degenerate");
        mesh.jac[std::size_t(e)] = j;
        mesh.rx[std::size_t(e)] = ys / j;
        mesh.sx[std::size_t(e)] = -yr / j;
        mesh.ry[std::size_t(e)] = -xs / j;
        mesh.sy[std::size_t(e)] = xr / j;
        const double fn[faces][2] = {{yr, -xr}, {ys - yr, -xs + xr}, {-ys, xs}};
        for (int f = 0; f < faces; ++f) {
            const double sj = std::hypot(fn[f][0], fn[f][1]);
            mesh.nx[std::size_t(e) * faces + f] = fn[f][0] / sj;
            mesh.ny[std::size_t(e) * faces + f] = fn[f][1] / sj;
            mesh.fscale[std::size_t(e) * faces + f] = sj / j;
        }
        const double l1 = std::hypot(x2 - x1, y2 - y1), l2 = std::hypot(x3 - x2, y3 - y2),
                     l3 = std::hypot(x1 - x3, y1 - y3);
        mesh.inradius[std::size_t(e)] = 2 * (2 * j) / (l1 + l2 + l3); // area = 2 J
    }
    // Face-to-face connectivity from the shared vertex pairs, then the node maps by coordinates.
    std::map<std::pair<int, int>, std::pair<int, int>> open; // sorted vertex pair -> (element, face)
    std::vector<std::array<std::pair<int, int>, faces>> neighbour(static_cast<std::size_t>(k));
    for (int e = 0; e < k; ++e)
        for (int f = 0; f < faces; ++f) {
            const auto& v = mesh.etov[std::size_t(e)];
            const int a = v[std::size_t(f)], b = v[std::size_t((f + 1) % faces)];
            const std::pair<int, int> key{std::min(a, b), std::max(a, b)};
            neighbour[std::size_t(e)][std::size_t(f)] = {e, f};
            if (auto it = open.find(key); it != open.end()) {
                const auto [e2, f2] = it->second;
                neighbour[std::size_t(e)][std::size_t(f)] = {e2, f2};
                neighbour[std::size_t(e2)][std::size_t(f2)] = {e, f};
                open.erase(it);
            } else {
                open.emplace(key, std::pair{e, f});
            }
        }
    const std::size_t nface_nodes = std::size_t(k) * faces * nfp;
    mesh.vmap_m.resize(nface_nodes);
    mesh.vmap_p.resize(nface_nodes);
    for (int e = 0; e < k; ++e)
        for (int f = 0; f < faces; ++f) {
            const auto [e2, f2] = neighbour[std::size_t(e)][std::size_t(f)];
            for (int i = 0; i < nfp; ++i) {
                const std::size_t id = (std::size_t(e) * faces + f) * nfp + i;
                const int gm = e * np + ref.fmask[std::size_t(f)][std::size_t(i)];
                mesh.vmap_m[id] = gm;
                mesh.vmap_p[id] = gm;
                if (e2 == e) continue; // boundary
                int best = -1;
                double best_d = 0;
                for (int j = 0; j < nfp; ++j) {
                    const int gp = e2 * np + ref.fmask[std::size_t(f2)][std::size_t(j)];
                    const double d = std::hypot(mesh.x[std::size_t(gp)] - mesh.x[std::size_t(gm)],
                                                mesh.y[std::size_t(gp)] - mesh.y[std::size_t(gm)]);
                    if (best < 0 || d < best_d) best = gp, best_d = d;
                }
                if (best_d > 1e-8) throw std::logic_error("dg: face nodes of neighbouring elements do not match");
                mesh.vmap_p[id] = best;
            }
        }
    return mesh;
}

} // namespace dg
