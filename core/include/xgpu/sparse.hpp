// xgpu::sparse: sparse matrices, on the host and on a context.
//
//   auto h = xgpu::sparse::read_matrix_market<double>("A.mtx");   // HostCsr<double, int32_t>
//   auto s = xgpu::sparse::row_stats(h);                         // row lengths: min, mean, max, spread
//   xgpu::sparse::Csr<double> A(ctx, h);                         // on the device
//   auto d = A.diagonal();                                       // Array<double>
//   xgpu::sparse::write_matrix_market("B.mtx", A.to_host());
//
// HostCsr is plain CSR in std::vectors (rows, cols, row_ptr, col_idx, values), T in float, double,
// complex<float>, complex<double>, indices int32_t or int64_t. Everything that builds one checks
// it first and throws InvalidArgument naming the problem; nothing is half-built. The builders
// (from_coo, the Matrix Market reader) give canonical CSR: columns sorted within each row,
// duplicates summed (as scipy.sparse). Csr is the matrix on a Context; the device formats that
// SpMV uses are conversions kept with it. Eigen interop is in xgpu/sparse_eigen.hpp.
#pragma once

#include <complex>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "xgpu/array.hpp"
#include "xgpu/context.hpp"
#include "xgpu/error.hpp"
#include "xgpu/operator.hpp"

