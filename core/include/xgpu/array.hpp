// xgpu::Array<T>: numpy-like device arrays (PyCUDA's gpuarray, PyOpenCL's array).
//
//   auto x = xgpu::to_device(ctx, host_vector);       // 1-D array from a std::vector
//   auto y = xgpu::zeros<double>(ctx, {1000});
//   y = 2.0 * x + sin(y);                             // one fused kernel
//   auto v = x(xgpu::slice(10, {}, -2));              // a strided view, no copy
//   std::vector<double> h = y.get();
//
// Arrays are handles: copying an Array shares its elements (as a second numpy name does), copy()
// duplicates them. Assigning an expression writes its values into the array's elements, through
// one generated kernel; an empty (default-constructed) array is allocated first.
#pragma once

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <span>
#include <type_traits>
#include <variant>
#include <vector>

#include "xgpu/context.hpp"
#include "xgpu/dtype.hpp"
#include "xgpu/error.hpp"
#include "xgpu/shape.hpp"

namespace xgpu {

namespace detail {

// An array without its static type: what the expression and kernel generators work on.
struct HostMirror;
struct ArrayDesc {
    Context context;
    Buffer buffer;
    std::int64_t offset = 0; // in elements
    Shape shape;
    Strides strides; // in elements
    DType dtype = DType::float32;
    // A reduction's result: a copy in mapped host memory the host may read without a copy on the
    // queue while the buffer is otherwise unused (core/src/mirror.hpp); null for other arrays.
    std::shared_ptr<HostMirror> mirror;

