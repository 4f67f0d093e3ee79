// Linear operators: anything with a shape and y = A*x (and y = alpha*A*x + beta*y), what the
// Krylov solvers take. Satisfied by the sparse matrices (xgpu/sparse.hpp), by the matrix-free
// Laplacians below, and by user types with the same members. detail::operator_ref erases an
// operator's type into what the solvers and preconditioners hold, with dot products and norms
// that are global wherever the operator's rows are spread over processes.
//
//   xgpu::Laplacian2D<double> A(ctx, 4096, 4096);  // the 5-point stencil, no matrix stored
//   A.apply(x, y);                                 // y = A*x
//
// The protocol a solver uses: apply (required); optionally apply_dot (a dot product fused into
// the product), forms (interchangeable forms of the product that a solver may time and choose
// among), bytes_per_product (the traffic a product moves, for GB/s in a solver's report),
// asymmetry (a check that A equals its transpose) and global_sum (the sums across processes of an
// operator whose rows are spread over several). Solvers know operators only through these.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "xgpu/array.hpp"
#include "xgpu/context.hpp"
#include "xgpu/reduction.hpp"

namespace xgpu {

template <class Op, class T>
concept LinearOperator = requires(const Op& a, const Array<T>& x, Array<T>& y, T s) {
    { a.rows() } -> std::convertible_to<std::int64_t>;
    { a.cols() } -> std::convertible_to<std::int64_t>;
    a.apply(x, y);
    a.apply(s, x, s, y);
};

// Optionally, an operator fuses a solver's dot product into its product:
//   bool apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial) const;
// computes y = A*x over a launch of exactly partial.size() work-groups, each writing its partial
// sum of x.y (the new y) into partial[group], so that the solver's next kernel sums them; returns
// false, having done nothing, where it cannot (the matrix's format on this device does not fuse).
template <class Op, class T>
concept FusedDotOperator = LinearOperator<Op, T> &&
    requires(const Op& a, const Array<T>& x, Array<T>& y, Array<T>& partial) {
    { a.apply_dot(x, y, partial) } -> std::convertible_to<bool>;
};

// One form of an operator's product: y = A*x, and (where the form fuses it, else empty) the
// product with a dot product as FusedDotOperator's apply_dot. Each holds what it needs (copies of
// handles), so it outlives the call that made it.
template <class T> struct OperatorForm {
    std::string name;
    std::function<void(const Array<T>&, Array<T>&)> apply;
    std::function<bool(const Array<T>&, Array<T>&, Array<T>&)> apply_dot;
};
// Optionally, an operator offers interchangeable forms of its product (a sparse matrix: its SpMV
// formats whose layouts cost nothing more to use), whose results agree up to rounding:
//   OperatorForms<T> forms() const;
// forms[0] is what apply runs; `fixed`: the user fixed the form, so a solver tries the others only
// when told to.
template <class T> struct OperatorForms {
    std::vector<OperatorForm<T>> forms;
    bool fixed = false;
};
template <class Op, class T>
concept MultiFormOperator = LinearOperator<Op, T> && requires(const Op& a) {
    { a.forms() } -> std::convertible_to<OperatorForms<T>>;
};
// Optionally, the bytes one product moves (each stored value, index and vector entry once):
//   double bytes_per_product() const;
template <class Op>
concept TrafficOperator = requires(const Op& a) {
    { a.bytes_per_product() } -> std::convertible_to<double>;
};
// Optionally, a check that A equals its transpose to a relative tolerance: an empty string where
// it does, else a description of the first entry that differs from its mirror:
//   std::string asymmetry(double rtol) const;
template <class Op>
concept SymmetryCheckedOperator = requires(const Op& a, double rtol) {
    { a.asymmetry(rtol) } -> std::convertible_to<std::string>;
};

// Optionally, an operator whose rows are spread over several processes (xgpu/distributed.hpp)
// gives the sums across them that a solver's dot products and checks need:
//   const GlobalSum* global_sum() const;
// Its rows() and cols() are then the process's own rows (the length of its part of x and y), and
// a solver sums every dot product through it. Null: the operator lives in one process.
class GlobalSum {
public:
    virtual ~GlobalSum() = default;
    // values[0 .. count) summed over the processes, in place, on every process (blocking).
    virtual void sum(double* values, int count) const = 0;
    // The same, started (values must stay valid): finish() completes it. One at a time.
    virtual void start_sum(double* values, int count) const = 0;
    virtual void finish_sum() const = 0;
    // The first non-empty `error` among the processes (by rank), on every process: empty where
    // none has one. Every process then refuses the same input with the same message.
    virtual std::string agree(const std::string& error) const = 0;
    // The number of processes.
    virtual int processes() const = 0;
};
template <class Op>
concept DistributedOperator = requires(const Op& a) {
    { a.global_sum() } -> std::convertible_to<const GlobalSum*>;
};

namespace detail {
// An operator without its type, as the solvers' compiled code takes it (xgpu/operator.hpp's
// protocol): its forms of the product (the operator's own apply where it offers no others), the
// form running, and the traffic of one product (0: unknown).
template <class T> struct OperatorRef {
    std::int64_t rows = 0, cols = 0;
    double bytes = 0;
    std::vector<OperatorForm<T>> forms; // never empty
    bool fixed = false;                 // the user fixed the form: tried only when asked
    mutable std::size_t current = 0;    // the form that apply and apply_dot run
    const GlobalSum* global = nullptr;  // where the rows are spread over processes: their sums
    std::int64_t first_row = 0;         // and this process's first row among all processes' rows

    void apply(const Array<T>& x, Array<T>& y) const { forms[current].apply(x, y); }
    // Whether the current form may fuse a dot product into its product (it may still decline).
    bool fuses() const { return bool(forms[current].apply_dot); }
    bool apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial) const {
        return fuses() && forms[current].apply_dot(x, y, partial);
    }
    // x.y and |x| over the operator's whole vectors: summed across the processes where its rows
    // are spread over several (a preconditioner's eigenvalue estimate, a solver's checks), so
    // every process gets the same value. Blocking: the host reads the result.
    double dot(const Array<T>& x, const Array<T>& y) const {
        double v = double(xgpu::dot(x, y).get());
        if (global) global->sum(&v, 1);
        return v;
    }
    double norm(const Array<T>& x) const { return std::sqrt(dot(x, x)); }
};

template <class T, class Op> OperatorRef<T> operator_ref(const Op& a) {
    OperatorRef<T> r;
    r.rows = a.rows();
    r.cols = a.cols();
    if constexpr (MultiFormOperator<Op, T>) {
        OperatorForms<T> f = a.forms();
        r.forms = std::move(f.forms);
        r.fixed = f.fixed;
    }
    if (r.forms.empty()) {
        OperatorForm<T> f;
        f.apply = [&a](const Array<T>& x, Array<T>& y) { a.apply(x, y); };
        if constexpr (FusedDotOperator<Op, T>)
            f.apply_dot = [&a](const Array<T>& x, Array<T>& y, Array<T>& partial) {
                return bool(a.apply_dot(x, y, partial));
            };
        r.forms.push_back(std::move(f));
    }
    if constexpr (TrafficOperator<Op>) r.bytes = a.bytes_per_product();
    if constexpr (DistributedOperator<Op>) r.global = a.global_sum();
    if constexpr (requires { a.first_row(); }) r.first_row = a.first_row();
    return r;
}
} // namespace detail