namespace xgpu {

// Text input that does not parse (a Matrix Market file). The message reads "xgpu: file:line: ...";
// file() and line() say the same (a file that ends too early names its last line).
class ParseError : public InvalidArgument {
public:
    ParseError(const std::string& what, std::string file, std::size_t line);
    const std::string& file() const noexcept { return file_; }
    std::size_t line() const noexcept { return line_; }

private:
    std::string file_;
    std::size_t line_;
};

namespace sparse {

template <class T>
concept Value = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::complex<float>> ||
    std::is_same_v<T, std::complex<double>>;
template <class I>
concept Index = std::is_same_v<I, std::int32_t> || std::is_same_v<I, std::int64_t>;

// Compressed sparse rows on the host. row_ptr has rows + 1 entries, rising from 0 to nnz; the
// entries of row r are col_idx[row_ptr[r] .. row_ptr[r+1]) with their values. An empty rows x
// cols matrix has row_ptr all zeros.
template <Value T, Index I = std::int32_t> struct HostCsr {
    using value_type = T;
    using index_type = I;

    std::int64_t rows = 0, cols = 0;
    std::vector<I> row_ptr{0};
    std::vector<I> col_idx;
    std::vector<T> values;

    std::size_t nnz() const { return values.size(); }
    // Throws InvalidArgument naming the first problem: a shape or nnz that does not fit I (saying
    // to use int64), sizes that do not match, row pointers not starting at 0, falling or not
    // ending at nnz, a column index out of range.
    void validate() const;
    // Columns strictly rising within every row (sorted, no duplicates). Assumes a valid matrix.
    bool is_canonical() const;
    // Bit for bit (NaNs with the same bits are equal; -0.0 differs from 0.0).
    bool identical(const HostCsr& other) const;
};

// Throws InvalidArgument, saying to use int64, unless a rows x cols matrix of nnz entries can be
// indexed with I (and the shape is not negative).
template <Index I> void check_index_width(std::int64_t rows, std::int64_t cols, std::uint64_t nnz);

// Checks CSR arrays as HostCsr::validate does, before anything is built from them.
template <Index I>
void validate_csr(std::int64_t rows, std::int64_t cols, std::span<const I> row_ptr, std::span<const I> col_idx,
                  std::size_t nvalues);

// From COO triplets in any order (row[k], col[k], val[k]): duplicates summed in input order,
// columns sorted within rows (scipy's coo_matrix.tocsr()). Indices are checked before anything
// is allocated.
template <Value T, Index I>
HostCsr<T, I> from_coo(std::int64_t rows, std::int64_t cols, std::span<const I> row, std::span<const I> col,
                       std::span<const T> val);

// Row lengths: min, max, mean and standard deviation (population; all 0 for a matrix without rows).
struct RowStats {
    std::int64_t min = 0, max = 0;
    double mean = 0, stddev = 0;
};
template <Value T, Index I> RowStats row_stats(const HostCsr<T, I>& a);
// The transpose (not conjugated), canonical when a is.
template <Value T, Index I> HostCsr<T, I> transpose(const HostCsr<T, I>& a);
// The main diagonal, min(rows, cols) values; duplicates summed, absent entries 0.
template <Value T, Index I> std::vector<T> diagonal(const HostCsr<T, I>& a);
// Whether a equals its transpose (not conjugated): empty if so, else the first entry that differs
// from its mirror, as "entry (i, j) = v but (j, i) = w" (duplicates summed, absent entries 0; two
// values agree within rtol of the larger magnitude). A non-square matrix is described as such.
template <Value T, Index I> std::string asymmetry(const HostCsr<T, I>& a, double rtol = 1e-12);

// The negative Laplacian with zero Dirichlet boundaries on an nx x ny x nz grid (nz = 1: 2-D, 5
// points; else 7 points), natural order (x fastest), canonical: the matrix of the Poisson problem
// that Laplacian2D/3D (xgpu/operator.hpp) apply without storing it. The sizes are checked against
// I before anything is allocated.
template <Value T, Index I = std::int32_t> HostCsr<T, I> poisson(std::int64_t nx, std::int64_t ny, std::int64_t nz = 1);
// Rows first .. first + count of it (columns in the whole grid's numbering): each process's share
// of a distributed Poisson matrix without the whole.
template <Value T, Index I = std::int32_t>
HostCsr<T, I> poisson_rows(std::int64_t nx, std::int64_t ny, std::int64_t nz, std::int64_t first, std::int64_t count);

// ---- Matrix Market ----------------------------------------------------------------------------
//
// Coordinate (real, integer, pattern, complex; general, symmetric, skew-symmetric, hermitian) and
// array (dense, column-major) files. Symmetric storage is expanded; exact zeros of an array file
// are dropped (scipy's csr_matrix of the dense matrix); pattern entries are 1. A complex file
// cannot be read as a real T. Every error is a ParseError naming the file and the line, with
// bytes that are not printable ASCII shown as \xNN; counts derived from the size line are
// checked for overflow.

enum class MmFormat { coordinate, array };
enum class MmField { real, integer, complex, pattern };
enum class MmSymmetry { general, symmetric, skew_symmetric, hermitian };

struct MatrixMarketHeader {
    MmFormat format = MmFormat::coordinate;
    MmField field = MmField::real;
    MmSymmetry symmetry = MmSymmetry::general;
    std::int64_t rows = 0, cols = 0;
    std::int64_t entries = 0; // the stored entries the file declares (an array file: what its size line implies)
};

struct ReadOptions {
    bool allow_nonfinite = false; // NaN and Inf values are refused unless set
    // The CSR holds rows + 1 row pointers whatever the file holds, so the declared row count alone
    // would decide that memory (a three-line file declaring 2^31 - 1 rows asks for gigabytes). A
    // file may declare up to row_allowance rows, and more only if it holds at least one entry line
    // for every 64 of them; past that the reader throws a ParseError naming the size. Raise it to
    // read hypersparse matrices; memory that then runs out is a ParseError too.
    std::int64_t row_allowance = std::int64_t(1) << 22;
};

// Reads the banner and the size line only.
MatrixMarketHeader read_matrix_market_header(std::istream& in, const std::string& name = "<stream>");
MatrixMarketHeader read_matrix_market_header(const std::string& path);

// `name` is what error messages call the stream.
template <Value T, Index I = std::int32_t>
HostCsr<T, I> read_matrix_market(std::istream& in, const std::string& name = "<stream>",
                                 const ReadOptions& options = {});
template <Value T, Index I = std::int32_t>
HostCsr<T, I> read_matrix_market(const std::string& path, const ReadOptions& options = {});

struct WriteOptions {
    // symmetric, skew_symmetric and hermitian store the lower triangle; the matrix must have that
    // symmetry exactly (InvalidArgument otherwise).
    MmSymmetry symmetry = MmSymmetry::general;
    std::string comment; // written as % lines after the banner
};

// Coordinate format, field real or complex; values in the shortest form that reads back to the
// same bits, so read(write(a)) is identical to a canonical a.
template <Value T, Index I>
void write_matrix_market(std::ostream& out, const HostCsr<T, I>& a, const WriteOptions& options = {});
template <Value T, Index I>
void write_matrix_market(const std::string& path, const HostCsr<T, I>& a, const WriteOptions& options = {});

// ---- On a context -------------------------------------------------------------------------------

// The device formats SpMV runs in (the products are below Csr).
//   csr_scalar: a row per work-item (the CPU shape; on CPUs a block of rows per work-item);
//   csr_vector: a slice of a work-group per row, as wide as the mean row length (2 to 32);
//   merge_path: load-balanced CSR (Merrill and Garland 2016): every work-item takes an equal share
//               of rows plus entries, whatever the row lengths;
//   sell:       SELL-C-sigma (Kreutzer et al. 2014): chunks of C rows sorted by length within
//               windows of sigma rows, padded per chunk, column-major inside a chunk;
//   packeted:   Garland and Bell's packets (PyCUDA's sparse/packeted.py): rows partitioned into
//               packets whose x and y slices fit a work-group's local memory, a work-group per
//               packet, and the entries that cross packets in a remainder run right after on the
//               same queue. Square matrices only: for any other, plan_spmv (and so spmv) runs the
//               format automatic picks instead, and says so in the plan;
//   automatic:  chosen from the row statistics and the device (XGPU_SPMV_FORMAT overrides it);
//               its rule never picks packeted, whose layout takes seconds to build (the tuner's
//               spmv_format family, with XGPU_AUTOTUNE on, may).
// sell and packeted keep their device layouts with the matrix, built from the CSR on first use;
// the others run on the CSR arrays themselves.
enum class Format { automatic, csr_scalar, csr_vector, merge_path, sell, packeted };
// Every format, automatic first.
std::span<const Format> formats();
const char* name(Format f);
// A format's name (any case); throws InvalidArgument naming the value and the accepted names.
Format parse_format(std::string_view value);

namespace detail {
class LayoutCache;
// Whether XGPU_SPMV_FORMAT fixes the format that automatic means.
bool format_forced();
} // namespace detail

// The matrix on a context: CSR arrays in device memory, with its shape, row statistics and
// diagonal. A handle: copies share the device arrays. Validated before anything is uploaded.
template <Value T, Index I = std::int32_t> class Csr {
public:
    using value_type = T;
    using index_type = I;

    Csr() = default;
    Csr(const Context& ctx, const HostCsr<T, I>& host);
    Csr(const Context& ctx, std::int64_t rows, std::int64_t cols, std::span<const I> row_ptr,
        std::span<const I> col_idx, std::span<const T> values);
    // From arrays already on the device (contiguous, on ctx), taken without a copy: the row
    // statistics, the diagonal and the checks (row pointers from 0 to nnz, never falling; columns
    // in range) run on the device, and only their results come back. Throws InvalidArgument or
    // ShapeError naming the problem.
    Csr(const Context& ctx, std::int64_t rows, std::int64_t cols, Array<I> row_ptr, Array<I> col_idx, Array<T> values);

    const Context& context() const { return ctx_; }
    std::int64_t rows() const { return rows_; }
    std::int64_t cols() const { return cols_; }
    Shape shape() const { return {std::size_t(rows_), std::size_t(cols_)}; }
    std::size_t nnz() const { return values_.size(); }
    const RowStats& row_stats() const { return stats_; }

    const Array<I>& row_ptr() const { return row_ptr_; }
    const Array<I>& col_idx() const { return col_idx_; }
    const Array<T>& values() const { return values_; }
    const Array<T>& diagonal() const { return diagonal_; }
    // Whether the columns rise strictly within every row (sorted, no duplicates), as checked when
    // the matrix was made: what multiply() needs of its right operand.
    bool canonical() const { return canonical_; }

    HostCsr<T, I> to_host() const;

    // As a linear operator (xgpu/operator.hpp): y = A*x, and y = alpha*A*x + beta*y.
    void apply(const Array<T>& x, Array<T>& y) const;
    void apply(T alpha, const Array<T>& x, T beta, Array<T>& y) const;
    // y = A*x with partial.size() work-groups' partial sums of x.y (FusedDotOperator): real
    // values, a square matrix, contiguous x and y, in csr_scalar (what `f` plans); false, having
    // done nothing, otherwise.
    bool apply_dot(const Array<T>& x, Array<T>& y, Array<T>& partial, Format f = Format::automatic) const;
    // Whether apply_dot fuses under `f` (real values, a csr_scalar plan with a work-item a row).
    bool fuses_dot(Format f = Format::automatic) const;
    // Its SpMV formats as interchangeable forms of the product (MultiFormOperator): the automatic
    // choice first, then the formats that run on the CSR arrays and SELL or packeted where their
    // layouts are built already; `fixed` where XGPU_SPMV_FORMAT fixes the automatic choice.
    OperatorForms<T> forms() const;
    // Every entry, index and row pointer read once, x and y once (TrafficOperator).
    double bytes_per_product() const {
        return double(nnz()) * double(sizeof(T) + sizeof(I)) + double(rows_ + 1) * sizeof(I) +
               double(rows_ + cols_) * sizeof(T);
    }
    // asymmetry(to_host(), rtol) (SymmetryCheckedOperator).
    std::string asymmetry(double rtol) const;

    // The milliseconds it took to build format f's device layout from the CSR (sell: kernels on the
    // device; packeted: download, the partition and layout on the host's threads, upload), once
    // built: spmv builds it on its first call in f and
    // reuses it after (copies of the matrix share it). Nothing before that, and nothing for the
    // formats that run on the CSR arrays themselves.
    std::optional<double> build_ms(Format f) const;
    // The share (0 to 1) of the entries that the packeted layout leaves to its remainder (the
    // entries whose row and column lie in different packets), once that layout is built.
    std::optional<double> remainder_share() const;

    // The layouts built from this matrix (internal: the format builders in core/src/sparse).
    detail::LayoutCache& layouts() const { return *layouts_; }

private:
    Context ctx_;
    std::int64_t rows_ = 0, cols_ = 0;
    RowStats stats_;
    Array<I> row_ptr_, col_idx_;
    Array<T> values_, diagonal_;
    bool canonical_ = true;
    std::shared_ptr<detail::LayoutCache> layouts_;
};

// ---- Sparse products on the device ----------------------------------------------------------------
//
// C = A * B (SpGEMM) for matrices on one context, B canonical: a symbolic pass counts each row's
// entries, a scan makes C's row pointers (an entry count that does not fit I is refused before C
// is allocated), and a numeric pass merges the rows of B that each row of A names: a work-item
// per row (on GPUs, the cursors of rows of up to 8 entries in registers); a work-group per row of
// A with more than 256 entries; on GPUs, a work-group sorting the products in local memory for
// rows of 24 entries or more, and where warps have a barrier (NVIDIA's) a warp per row of 8 to
// 128 entries first (longer rows then go to a work-group). C is canonical, made on the device (no
// host round trip), and the same on every run: each entry is summed in a fixed order (A's entry
// order, or a fixed tree over a warp's), without atomics.
template <Value T, Index I> Csr<T, I> multiply(const Csr<T, I>& a, const Csr<T, I>& b);
namespace detail {
// Which kernels multiply() and transpose() take: those chosen above, or (for tests, on any
// device) the sorting work-groups for every row they hold, the teams for every row they hold, or
// the work-item's merge (its registers for short rows as on GPUs) for every row up to 256
// entries. Process-wide.
enum class ProductPath { automatic, sort, team, merge };
void set_product_path(ProductPath p);
} // namespace detail
// The product's values anew, for A and B with the sparsity patterns that `c` = multiply(A', B')
// was made from (new values, same patterns): C's pattern is shared, only the numeric pass runs.
template <Value T, Index I> Csr<T, I> multiply_values(const Csr<T, I>& a, const Csr<T, I>& b, const Csr<T, I>& c);
// The transpose (not conjugated), canonical, made on the device.
template <Value T, Index I> Csr<T, I> transpose(const Csr<T, I>& a);

// ---- Sparse matrix-vector products ---------------------------------------------------------------

// What `f` means for A on its device: the format (never automatic) and its launch shape.
struct SpmvPlan {
    Format format;
    unsigned lanes;               // csr: work-items per row
    unsigned rows;                // csr: rows per work-item (one lane)
    unsigned items = 0;           // merge_path: merge items (rows plus entries) per work-item
    unsigned chunk = 0;           // sell: C, the rows of a chunk
    unsigned sigma = 0;           // sell: the rows of a sorting window (a multiple of C)
    unsigned threads = 0;         // packeted: work-items per packet (a work-group)
    std::int64_t packet_rows = 0; // packeted: the most rows a packet holds (its x and y slices fill local memory)
};
template <Value T, Index I> SpmvPlan plan_spmv(const Csr<T, I>& a, Format f = Format::automatic);

// y = alpha * A * x + beta * y, in format `f`. x has A.cols() elements and y A.rows() (any shape
// of that size; views are fine), both on A's context; y may share no memory with x or A. With
// beta == 0 y is only written (a NaN in it does not propagate), as BLAS. Everything is checked
// (ShapeError, InvalidArgument) before anything is enqueued.
template <Value T, Index I>
void spmv(const Csr<T, I>& a, const Array<T>& x, Array<T>& y, T alpha = T(1), T beta = T(0),
          Format f = Format::automatic);
// The same with alpha and beta on the device (one-element arrays, such as a reduction's
// DeviceScalar), read there and never on the host: the product goes to a temporary in format `f`,
// then y = alpha*t + beta*y in one pass (where beta is 0, y is only written, as above). Both are
// checked with the rest before anything is enqueued.
template <Value T, Index I>
void spmv(const Csr<T, I>& a, const Array<T>& x, Array<T>& y, const Array<T>& alpha, const Array<T>& beta,
          Format f = Format::automatic);

// The product into some rows of a taller y: y[at[i]] = alpha * (A x)_i + beta * y[at[i]] for each
// row i of A, whose rows are the rows of y that `at` names (A.rows() distinct indices): a block
// stored for its rows with entries only, as a distributed matrix's off-diagonal block. With d and
// partial (real values; d as long as y): each of partial.size() work-groups also adds its share
// of sum_i d[at[i]] * alpha * (A x)_i to partial[group], the rest of a dot product that
// Csr::apply_dot began there. x, y and `at` contiguous, on A's context; checked before any work.
template <Value T, Index I>
void spmv_rows(const Csr<T, I>& a, const Array<I>& at, const Array<T>& x, Array<T>& y, T alpha, T beta,
               const Array<T>* d = nullptr, Array<T>* partial = nullptr);

// Explicit instantiations live in core/src/sparse.
#define XGPU_SPARSE_TEMPLATES(X)                                                                                       \
    X(float, std::int32_t)                                                                                             \
    X(double, std::int32_t)                                                                                            \
    X(std::complex<float>, std::int32_t)                                                                               \
    X(std::complex<double>, std::int32_t)                                                                              \
    X(float, std::int64_t)                                                                                             \
    X(double, std::int64_t)                                                                                            \
    X(std::complex<float>, std::int64_t)                                                                               \
    X(std::complex<double>, std::int64_t)

#define XGPU_SPARSE_EXTERN(T, I)                                                                                       \
    extern template struct HostCsr<T, I>;                                                                              \
    extern template HostCsr<T, I> from_coo(std::int64_t, std::int64_t, std::span<const I>, std::span<const I>,         \
                                           std::span<const T>);                                                        \
    extern template RowStats row_stats(const HostCsr<T, I>&);                                                          \
    extern template HostCsr<T, I> transpose(const HostCsr<T, I>&);                                                     \
    extern template std::vector<T> diagonal(const HostCsr<T, I>&);                                                     \
    extern template std::string asymmetry(const HostCsr<T, I>&, double);                                               \
    extern template HostCsr<T, I> poisson(std::int64_t, std::int64_t, std::int64_t);                                   \
    extern template HostCsr<T, I> poisson_rows(std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t);  \
    extern template HostCsr<T, I> read_matrix_market(std::istream&, const std::string&, const ReadOptions&);           \
    extern template HostCsr<T, I> read_matrix_market(const std::string&, const ReadOptions&);                          \
    extern template void write_matrix_market(std::ostream&, const HostCsr<T, I>&, const WriteOptions&);                \
    extern template void write_matrix_market(const std::string&, const HostCsr<T, I>&, const WriteOptions&);           \
    extern template class Csr<T, I>;                                                                                   \
    extern template Csr<T, I> multiply(const Csr<T, I>&, const Csr<T, I>&);                                            \
    extern template Csr<T, I> multiply_values(const Csr<T, I>&, const Csr<T, I>&, const Csr<T, I>&);                   \
    extern template Csr<T, I> transpose(const Csr<T, I>&);                                                             \
    extern template SpmvPlan plan_spmv(const Csr<T, I>&, Format);                                                      \
    extern template void spmv(const Csr<T, I>&, const Array<T>&, Array<T>&, T, T, Format);                             \
    extern template void spmv(const Csr<T, I>&, const Array<T>&, Array<T>&, const Array<T>&, const Array<T>&, Format); \
    extern template void spmv_rows(const Csr<T, I>&, const Array<I>&, const Array<T>&, Array<T>&, T, T,                \
                                   const Array<T>*, Array<T>*);
XGPU_SPARSE_TEMPLATES(XGPU_SPARSE_EXTERN)
#undef XGPU_SPARSE_EXTERN
extern template void check_index_width<std::int32_t>(std::int64_t, std::int64_t, std::uint64_t);
extern template void check_index_width<std::int64_t>(std::int64_t, std::int64_t, std::uint64_t);
extern template void validate_csr(std::int64_t, std::int64_t, std::span<const std::int32_t>,
                                  std::span<const std::int32_t>, std::size_t);
extern template void validate_csr(std::int64_t, std::int64_t, std::span<const std::int64_t>,
                                  std::span<const std::int64_t>, std::size_t);

} // namespace sparse
} // namespace xgpu
