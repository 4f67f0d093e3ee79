// The CUB peer of algorithm-bench's sorts (CUB's cub::DeviceRadixSort and cub::DeviceSegmentedSort, from the
// CUDA toolkit), the same rows on the same sizes: sort of uint32, float32 and uint64 keys, pairs
// of uint32 keys and values, float32 keys with int64 indices (argsort: the indices made
// beforehand, not timed), and rows of 64 float32 keys. Medians of timed runs after a warm-up,
// CUDA events, separate input and output buffers as numpy.sort's copy.
//
//   nvcc -O3 -std=c++17 -arch=native -o /tmp/cub-sort bench/peers/cub_sort.cu && /tmp/cub-sort [n]
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CHECK(x)                                                                                                       \
    do {                                                                                                               \
        cudaError_t e = (x);                                                                                           \
        if (e != cudaSuccess) {                                                                                        \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                                               \
            std::exit(1);                                                                                              \
        }                                                                                                              \
    } while (0)

template <class T> __global__ void fill_random(T* p, std::size_t n, std::uint64_t seed) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i >= n) return;
    std::uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    if constexpr (std::is_same_v<T, float>)
        p[i] = float(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
    else
        p[i] = T(z);
}

__global__ void iota64(std::int64_t* p, std::size_t n) {
    const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
    if (i < n) p[i] = std::int64_t(i);
}

template <class T> T* random_array(std::size_t n, std::uint64_t seed) {
    T* p;
    CHECK(cudaMalloc(&p, n * sizeof(T)));
    fill_random<<<unsigned((n + 255) / 256), 256>>>(p, n, seed);
    return p;
}

double median_ms(int reps, const std::function<void()>& work) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int r = 0; r < 2; ++r)
        work();
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
        cudaEventRecord(a);
        work();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float t;
        cudaEventElapsedTime(&t, a, b);
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

void report(const char* work, double n, double ms) {
    std::printf("| CUB %s | %.0f | %.3f | %.2f |\n", work, n, ms, n / (ms * 1e6));
}

template <class K> void sort_keys(const char* work, std::size_t n, int reps) {
    K* in = random_array<K>(n, 1);
    K* out;
    CHECK(cudaMalloc(&out, n * sizeof(K)));
    std::size_t bytes = 0;
    cub::DeviceRadixSort::SortKeys(nullptr, bytes, in, out, n);
    void* tmp;
    CHECK(cudaMalloc(&tmp, bytes));
    report(work, double(n), median_ms(reps, [&] { cub::DeviceRadixSort::SortKeys(tmp, bytes, in, out, n); }));
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    CHECK(cudaFree(tmp));
}

template <class K, class V> void sort_pairs(const char* work, std::size_t n, int reps, bool indices) {
    K* kin = random_array<K>(n, 2);
    V* vin = random_array<V>(n, 3);
    if constexpr (std::is_same_v<V, std::int64_t>)
        if (indices) iota64<<<unsigned((n + 255) / 256), 256>>>(vin, n);
    K* kout;
    V* vout;
    CHECK(cudaMalloc(&kout, n * sizeof(K)));
    CHECK(cudaMalloc(&vout, n * sizeof(V)));
    std::size_t bytes = 0;
    cub::DeviceRadixSort::SortPairs(nullptr, bytes, kin, kout, vin, vout, n);
    void* tmp;
    CHECK(cudaMalloc(&tmp, bytes));
    report(work, double(n),
           median_ms(reps, [&] { cub::DeviceRadixSort::SortPairs(tmp, bytes, kin, kout, vin, vout, n); }));
    CHECK(cudaFree(kin));
    CHECK(cudaFree(vin));
    CHECK(cudaFree(kout));
    CHECK(cudaFree(vout));
    CHECK(cudaFree(tmp));
}

void sort_rows(std::size_t rows, std::size_t len, int reps) {
    const std::size_t n = rows * len;
    float* in = random_array<float>(n, 4);
    float* out;
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    std::vector<int> h(rows + 1);
    for (std::size_t r = 0; r <= rows; ++r)
        h[r] = int(r * len);
    int* offsets;
    CHECK(cudaMalloc(&offsets, h.size() * sizeof(int)));
    CHECK(cudaMemcpy(offsets, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
    std::size_t bytes = 0;
    cub::DeviceSegmentedSort::StableSortKeys(nullptr, bytes, in, out, int(n), int(rows), offsets, offsets + 1);
    void* tmp;
    CHECK(cudaMalloc(&tmp, bytes));
    char work[96];
    std::snprintf(work, sizeof work, "segmented sort %zu rows of %zu float32", rows, len);
    report(work, double(n), median_ms(reps, [&] {
               cub::DeviceSegmentedSort::StableSortKeys(tmp, bytes, in, out, int(n), int(rows), offsets, offsets + 1);
           }));
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    CHECK(cudaFree(offsets));
    CHECK(cudaFree(tmp));
}

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::size_t(1) << 28;
    const int reps = 15;
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    std::printf("cub-sort: %s, CUB %d.%d.%d\n\n| work | keys | ms | GKeys/s |\n|---|---|---|---|\n", p.name,
                CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
    sort_keys<std::uint32_t>("sort uint32", n, reps);
    sort_keys<float>("sort float32", n, reps);
    sort_keys<std::uint64_t>("sort uint64", n, reps);
    sort_pairs<std::uint32_t, std::uint32_t>("sort pairs uint32 -> uint32", n / 4, reps, false);
    sort_pairs<float, std::int64_t>("sort pairs float32 -> int64 (argsort)", n / 4, reps, true);
    sort_rows(n / 256, 64, reps);
    return 0;
}
