// CUB's DeviceScan::InclusiveSum and ExclusiveSum for every element type parskel.scan adds in
// (int32, int64, float32, float64; uint32 and uint64 add as their signed twins), on data that
// stays on the device: the reference of `benchmarks/scan_dtypes.py`, which builds and runs it.
//
//   nvcc -O3 -arch=native -o /tmp/cub_scans benchmarks/cub_scans.cu && /tmp/cub_scans 24 28
//
// Each figure is the median of 15 calls between CUDA events after 3 warm-ups, with the temporary
// storage allocated once beforehand; the last element of each result is checked against the
// host's sum. One line per work and size: work, log2 of the size, milliseconds, GB/s moved
// (each element read once and written once).
#include <cub/cub.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(call)                                                                               \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));      \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

template <typename T> struct Name;
template <> struct Name<int> { static constexpr const char *text = "int32"; };
template <> struct Name<long long> { static constexpr const char *text = "int64"; };
template <> struct Name<float> { static constexpr const char *text = "float32"; };
template <> struct Name<double> { static constexpr const char *text = "float64"; };

template <typename Call> static float median_ms(Call call)
{
    cudaEvent_t start, end;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&end));
    for (int i = 0; i < 3; ++i)
        call();
    std::vector<float> times;
    for (int i = 0; i < 15; ++i) {
        CHECK(cudaEventRecord(start));
        call();
        CHECK(cudaEventRecord(end));
        CHECK(cudaEventSynchronize(end));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, end));
        times.push_back(ms);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(end));
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

template <typename T> static void scans(int log2n)
{
    size_t n = size_t(1) << log2n;
    std::mt19937 rng(log2n);
    std::vector<T> host(n);
    for (auto &x : host)  // small values: integer sums stay exact, float sums stay comparable
        x = T(rng() % 1000) / (std::is_floating_point<T>::value ? T(1000) : T(1));
    T *in, *out;
    CHECK(cudaMalloc(&in, n * sizeof(T)));
    CHECK(cudaMalloc(&out, n * sizeof(T)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    for (int exclusive = 0; exclusive < 2; ++exclusive) {
        size_t bytes = 0;
        if (exclusive)
            CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, int(n)));
        else
            CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, int(n)));
        void *tmp = nullptr;
        CHECK(cudaMalloc(&tmp, bytes ? bytes : 1));
        float ms = median_ms([&] {
            if (exclusive)
                CHECK(cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, int(n)));
            else
                CHECK(cub::DeviceScan::InclusiveSum(tmp, bytes, in, out, int(n)));
        });
        T last;
        CHECK(cudaMemcpy(&last, out + n - 1, sizeof(T), cudaMemcpyDeviceToHost));
        double expect = 0;
        unsigned wrapped = 0;  // int32 sums wrap around: compare them as unsigned
        for (size_t i = 0; i + exclusive < n; ++i) {
            expect += double(host[i]);
            wrapped += unsigned(static_cast<long long>(host[i]));
        }
        bool wrong = std::is_same<T, int>::value ? unsigned(static_cast<long long>(last)) != wrapped
                                                 : std::abs(double(last) - expect) > 1e-3 * std::abs(expect);
        if (wrong)
            std::printf("# %s scan: last element %g, host %g\n", Name<T>::text, double(last), expect);
        std::printf("%s scan %-8s 2^%d %9.3f ms %8.1f GB/s\n", exclusive ? "exclusive" : "inclusive", Name<T>::text,
                    log2n, ms, 2.0 * n * sizeof(T) / (ms * 1e-3) / 1e9);
        std::fflush(stdout);
        CHECK(cudaFree(tmp));
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
}

int main(int argc, char **argv)
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("# %s, CUB %d.%d.%d\n", prop.name, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
    for (int a = 1; a < argc; ++a) {
        int log2n = std::atoi(argv[a]);
        scans<int>(log2n);
        scans<long long>(log2n);
        scans<float>(log2n);
        scans<double>(log2n);
    }
    return 0;
}
