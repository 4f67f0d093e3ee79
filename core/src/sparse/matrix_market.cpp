// Matrix Market files (NIST's format, as scipy.io.mmread/mmwrite read and write them): a banner
// line, % comments, a size line, then one entry per line. The reader checks every line before it
// builds anything and names the file and line of the first problem; the writer prints values in
// the shortest form that reads back to the same bits (fmt's "{}").
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <istream>
#include <iterator>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "build.hpp"

namespace xgpu {

ParseError::ParseError(const std::string& what, std::string file, std::size_t line)
    : InvalidArgument(what), file_(std::move(file)), line_(line) {}

namespace sparse {
namespace {

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> constexpr bool is_complex_v = !std::is_same_v<typename real_of<T>::type, T>;

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& ch : out)
        ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return out;
}

// Sets `out` to the value the banner word `word` (lower-cased) names in `table`; false if none.
template <class E>
bool pick(std::string_view word, std::initializer_list<std::pair<std::string_view, E>> table, E& out) {
    for (const auto& [name, value] : table)
        if (word == name) {
            out = value;
            return true;
        }
    return false;
}

// Text from the file shown in a message, with every byte that is not printable ASCII written as
// \xNN: a NUL would end the message where what() is read as a C string, and control bytes could
// rewrite a terminal.
std::string escaped(std::string_view s) {
    std::string out;
    for (const char ch : s) {
        const auto b = static_cast<unsigned char>(ch);
        if (b >= 0x20 && b < 0x7f)
            out += ch;
        else
            out += fmt::format("\\x{:02x}", b);
    }
    return out;
}

// A line or token shown in a message: at most 60 bytes of it, escaped.
std::string excerpt(std::string_view s) {
    return s.size() <= 60 ? escaped(s) : escaped(s.substr(0, 57)) + "...";
}

bool is_space(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

// Splits on blanks into at most `out.size()` tokens; returns how many there were (possibly more).
template <std::size_t N> std::size_t split(std::string_view s, std::array<std::string_view, N>& out) {
    std::size_t n = 0, i = 0;
    while (true) {
        while (i < s.size() && is_space(s[i]))
            ++i;
        if (i == s.size()) return n;
        const std::size_t b = i;
        while (i < s.size() && !is_space(s[i]))
            ++i;
        if (n < N) out[n] = s.substr(b, i - b);
        ++n;
    }
}

// from_chars takes no leading '+'; Matrix Market writers sometimes print one.
std::string_view without_plus(std::string_view t) {
    return t.size() > 1 && t[0] == '+' && t[1] != '-' && t[1] != '+' ? t.substr(1) : t;
}

bool parse_int(std::string_view t, std::int64_t& v) {
    t = without_plus(t);
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

const char* type_name(MmField f) {
    switch (f) {
    case MmField::real: return "real";
    case MmField::integer: return "integer";
    case MmField::complex: return "complex";
    case MmField::pattern: return "pattern";
    }
    return "?";
}
const char* type_name(MmSymmetry s) {
    switch (s) {
    case MmSymmetry::general: return "general";
    case MmSymmetry::symmetric: return "symmetric";
    case MmSymmetry::skew_symmetric: return "skew-symmetric";
    case MmSymmetry::hermitian: return "hermitian";
    }
    return "?";
}

class Reader {
public:
    Reader(std::istream& in, const std::string& name) : in_(in), name_(name) {}

    [[noreturn]] void fail(std::size_t line, const std::string& what) const {
        throw ParseError(fmt::format("xgpu: {}:{}: {}", escaped(name_), line, what), name_, line);
    }
    [[noreturn]] void fail(const std::string& what) const { fail(line_no_, what); }

    // The next line that is neither blank nor a % comment; false at the end of the input.
    bool next_data_line() {
        while (next_line()) {
            std::size_t i = 0;
            while (i < line_.size() && is_space(line_[i]))
                ++i;
            if (i < line_.size() && line_[i] != '%') return true;
        }
        return false;
    }
    bool next_line() {
        if (!std::getline(in_, line_)) {
            if (in_.bad()) fail("read error");
            return false;
        }
        ++line_no_;
        return true;
    }
    const std::string& line() const { return line_; }
    std::size_t line_no() const { return line_no_; }

    MatrixMarketHeader header() {
        constexpr std::string_view expected = "a Matrix Market file starts with '%%MatrixMarket matrix "
                                              "coordinate|array real|integer|complex|pattern "
                                              "general|symmetric|skew-symmetric|hermitian'";
        if (!next_line()) fail(1, fmt::format("empty input: no '%%MatrixMarket' banner ({})", expected));
        std::array<std::string_view, 6> tok;
        const std::size_t n = split(line_, tok);
        if (n == 0 || tok[0].substr(0, 2) != "%%")
            fail(fmt::format("missing banner: found '{}' where {}", excerpt(line_), expected));
        if (lower(tok[0]) != "%%matrixmarket") fail(fmt::format("wrong banner '{}': {}", excerpt(line_), expected));
        if (n != 5)
            fail(fmt::format("wrong banner '{}': {} words after %%MatrixMarket, not 4 ({})", excerpt(line_), n - 1,
                             expected));
        MatrixMarketHeader h;
        const std::string object = lower(tok[1]), format = lower(tok[2]), field = lower(tok[3]), sym = lower(tok[4]);
        if (object != "matrix")
            fail(fmt::format("wrong banner: object '{}' is not supported, only 'matrix'", excerpt(tok[1])));
        using F = MmFormat;
        using D = MmField;
        using S = MmSymmetry;
        if (!pick(format, {{"coordinate", F::coordinate}, {"array", F::array}}, h.format))
            fail(fmt::format("wrong banner: format '{}' is neither 'coordinate' nor 'array'", excerpt(tok[2])));
        if (!pick(field, {{"real", D::real}, {"integer", D::integer}, {"complex", D::complex}, {"pattern", D::pattern}},
                  h.field))
            fail(fmt::format("wrong banner: field '{}' is not real, integer, complex or pattern", excerpt(tok[3])));
        if (!pick(sym,
                  {{"general", S::general},
                   {"symmetric", S::symmetric},
                   {"skew-symmetric", S::skew_symmetric},
                   {"hermitian", S::hermitian}},
                  h.symmetry))
            fail(fmt::format("wrong banner: symmetry '{}' is not general, symmetric, skew-symmetric or hermitian",
                             excerpt(tok[4])));
        if (h.format == MmFormat::array && h.field == MmField::pattern)
            fail("wrong banner: an array file cannot have the pattern field");
        if (h.symmetry == MmSymmetry::hermitian && h.field != MmField::complex)
            fail(fmt::format("wrong banner: a hermitian matrix must be complex, not {}", type_name(h.field)));
        if (h.symmetry == MmSymmetry::skew_symmetric && h.field == MmField::pattern)
            fail("wrong banner: a pattern matrix cannot be skew-symmetric");

        if (!next_data_line()) fail("no size line: the file ends after its banner and comments");
        size_line_ = line_no_;
        const bool coord = h.format == MmFormat::coordinate;
        std::array<std::string_view, 3> s;
        const std::size_t m = split(line_, s);
        std::array<std::int64_t, 3> v{};
        bool ok = m == (coord ? 3u : 2u);
        for (std::size_t i = 0; ok && i < m; ++i)
            ok = parse_int(s[i], v[i]) && v[i] >= 0;
        if (!ok)
            fail(fmt::format("bad size line '{}': expected {} non-negative integers ({})", excerpt(line_),
                             coord ? 3 : 2, coord ? "rows, columns, entries" : "rows, columns"));
        h.rows = v[0];
        h.cols = v[1];
        if (h.symmetry != MmSymmetry::general && h.rows != h.cols)
            fail(fmt::format("a {} matrix must be square, not {} x {}", type_name(h.symmetry), h.rows, h.cols));
        if (coord) {
            h.entries = v[2];
        } else {
            // The stored entries: all of them, or a triangle (with or without the diagonal), in
            // checked arithmetic (a 2^33 x 2^33 triangle is past 2^64).
            const auto n = std::uint64_t(h.rows), c = std::uint64_t(h.cols);
            std::uint64_t e = 0;
            bool overflow = false;
            if (h.symmetry == MmSymmetry::general)
                overflow = __builtin_mul_overflow(n, c, &e);
            else if (h.symmetry == MmSymmetry::skew_symmetric)
                overflow = n > 0 && (n % 2 ? __builtin_mul_overflow(n, (n - 1) / 2, &e)
                                           : __builtin_mul_overflow(n / 2, n - 1, &e));
            else
                overflow =
                    n % 2 ? __builtin_mul_overflow((n + 1) / 2, n, &e) : __builtin_mul_overflow(n / 2, n + 1, &e);
            if (overflow || e > std::uint64_t(INT64_MAX))
                fail(fmt::format("{} x {} is too many entries: a {} array of that size stores more than 2^63", h.rows,
                                 h.cols, type_name(h.symmetry)));
            h.entries = std::int64_t(e);
        }
        return h;
    }
    std::size_t size_line() const { return size_line_; }

private:
    std::istream& in_;
    const std::string& name_;
    std::string line_;
    std::size_t line_no_ = 0, size_line_ = 0;
};

template <class R> const char* real_name() {
    return std::is_same_v<R, float> ? "float" : "double";
}

// One value token of a real type R, refusing what is not a number, out of R's range, or (unless
// allowed) not finite.
template <class R> R parse_real(Reader& rd, std::string_view t, bool integer, const ReadOptions& opt) {
    R v{};
    if (integer) {
        std::int64_t i = 0;
        if (!parse_int(t, i)) rd.fail(fmt::format("'{}' is not an integer (the file's field is integer)", excerpt(t)));
        return R(i);
    }
    const std::string_view u = without_plus(t);
    const auto r = std::from_chars(u.data(), u.data() + u.size(), v);
    if (r.ec == std::errc::invalid_argument || r.ptr != u.data() + u.size())
        rd.fail(fmt::format("'{}' is not a number", excerpt(t)));
    if (r.ec == std::errc::result_out_of_range) {
        // Underflow is rounding (to 0 or a denormal), overflow an error; strtod tells them apart.
        const std::string s(u);
        const double d = std::strtod(s.c_str(), nullptr);
        if (!(std::fabs(d) < 1)) rd.fail(fmt::format("'{}' is out of the range of {}", excerpt(t), real_name<R>()));
        v = std::is_same_v<R, float> ? R(std::strtof(s.c_str(), nullptr)) : R(d);
    }
    if (!std::isfinite(v) && !opt.allow_nonfinite)
        rd.fail(fmt::format("'{}' is not finite (ReadOptions::allow_nonfinite accepts NaN and Inf)", excerpt(t)));
    return v;
}

template <Value T, Index I> HostCsr<T, I> read(std::istream& in, const std::string& name, const ReadOptions& opt) {
    using R = typename real_of<T>::type;
    Reader rd(in, name);
    const MatrixMarketHeader h = rd.header();
    if (h.field == MmField::complex && !is_complex_v<T>)
        rd.fail(1, fmt::format("a complex matrix cannot be read as {}: read it as std::complex<{}>", real_name<R>(),
                               real_name<R>()));
    const bool coord = h.format == MmFormat::coordinate;
    try {
        detail::check_fits<I>(h.rows, h.cols,
                              coord && h.symmetry == MmSymmetry::general ? std::uint64_t(h.entries) : 0);
    } catch (const InvalidArgument& e) {
        rd.fail(rd.size_line(), std::string(e.what()).substr(std::string_view("xgpu: sparse: ").size()));
    }

    const bool complex_field = h.field == MmField::complex, integer = h.field == MmField::integer;
    const std::size_t fields = (coord ? 2 : 0) + (h.field == MmField::pattern ? 0 : complex_field ? 2 : 1);
    std::vector<std::int64_t> ri, ci;
    std::vector<T> vals;
    // Never trust the declared count for memory: a short file may declare billions.
    const auto guess = std::size_t(std::min<std::int64_t>(h.entries, 1 << 16));
    ri.reserve(guess);
    ci.reserve(guess);
    vals.reserve(guess);
    const auto push = [&](std::int64_t i, std::int64_t j, T v) {
        ri.push_back(i);
        ci.push_back(j);
        vals.push_back(v);
    };
    std::int64_t ai = 0, aj = 0; // an array file's next position (column-major)
    if (!coord) {
        if (h.symmetry == MmSymmetry::skew_symmetric) ai = 1;
    }
    for (std::int64_t k = 0; k < h.entries; ++k) {
        if (!rd.next_data_line())
            rd.fail(fmt::format("fewer entries than declared: the size line (line {}) declares {}, the file has {}",
                                rd.size_line(), h.entries, k));
        std::array<std::string_view, 4> tok;
        const std::size_t n = split(rd.line(), tok);
        if (n != fields)
            rd.fail(fmt::format("'{}': expected {} fields ({}), found {}", excerpt(rd.line()), fields,
                                coord ? (h.field == MmField::pattern ? "row, column"
                                         : complex_field             ? "row, column, real part, imaginary part"
                                                                     : "row, column, value")
                                      : (complex_field ? "real part, imaginary part" : "value"),
                                n));
        std::int64_t i = 0, j = 0;
        if (coord) {
            for (int d = 0; d < 2; ++d) {
                std::int64_t& x = d == 0 ? i : j;
                const std::int64_t top = d == 0 ? h.rows : h.cols;
                if (!parse_int(tok[std::size_t(d)], x))
                    rd.fail(fmt::format("'{}' is not an integer {} index", excerpt(tok[std::size_t(d)]),
                                        d == 0 ? "row" : "column"));
                if (x < 1 || x > top)
                    rd.fail(fmt::format("{} index {} is out of range 1..{}", d == 0 ? "row" : "column", x, top));
                --x;
            }
        } else {
            i = ai;
            j = aj;
            if (++ai == h.rows) {
                ++aj;
                ai = h.symmetry == MmSymmetry::general ? 0 : h.symmetry == MmSymmetry::skew_symmetric ? aj + 1 : aj;
            }
        }
        const std::size_t first = coord ? 2 : 0;
        T v{};
        if (h.field == MmField::pattern) {
            v = T(1);
        } else if (complex_field) {
            if constexpr (is_complex_v<T>)
                v = T(parse_real<R>(rd, tok[first], false, opt), parse_real<R>(rd, tok[first + 1], false, opt));
        } else {
            v = T(parse_real<R>(rd, tok[first], integer, opt));
        }
        if (!coord && v == T(0)) continue;
        push(i, j, v);
        if (i == j) {
            if (h.symmetry == MmSymmetry::skew_symmetric && v != T(0))
                rd.fail("a skew-symmetric matrix has a zero diagonal, but this entry is on it");
            if constexpr (is_complex_v<T>)
                if (h.symmetry == MmSymmetry::hermitian && v.imag() != R(0))
                    rd.fail("a hermitian matrix has a real diagonal, but this entry has an imaginary part");
            continue;
        }
        if (h.symmetry == MmSymmetry::symmetric) push(j, i, v);
        if (h.symmetry == MmSymmetry::skew_symmetric) push(j, i, -v);
        if (h.symmetry == MmSymmetry::hermitian) {
            if constexpr (is_complex_v<T>) push(j, i, std::conj(v));
        }
    }
    if (rd.next_data_line())
        rd.fail(fmt::format("more entries than declared: the size line (line {}) declares {}; '{}' is one too many",
                            rd.size_line(), h.entries, excerpt(rd.line())));
    // The row pointers are the one allocation that follows the declared size rather than the
    // entries read: allowed up to row_allowance rows, and past it for one entry line in 64 rows.
    constexpr std::uint64_t rows_per_entry = 64;
    const auto allowance = std::uint64_t(std::max<std::int64_t>(opt.row_allowance, 0));
    const std::uint64_t held =
        std::uint64_t(h.entries) > UINT64_MAX / rows_per_entry ? UINT64_MAX : std::uint64_t(h.entries) * rows_per_entry;
    if (std::uint64_t(h.rows) > std::max(allowance, held))
        rd.fail(rd.size_line(),
                fmt::format("a {} x {} matrix with {} entr{}: its CSR would need {} row pointers, but a file may "
                            "declare at most {} rows (ReadOptions::row_allowance) or {} per entry line it holds",
                            h.rows, h.cols, h.entries, h.entries == 1 ? "y" : "ies", std::uint64_t(h.rows) + 1,
                            allowance, rows_per_entry));
    const auto out_of_memory = [&] {
        return fmt::format("a {} x {} matrix with {} stored entries: its CSR ({} row pointers) does not fit in memory",
                           h.rows, h.cols, vals.size(), std::uint64_t(h.rows) + 1);
    };
    try {
        return detail::coo_to_csr<T, I, std::int64_t>(h.rows, h.cols, ri, ci, vals);
    } catch (const InvalidArgument& e) { // the expanded nnz does not fit I
        rd.fail(rd.size_line(), std::string(e.what()).substr(std::string_view("xgpu: sparse: ").size()));
    } catch (const std::bad_alloc&) {
        rd.fail(rd.size_line(), out_of_memory());
    } catch (const std::length_error&) {
        rd.fail(rd.size_line(), out_of_memory());
    }
}

std::ifstream open_in(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InvalidArgument("xgpu: cannot open Matrix Market file '" + path + "' for reading");
    return f;
}

template <class T> bool same_bits(const T& a, const T& b) {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Whether the entry above the diagonal is what the reader makes of the one below it, to the bit
// (0.0 == -0.0, but a file cannot store both); a diagonal entry, whether it can be stored.
template <class T> bool mirrored(MmSymmetry s, const T& lower, const T& upper, bool diagonal) {
    if (diagonal) {
        if (s == MmSymmetry::skew_symmetric) return false;
        if constexpr (is_complex_v<T>)
            if (s == MmSymmetry::hermitian) return lower.imag() == 0;
        return true;
    }
    switch (s) {
    case MmSymmetry::symmetric: return same_bits(upper, lower);
    case MmSymmetry::skew_symmetric: return same_bits(upper, T(-lower));
    case MmSymmetry::hermitian:
        if constexpr (is_complex_v<T>)
            return same_bits(upper, std::conj(lower));
        else
            return same_bits(upper, lower);
    case MmSymmetry::general: return true;
    }
    return false;
}

} // namespace

MatrixMarketHeader read_matrix_market_header(std::istream& in, const std::string& name) {
    Reader rd(in, name);
    return rd.header();
}

MatrixMarketHeader read_matrix_market_header(const std::string& path) {
    auto f = open_in(path);
    return read_matrix_market_header(f, path);
}

template <Value T, Index I>
HostCsr<T, I> read_matrix_market(std::istream& in, const std::string& name, const ReadOptions& options) {
    return read<T, I>(in, name, options);
}

template <Value T, Index I> HostCsr<T, I> read_matrix_market(const std::string& path, const ReadOptions& options) {
    auto f = open_in(path);
    return read<T, I>(f, path, options);
}

template <Value T, Index I>
void write_matrix_market(std::ostream& out, const HostCsr<T, I>& a, const WriteOptions& options) {
    a.validate();
    const MmSymmetry sym = options.symmetry;
    if (sym == MmSymmetry::hermitian && !is_complex_v<T>)
        throw InvalidArgument("xgpu: write_matrix_market: hermitian needs complex values; write a real matrix as "
                              "symmetric");
    // Symmetric storage keeps the lower triangle: check that the upper one mirrors it exactly.
    const HostCsr<T, I>* src = &a;
    HostCsr<T, I> canon;
    if (sym != MmSymmetry::general) {
        if (a.rows != a.cols)
            throw InvalidArgument(fmt::format("xgpu: write_matrix_market: a {} x {} matrix cannot be {}", a.rows,
                                              a.cols, type_name(sym)));
        if (!a.is_canonical()) {
            std::vector<I> ri(a.nnz());
            for (std::size_t r = 0; r < std::size_t(a.rows); ++r)
                std::fill(ri.begin() + a.row_ptr[r], ri.begin() + a.row_ptr[r + 1], I(r));
            canon = from_coo<T, I>(a.rows, a.cols, ri, a.col_idx, a.values);
            src = &canon;
        }
        const HostCsr<T, I> t = transpose(*src);
        bool ok = t.row_ptr == src->row_ptr && t.col_idx == src->col_idx;
        for (std::size_t r = 0; ok && r < std::size_t(a.rows); ++r)
            for (auto k = std::size_t(src->row_ptr[r]); ok && k < std::size_t(src->row_ptr[r + 1]); ++k) {
                const auto c = std::size_t(src->col_idx[k]);
                ok = mirrored(sym, src->values[k], t.values[k], c == r);
            }
        if (!ok)
            throw InvalidArgument(fmt::format("xgpu: write_matrix_market: the matrix is not exactly {} (to the bit){}",
                                              type_name(sym),
                                              sym == MmSymmetry::skew_symmetric ? " or has diagonal entries"
                                              : sym == MmSymmetry::hermitian    ? " or has a complex diagonal"
                                                                                : ""));
    }
    std::size_t count = 0;
    for (std::size_t r = 0; r < std::size_t(a.rows); ++r)
        for (auto k = std::size_t(src->row_ptr[r]); k < std::size_t(src->row_ptr[r + 1]); ++k) {
            const auto c = std::size_t(src->col_idx[k]);
            count += sym == MmSymmetry::general || c < r || (c == r && sym != MmSymmetry::skew_symmetric);
        }

    fmt::memory_buffer buf;
    fmt::format_to(std::back_inserter(buf), "%%MatrixMarket matrix coordinate {} {}\n",
                   is_complex_v<T> ? "complex" : "real", type_name(sym));
    std::string_view comment = options.comment;
    while (!comment.empty()) {
        const auto nl = comment.find('\n');
        fmt::format_to(std::back_inserter(buf), "%{}\n", comment.substr(0, nl));
        comment = nl == std::string_view::npos ? std::string_view() : comment.substr(nl + 1);
    }
    fmt::format_to(std::back_inserter(buf), "{} {} {}\n", a.rows, a.cols, count);
    for (std::size_t r = 0; r < std::size_t(a.rows); ++r) {
        for (auto k = std::size_t(src->row_ptr[r]); k < std::size_t(src->row_ptr[r + 1]); ++k) {
            const auto c = std::size_t(src->col_idx[k]);
            if (sym != MmSymmetry::general && (c > r || (c == r && sym == MmSymmetry::skew_symmetric))) continue;
            const T& v = src->values[k];
            if constexpr (is_complex_v<T>)
                fmt::format_to(std::back_inserter(buf), "{} {} {} {}\n", r + 1, c + 1, v.real(), v.imag());
            else
                fmt::format_to(std::back_inserter(buf), "{} {} {}\n", r + 1, c + 1, v);
        }
        if (buf.size() > (1 << 16)) {
            out.write(buf.data(), std::streamsize(buf.size()));
            buf.clear();
        }
    }
    out.write(buf.data(), std::streamsize(buf.size()));
    if (!out) throw Error("xgpu: write_matrix_market: the stream failed while writing");
}

template <Value T, Index I>
void write_matrix_market(const std::string& path, const HostCsr<T, I>& a, const WriteOptions& options) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw InvalidArgument("xgpu: cannot open '" + path + "' for writing");
    write_matrix_market(f, a, options);
    f.close();
    if (!f) throw Error("xgpu: write_matrix_market: writing '" + path + "' failed");
}

#define XGPU_SPARSE_INSTANTIATE(T, I)                                                                                  \
    template HostCsr<T, I> read_matrix_market(std::istream&, const std::string&, const ReadOptions&);                  \
    template HostCsr<T, I> read_matrix_market(const std::string&, const ReadOptions&);                                 \
    template void write_matrix_market(std::ostream&, const HostCsr<T, I>&, const WriteOptions&);                       \
    template void write_matrix_market(const std::string&, const HostCsr<T, I>&, const WriteOptions&);
XGPU_SPARSE_TEMPLATES(XGPU_SPARSE_INSTANTIATE)
#undef XGPU_SPARSE_INSTANTIATE

} // namespace sparse
} // namespace xgpu
