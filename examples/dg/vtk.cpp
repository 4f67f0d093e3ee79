#include "vtk.hpp"

#include <array>
#include <fstream>
#include <iomanip>
#include <stdexcept>

namespace dg {

void write_vtk(const std::string& path, const Discretization& d, const std::vector<double>& q, double time) {
    const int n = d.ref.order, np = d.ref.np, k = d.mesh.k;
    const std::size_t nodes = d.nodes(), cells = std::size_t(k) * n * n;
    if (q.size() != fields * nodes) throw std::invalid_argument("dg::write_vtk: the state has the wrong size");
    // The N^2 sub-triangles of the lattice: node j of row i (row i holds N + 1 - i nodes) is
    // numbered row by row, as make_reference_element numbers them.
    const auto id = [n](int i, int j) { return i * (n + 1) - i * (i - 1) / 2 + j; };
    std::vector<std::array<int, 3>> sub;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n - i; ++j) {
            sub.push_back({id(i, j), id(i, j + 1), id(i + 1, j)});
            if (j < n - i - 1) sub.push_back({id(i, j + 1), id(i + 1, j + 1), id(i + 1, j)});
        }
    std::ofstream out(path);
    if (!out) throw std::runtime_error("dg: cannot write " + path);
    out << "# vtk DataFile Version 3.0\nxgpu dg Maxwell TM, order " << n << ", t = " << time
        << "\nASCII\nDATASET UNSTRUCTURED_GRID\n";
    out << "POINTS " << nodes << " double\n" << std::setprecision(9); // as %.9g
    for (std::size_t i = 0; i < nodes; ++i)
        out << d.mesh.x[i] << ' ' << d.mesh.y[i] << " 0\n";
    out << "CELLS " << cells << ' ' << 4 * cells << '\n';
    for (int e = 0; e < k; ++e)
        for (const auto& t : sub)
            out << "3 " << e * np + t[0] << ' ' << e * np + t[1] << ' ' << e * np + t[2] << '\n';
    out << "CELL_TYPES " << cells << '\n';
    for (std::size_t c = 0; c < cells; ++c)
        out << "5\n"; // VTK_TRIANGLE
    out << "POINT_DATA " << nodes << '\n';
    const char* names[fields] = {"Hx", "Hy", "Ez"};
    for (int f = 0; f < fields; ++f) {
        out << "SCALARS " << names[f] << " double 1\nLOOKUP_TABLE default\n";
        for (std::size_t i = 0; i < nodes; ++i)
            out << q[f * nodes + i] << '\n';
    }
    if (!out) throw std::runtime_error("dg: writing " + path + " failed");
}

} // namespace dg
