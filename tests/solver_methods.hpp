// The solvers a test runs in turn: CG's three variants, BiCGStab, GMRES and FGMRES, as one enum.
#pragma once

#include <xgpu/solver.hpp>

namespace xgpu::test {

enum class Method { classic, pipelined, ghysels_vanroose, bicgstab, gmres, fgmres };
constexpr Method methods[] = {Method::classic,  Method::pipelined, Method::ghysels_vanroose,
                              Method::bicgstab, Method::gmres,     Method::fgmres};

inline const char* name(Method m) {
    switch (m) {
    case Method::classic: return "cg";
    case Method::pipelined: return "pipelined cg";
    case Method::ghysels_vanroose: return "ghysels-vanroose cg";
    case Method::bicgstab: return "bicgstab";
    case Method::gmres: return "gmres";
    default: return "fgmres";
    }
}

// A solve of A x = b by method m with options o (their variant set by m).
template <class Op>
SolverReport solve(Method m, const Op& a, const Array<double>& b, Array<double>& x, SolverOptions<double> o) {
    if (m == Method::bicgstab) return bicgstab(a, b, x, o);
    if (m == Method::gmres) return gmres(a, b, x, o);
    if (m == Method::fgmres) return fgmres(a, b, x, o);
    o.variant = m == Method::classic     ? CgVariant::classic
                : m == Method::pipelined ? CgVariant::pipelined
                                         : CgVariant::ghysels_vanroose;
    return cg(a, b, x, o);
}

} // namespace xgpu::test