    std::size_t size() const { return shape_size(shape); }
    bool is_c_contiguous() const;
    bool is_f_contiguous() const;
};

using Index = std::variant<std::int64_t, Slice>;

ArrayDesc make_array(const Context& ctx, DType dtype, const Shape& shape, Order order);
// numpy.may_share_memory: whether the two arrays' byte ranges in one buffer (from the lowest to
// the highest element each can reach) intersect; false for different buffers or an empty array.
bool may_share_memory(const ArrayDesc& a, const ArrayDesc& b);
ArrayDesc view(const ArrayDesc& a, std::span<const Index> index);
ArrayDesc reshape(const ArrayDesc& a, const Shape& shape);
ArrayDesc transpose(const ArrayDesc& a, std::span<const std::size_t> axes);
ArrayDesc view_as(const ArrayDesc& a, DType type);
void to_host(const ArrayDesc& a, void* dst); // blocking, any layout
Event to_host_async(const ArrayDesc& a, void* dst);
void from_host(const ArrayDesc& a, const void* src);     // blocking, any layout
void fill(const ArrayDesc& a, const void* value);        // value of a.dtype
void assign(const ArrayDesc& dst, const ArrayDesc& src); // dst[...] = src (broadcast, cast)
// numpy.arange: ceil((stop - start) / step) elements; a count that is not finite or too big throws.
ArrayDesc arange(const Context& ctx, DType dtype, double start, double stop, double step);
void print(std::ostream& os, const ArrayDesc& a);
void require_fp64(const Context& ctx, DType dtype);
std::size_t resolve_length(std::size_t size, const Shape& shape, const char* what);
[[noreturn]] void dtype_mismatch(DType have, DType want);
void sort_inplace(const ArrayDesc& a, std::int64_t axis);                  // core/src/array/sort.cpp (xgpu/sort.hpp)
[[noreturn]] void cannot_store(const char* op, DType result, DType array); // an in-place operator's cast

} // namespace detail

template <Element T> class Expr;

template <Element T> class Array {
public:
    using value_type = T;

    Array() = default;
    // Adopts a description; its element type must be T (a mismatch would read or write the wrong
    // number of bytes on every transfer).
    explicit Array(detail::ArrayDesc d) : d_(std::move(d)) {
        if (d_.buffer && d_.dtype != dtype_v<T>) detail::dtype_mismatch(d_.dtype, dtype_v<T>);
    }
    // Evaluates an expression into a new array.
    template <Element U> Array(const Expr<U>& e);

    // Shape and layout.
    const Shape& shape() const { return d_.shape; }
    const Strides& strides() const { return d_.strides; }
    std::size_t ndim() const { return d_.shape.size(); }
    std::size_t size() const { return d_.size(); }
    std::size_t nbytes() const { return size() * sizeof(T); }
    std::int64_t offset() const { return d_.offset; }
    bool empty() const { return !d_.buffer; }
    bool is_contiguous() const { return d_.is_c_contiguous(); }
    const Context& context() const { return d_.context; }
    const Buffer& buffer() const { return d_.buffer; }
    static constexpr DType dtype() { return dtype_v<T>; }
    const detail::ArrayDesc& desc() const { return d_; }
    // As a kernel argument (Kernel::launch): two parameters, the buffer and the offset in elements.
    static constexpr std::size_t kernel_params = 2;
    void kernel_args(detail::KernelArg* out) const {
        out[0] = detail::make_arg(d_.buffer);
        out[1] = detail::make_arg(d_.offset);
    }

    // Transfers (blocking unless _async; the host memory must stay alive until the event completes).
    std::vector<T> get() const {
        if constexpr (std::is_same_v<T, bool>) { // std::vector<bool> is packed: go through bytes
            std::vector<std::uint8_t> raw(size());
            detail::to_host(d_, raw.data());
            return std::vector<bool>(raw.begin(), raw.end());
        } else {
            std::vector<T> out(size());
            detail::to_host(d_, out.data());
            return out;
        }
    }
    void get(std::span<T> out) const {
        check_length(out.size(), "get");
        detail::to_host(d_, out.data());
    }
    Event get_async(std::span<T> out) const {
        check_length(out.size(), "get_async");
        return detail::to_host_async(d_, out.data());
    }
    void set(std::span<const T> in) const {
        check_length(in.size(), "set");
        detail::from_host(d_, in.data());
    }
    // Sets every element.
    const Array& fill(T value) const {
        detail::fill(d_, &value);
        return *this;
    }
    // numpy's a.sort(axis): sorts the elements in place along `axis`, stably (xgpu/sort.hpp).
    const Array& sort(std::int64_t axis = -1) const {
        detail::sort_inplace(d_, axis);
        return *this;
    }

    // A new array with the same elements, C-contiguous (numpy's default), F-contiguous, or
    // Order::K: F where this array is F- but not C-contiguous, else C (numpy's order='K' for the
    // layouts an xgpu array can have as a fresh array).
    Array copy(Order order = Order::C) const {
        if (order == Order::K) order = d_.is_f_contiguous() && !d_.is_c_contiguous() ? Order::F : Order::C;
        Array out(detail::make_array(d_.context, dtype(), d_.shape, order));
        detail::assign(out.d_, d_);
        return out;
    }
    // The same memory seen as elements of type U (numpy's a.view(np.complex64)): the last axis
    // must be contiguous and its bytes, the offset and the other strides whole multiples of U.
    // No copy; the two arrays share their elements.
    template <Element U> Array<U> view() const { return Array<U>(detail::view_as(d_, dtype_v<U>)); }
    template <Element U> Array<U> astype() const {
        Array<U> out(detail::make_array(d_.context, dtype_v<U>, d_.shape, Order::C));
        detail::assign(out.desc(), d_);
        return out;
    }

    // Views (no copy): numpy indexing with integers and slices, reshape, ravel, transpose.
    template <class... I> Array operator()(const I&... index) const {
        const detail::Index idx[] = {to_index(index)...};
        return Array(detail::view(d_, idx));
    }
    Array operator[](std::int64_t i) const { return (*this)(i); }
    // reshape and ravel return views where the layout allows, copies otherwise (as numpy).
    Array reshape(const Shape& shape) const { return Array(detail::reshape(d_, shape)); }
    Array ravel() const { return reshape({size()}); }
    Array transpose() const { return Array(detail::transpose(d_, {})); }
    Array transpose(std::initializer_list<std::size_t> axes) const {
        return Array(detail::transpose(d_, std::span<const std::size_t>(axes.begin(), axes.size())));
    }
    Array T_() const { return transpose(); }

    // Writes an expression's (or another array's) values into this array's elements; an empty
    // array is first allocated to the expression's shape.
    template <Element U> Array& operator=(const Expr<U>& e);
    Array& assign(const Array& other) {
        detail::assign(d_, other.d_);
        return *this;
    }
    template <class E> Array& operator+=(const E& e);
    template <class E> Array& operator-=(const E& e);
    template <class E> Array& operator*=(const E& e);
    template <class E> Array& operator/=(const E& e);

    friend std::ostream& operator<<(std::ostream& os, const Array& a) {
        detail::print(os, a.d_);
        return os;
    }

private:
    static detail::Index to_index(std::int64_t i) { return i; }
    static detail::Index to_index(const Slice& s) { return s; }
    void check_length(std::size_t n, const char* what) const {
        if (n != size())
            throw ShapeError(std::string("xgpu: ") + what + ": the host range has " + std::to_string(n) +
                             " elements, the array " + to_string(shape()) + " has " + std::to_string(size()));
    }
    detail::ArrayDesc d_;
};

// Creation.
template <Element T> Array<T> empty(const Context& ctx, const Shape& shape, Order order = Order::C) {
    return Array<T>(detail::make_array(ctx, dtype_v<T>, shape, order));
}
template <Element T> Array<T> full(const Context& ctx, const Shape& shape, T value, Order order = Order::C) {
    auto a = empty<T>(ctx, shape, order);
    a.fill(value);
    return a;
}
template <Element T> Array<T> zeros(const Context& ctx, const Shape& shape, Order order = Order::C) {
    return full<T>(ctx, shape, T{}, order);
}
template <Element T> Array<T> ones(const Context& ctx, const Shape& shape, Order order = Order::C) {
    return full<T>(ctx, shape, T(1), order);
}
// numpy.arange(start, stop, step) for real types.
template <Element T> Array<T> arange(const Context& ctx, double start, double stop, double step = 1.0) {
    return Array<T>(detail::arange(ctx, dtype_v<T>, start, stop, step));
}
template <Element T> Array<T> arange(const Context& ctx, double stop) {
    return arange<T>(ctx, 0.0, stop, 1.0);
}
template <Element T> Array<T> to_device(const Context& ctx, std::span<const T> host, const Shape& shape = {}) {
    const Shape s = shape.empty() ? Shape{host.size()} : shape;
    if (shape_size(s) != host.size())
        throw ShapeError("xgpu: to_device: " + std::to_string(host.size()) + " elements do not fill shape " +
                         to_string(s));
    auto a = empty<T>(ctx, s);
    a.set(host);
    return a;
}
template <Element T> Array<T> to_device(const Context& ctx, const std::vector<T>& host, const Shape& shape = {}) {
    if constexpr (std::is_same_v<T, bool>) { // std::vector<bool> is packed: go through bytes
        const std::unique_ptr<bool[]> bytes(new bool[host.size()]);
        std::copy(host.begin(), host.end(), bytes.get());
        return to_device<T>(ctx, std::span<const T>(bytes.get(), host.size()), shape);
    } else {
        return to_device<T>(ctx, std::span<const T>(host.data(), host.size()), shape);
    }
}

} // namespace xgpu

#include "xgpu/expr.hpp"
