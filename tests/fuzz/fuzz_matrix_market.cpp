// libFuzzer: the Matrix Market reader (xgpu/sparse.hpp) on arbitrary text. The first byte picks
// the value type, the index type and whether NaN/Inf are allowed; the rest is the file. Whatever
// the reader accepts must be valid canonical CSR, and written and read again it must come back
// the same bits (NaNs as NaNs); in symmetric storage too where the writer accepts that. Anything
// refused must be a ParseError (file and line), never another exception, a crash or an allocation
// the declared size alone asks for.
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

#include "xgpu/sparse.hpp"

namespace {

using namespace xgpu::sparse;

template <class R> bool same_bits(R a, R b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(R)) == 0;
}
template <class R> bool same_bits(std::complex<R> a, std::complex<R> b) {
    return same_bits(a.real(), b.real()) && same_bits(a.imag(), b.imag());
}

template <class T, class I> void check_same(const HostCsr<T, I>& a, const HostCsr<T, I>& b) {
    if (a.rows != b.rows || a.cols != b.cols || a.row_ptr != b.row_ptr || a.col_idx != b.col_idx ||
        a.values.size() != b.values.size())
        __builtin_trap();
    for (std::size_t k = 0; k < a.values.size(); ++k)
        if (!same_bits(a.values[k], b.values[k])) __builtin_trap();
}

template <class T, class I> void run(const std::string& text, const ReadOptions& opt) {
    HostCsr<T, I> a;
    try {
        std::istringstream in(text);
        a = read_matrix_market<T, I>(in, "fuzz.mtx", opt);
    } catch (const xgpu::ParseError& e) {
        if (e.file() != "fuzz.mtx" || std::string(e.what()).find("fuzz.mtx:") == std::string::npos) __builtin_trap();
        return;
    }
    a.validate();
    if (!a.is_canonical()) __builtin_trap();
    for (const MmSymmetry s :
         {MmSymmetry::general, MmSymmetry::symmetric, MmSymmetry::skew_symmetric, MmSymmetry::hermitian}) {
        std::stringstream io;
        WriteOptions w;
        w.symmetry = s;
        try {
            write_matrix_market(io, a, w);
        } catch (const xgpu::InvalidArgument&) {
            if (s == MmSymmetry::general) __builtin_trap(); // general storage takes any valid matrix
            continue;
        }
        check_same(a, read_matrix_market<T, I>(io, "again.mtx", opt));
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    // Shapes of any declared size, with the default row allowance: memory must follow what the
    // input holds, or the size is refused (within -rss_limit_mb=2048).
    ReadOptions opt;
    opt.allow_nonfinite = data[0] & 1;
    switch ((data[0] >> 1) % 4) {
    case 0: run<double, std::int32_t>(text, opt); break;
    case 1: run<float, std::int64_t>(text, opt); break;
    case 2: run<std::complex<double>, std::int64_t>(text, opt); break;
    default: run<std::complex<float>, std::int32_t>(text, opt); break;
    }
    return 0;
}
