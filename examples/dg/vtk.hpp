// Legacy-VTK output (ParaView, VisIt): one unstructured grid per call, the element's nodes as
// points and each element cut into the N^2 triangles of its nodal lattice, so the high-order
// field is drawn piecewise linearly between all its nodes. Point data Hx, Hy, Ez.
#pragma once

#include <string>
#include <vector>

#include "maxwell.hpp"

namespace dg {

// Throws std::runtime_error naming the file when it cannot be written.
void write_vtk(const std::string& path, const Discretization& d, const std::vector<double>& q, double time);

} // namespace dg
