// Eigen interop (xgpu/sparse_eigen.hpp): Eigen::SparseMatrix, row- and column-major, to host CSR
// and back, against Eigen's own element access, on fresh random triplets (with duplicates, which
// Eigen's setFromTriplets sums as from_coo does).
#include <complex>
#include <cstdint>
#include <vector>

#include <xgpu/sparse_eigen.hpp>

#include "support.hpp"

using namespace xgpu;
using namespace xgpu::sparse;
using Catch::Matchers::Contains;

namespace {

template <class T> T value(std::mt19937_64& g) {
    std::uniform_real_distribution<double> d(-1, 1);
    if constexpr (std::is_floating_point_v<T>)
        return T(d(g));
    else
        return T(typename T::value_type(d(g)), typename T::value_type(d(g)));
}

template <class T, int Options, class EI> void check(std::int64_t rows, std::int64_t cols, std::size_t n) {
    std::uniform_int_distribution<std::int64_t> r(0, std::max<std::int64_t>(rows - 1, 0)),
        c(0, std::max<std::int64_t>(cols - 1, 0));
    std::vector<Eigen::Triplet<T, EI>> trip;
    std::vector<EI> ri, ci;
    std::vector<T> vi;
    for (std::size_t k = 0; rows > 0 && cols > 0 && k < n; ++k) {
        ri.push_back(EI(r(test::rng())));
        ci.push_back(EI(c(test::rng())));
        vi.push_back(value<T>(test::rng()));
        trip.emplace_back(ri.back(), ci.back(), vi.back());
    }
    Eigen::SparseMatrix<T, Options, EI> m(rows, cols);
    m.setFromTriplets(trip.begin(), trip.end());

    const auto h = from_eigen(m);
    static_assert(std::is_same_v<decltype(h), const HostCsr<T, EI>>);
    REQUIRE_NOTHROW(h.validate());
    CHECK(h.is_canonical());
    CHECK((h.rows == rows && h.cols == cols && h.nnz() == std::size_t(m.nonZeros())));
    for (std::int64_t i = 0; i < rows; ++i)
        for (auto k = h.row_ptr[std::size_t(i)]; k < h.row_ptr[std::size_t(i) + 1]; ++k)
            CHECK(h.values[std::size_t(k)] == m.coeff(i, h.col_idx[std::size_t(k)]));
    // The same matrix as from_coo builds from the triplets (summed in the same order: to the bit
    // only where there are no duplicates, so compare within rounding).
    const auto ref = from_coo<T, EI>(rows, cols, ri, ci, vi);
    CHECK(ref.row_ptr == h.row_ptr);
    CHECK(ref.col_idx == h.col_idx);
    for (std::size_t k = 0; k < h.nnz(); ++k)
        CHECK(std::abs(ref.values[k] - h.values[k]) <= 1e-5);

    const auto back = to_eigen(h);
    CHECK(back.rows() == rows);
    CHECK(back.cols() == cols);
    const Eigen::SparseMatrix<T, Options, EI> same(back);
    // (Eigen's norm asserts on an empty matrix: compare only where there is one.)
    if (rows > 0 && cols > 0) CHECK((Eigen::SparseMatrix<T, Options, EI>(same - m)).norm() == 0);
    // Other index width.
    const auto wide = from_eigen<std::int64_t>(m);
    CHECK(std::equal(wide.col_idx.begin(), wide.col_idx.end(), h.col_idx.begin(), h.col_idx.end()));
    CHECK(wide.values == h.values);
}

} // namespace

TEST_CASE("Eigen sparse matrices to host CSR and back", "[sparse]") {
    for (auto [rows, cols, n] : {std::tuple<std::int64_t, std::int64_t, std::size_t>{0, 0, 0},
                                 {1, 1, 3},
                                 {50, 50, 300},
                                 {80, 7, 500},
                                 {5, 120, 200},
                                 {40, 40, 0}}) {
        INFO(rows << " x " << cols << ", " << n << " triplets");
        check<double, Eigen::ColMajor, int>(rows, cols, n);
        check<double, Eigen::RowMajor, int>(rows, cols, n);
        check<float, Eigen::ColMajor, std::int64_t>(rows, cols, n);
        check<std::complex<double>, Eigen::RowMajor, std::int64_t>(rows, cols, n);
        check<std::complex<float>, Eigen::ColMajor, int>(rows, cols, n);
    }
    // An uncompressed matrix (inserted, not compressed) converts the same way.
    Eigen::SparseMatrix<double> u(4, 4);
    u.reserve(Eigen::VectorXi::Constant(4, 3));
    u.insert(3, 1) = 2;
    u.insert(0, 1) = 1;
    u.insert(2, 2) = -1;
    REQUIRE(!u.isCompressed());
    const auto h = from_eigen(u);
    CHECK(h.row_ptr == std::vector<int>{0, 1, 1, 2, 3});
    CHECK(h.col_idx == std::vector<int>{1, 2, 1});
    CHECK(h.values == std::vector<double>{1, -1, 2});
    // A CSR that is not valid is refused before Eigen sees it.
    auto bad = h;
    bad.col_idx[0] = 9;
    CHECK_THROWS_WITH(to_eigen(bad), Contains("out of range"));
}
