// Printing arrays as numpy does: nested brackets, aligned columns, long arrays summarised
// ("...") with three elements at each edge once the array has more than 1000 elements.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <ostream>

#include <fmt/format.h>

#include "xgpu/array.hpp"

namespace xgpu::detail {
namespace {

constexpr std::size_t threshold = 1000, edge = 3;

// Reals formatted alike: fixed with the fewest digits (up to 8) that show every element, or
// scientific when magnitudes span too far, as numpy's default print options.
struct RealFormat {
    bool scientific = false;
    int precision = 0;
    bool single = false; // float32 values: "shortest" is judged in float precision
    void fit(const std::vector<double>& v) {
        double max_abs = 0, min_abs = INFINITY;
        for (double x : v)
            if (std::isfinite(x) && x != 0) {
                max_abs = std::max(max_abs, std::fabs(x));
                min_abs = std::min(min_abs, std::fabs(x));
            }
        scientific = max_abs >= 1e16 || (min_abs < 1e-4) || (max_abs / min_abs > 1e3 && min_abs != INFINITY);
        for (double x : v) {
            if (!std::isfinite(x)) continue;
            // The fewest digits (at most 8) that give the value back, as numpy's repr.
            for (int p = 0; p <= 8; ++p) {
                const std::string s = scientific ? fmt::format("{:.{}e}", x, p) : fmt::format("{:.{}f}", x, p);
                const double back = std::stod(s);
                if ((single ? float(back) == float(x) : back == x) || p == 8) {
                    precision = std::max(precision, p);
                    break;
                }
            }
        }
    }
    std::string operator()(double x) const {
        if (std::isnan(x)) return "nan";
        if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
        if (scientific) return fmt::format("{:.{}e}", x, precision);
        std::string s = fmt::format("{:.{}f}", x, precision);
        // numpy shows "2." for a whole number and pads trimmed zeros with spaces.
        if (s.find('.') == std::string::npos) s += '.';
        std::size_t trimmed = 0;
        while (s.back() == '0') {
            s.pop_back();
            ++trimmed;
        }
        return s + std::string(trimmed, ' ');
    }
};

template <class T> std::vector<T> read(const ArrayDesc& a) {
    std::vector<T> v(a.size());
    if (!v.empty()) to_host(a, v.data());
    return v;
}

struct Printer {
    const Shape& shape;
    std::vector<std::string> cells; // each element formatted, C order
    std::size_t width = 0;
    bool summarise = false;

    void pad() {
        for (const auto& c : cells)
            width = std::max(width, c.size());
    }
    void print(std::ostream& os, std::size_t dim, std::size_t start, std::size_t stride, std::size_t indent) const {
        const std::size_t n = shape[dim];
        const std::size_t inner = stride / std::max<std::size_t>(n, 1);
        os << '[';
        for (std::size_t i = 0; i < n; ++i) {
            if (summarise && n > 2 * edge && i == edge) {
                os << (dim + 1 == shape.size() ? "..." : "...");
                if (dim + 1 == shape.size())
                    os << ' ';
                else
                    os << ",\n" << std::string(indent + 1, ' ');
                i = n - edge - 1;
                continue;
            }
            if (dim + 1 == shape.size()) {
                const auto& c = cells[start + i];
                os << std::string(width - c.size(), ' ') << c;
                if (i + 1 < n) os << ' ';
            } else {
                print(os, dim + 1, start + i * inner, inner, indent + 1);
                if (i + 1 < n) os << std::string(shape.size() - dim - 1, '\n') << std::string(indent + 1, ' ');
            }
        }
        os << ']';
    }
};

} // namespace

void print(std::ostream& os, const ArrayDesc& a) {
    if (!a.buffer) {
        os << "Array(empty handle)";
        return;
    }
    if (a.shape.empty()) { // 0-d
        ArrayDesc one = a;
        one.shape = {1};
        one.strides = {1};
        print(os, one);
        return;
    }
    if (a.size() == 0) {
        os << "[]";
        return;
    }
    Printer p{a.shape, {}, 0, a.size() > threshold};
    const DType t = a.dtype;
    if (t == DType::bool_) {
        for (auto v : read<std::uint8_t>(a))
            p.cells.push_back(v ? "True" : "False");
    } else if (is_integer(t)) {
        // Widened on the device to 64 bits of the same signedness, then formatted.
        auto widened = [&](auto zero, DType wide) {
            std::vector<decltype(zero)> v(a.size());
            ArrayDesc c = make_array(a.context, wide, a.shape, Order::C);
            assign(c, a);
            to_host(c, v.data());
            for (auto x : v)
                p.cells.push_back(std::to_string(x));
        };
        if (kind(t) == Kind::unsigned_int)
            widened(std::uint64_t{}, DType::uint64);
        else
            widened(std::int64_t{}, DType::int64);
    } else if (kind(t) == Kind::floating) {
        std::vector<double> v;
        if (t == DType::float32)
            for (float x : read<float>(a))
                v.push_back(x);
        else
            v = read<double>(a);
        RealFormat f;
        f.single = t == DType::float32;
        f.fit(v);
        for (double x : v)
            p.cells.push_back(f(x));
    } else {
        std::vector<std::complex<double>> v;
        if (t == DType::complex64)
            for (auto x : read<std::complex<float>>(a))
                v.emplace_back(x.real(), x.imag());
        else
            v = read<std::complex<double>>(a);
        std::vector<double> re, im;
        for (auto z : v) {
            re.push_back(z.real());
            im.push_back(z.imag());
        }
        RealFormat fr, fi;
        fr.single = fi.single = t == DType::complex64;
        fr.fit(re);
        fi.fit(im);
        for (auto z : v) {
            std::string i = fi(std::fabs(z.imag()));
            while (!i.empty() && i.back() == ' ')
                i.pop_back();
            p.cells.push_back(fmt::format("{}{}{}j", fr(z.real()), std::signbit(z.imag()) ? '-' : '+', i));
        }
    }
    p.pad();
    p.print(os, 0, 0, a.size(), 0);
}

} // namespace xgpu::detail