// The negative Laplacian on an nx x ny grid (2-D, 5 points) or nx x ny x nz grid (3-D, 7 points)
// with zero Dirichlet boundaries, in natural order (x fastest): the matrix of the 2-D/3-D Poisson
// problem, applied without storing it (kernels/stencil.kernel; its launch shape is the stencil
// family's, KernelFamily::stencil). T is float or double. x and y have nx*ny(*nz) elements,
// contiguous, and must not share memory.
template <class T> class Laplacian2D {
public:
    Laplacian2D(const Context& ctx, std::int64_t nx, std::int64_t ny);
    std::int64_t rows() const { return nx_ * ny_; }
    std::int64_t cols() const { return rows(); }
    const Context& context() const { return ctx_; }
    void apply(const Array<T>& x, Array<T>& y) const { apply(T(1), x, T(0), y); }
    // y = alpha*A*x + beta*y (beta == 0: y is only written).
    void apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const;
    // y = A*x with partial.size() work-groups' partial sums of x.y (FusedDotOperator).
    bool apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial) const;
    // x read and y written once (TrafficOperator).
    double bytes_per_product() const { return 2.0 * double(rows()) * sizeof(T); }

private:
    Context ctx_;
    std::int64_t nx_, ny_;
};

template <class T> class Laplacian3D {
public:
    Laplacian3D(const Context& ctx, std::int64_t nx, std::int64_t ny, std::int64_t nz);
    std::int64_t rows() const { return nx_ * ny_ * nz_; }
    std::int64_t cols() const { return rows(); }
    const Context& context() const { return ctx_; }
    void apply(const Array<T>& x, Array<T>& y) const { apply(T(1), x, T(0), y); }
    void apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const;
    bool apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial) const;
    double bytes_per_product() const { return 2.0 * double(rows()) * sizeof(T); }

private:
    Context ctx_;
    std::int64_t nx_, ny_, nz_;
};

extern template class Laplacian2D<float>;
extern template class Laplacian2D<double>;
extern template class Laplacian3D<float>;
extern template class Laplacian3D<double>;

} // namespace xgpu
