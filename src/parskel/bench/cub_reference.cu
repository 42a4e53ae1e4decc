// CUB's own figures on this GPU, the reference the GPU variants aim past: device-to-device copy,
// DeviceReduce::Sum (float32), DeviceScan::InclusiveSum and ExclusiveSum (int32),
// DeviceRadixSort::SortKeys and SortPairs (uint32), on data that stays on the device.
//
//   nvcc -O3 -arch=native -o /tmp/cub_reference src/parskel/bench/cub_reference.cu && /tmp/cub_reference 24 26 28
//
// With `scans` first (`/tmp/cub_reference scans 24 28`) it times the scans alone, of every type
// parskel.scan adds in: int32, int64, float32 and float64 (benchmarks/scan_dtypes.py runs it so).
//
// `parskel bench resident` builds it so (once, into parskel's cache folder) and runs it for its
// sizes where nvcc is on the PATH, beside parskel's calls on the same GPU.
//
// Each figure is the median of 15 calls between CUDA events after 3 warm-ups, with the temporary
// storage allocated once beforehand; every result is checked (sums against a host sum, the
// sort's order and the scan's last element against the host). One line per work and size:
// work, log2 of the size, milliseconds, and the rate (GB/s moved, or G elements per second).
#include <cub/cub.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CHECK(call)                                                                               \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));      \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

static float median_ms(const std::function<void()> &call)
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

static void report(const char *work, int log2n, float ms, double amount, const char *unit)
{
    std::printf("%-22s 2^%d %9.3f ms %8.1f %s\n", work, log2n, ms, amount / (ms * 1e-3) / 1e9, unit);
    std::fflush(stdout);
}

static void *scratch(size_t bytes)
{
    void *p = nullptr;
    CHECK(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

template <typename T> struct Name;
template <> struct Name<int> { static constexpr const char *text = "int32"; };
template <> struct Name<long long> { static constexpr const char *text = "int64"; };
template <> struct Name<float> { static constexpr const char *text = "float32"; };
template <> struct Name<double> { static constexpr const char *text = "float64"; };

// InclusiveSum and ExclusiveSum of 2^log2n small values of T (integer sums stay exact; int32's
// wrap, and are compared as unsigned), the last element of each checked against the host's sum.
template <typename T> static void scans(int log2n)
{
    size_t n = size_t(1) << log2n;
    std::mt19937 rng(log2n);
    std::vector<T> host(n);
    for (auto &x : host)
        x = T(rng() % 1000) / (std::is_floating_point<T>::value ? T(1000) : T(1));
    T *in = static_cast<T *>(scratch(n * sizeof(T))), *out = static_cast<T *>(scratch(n * sizeof(T)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    for (int exclusive = 0; exclusive < 2; ++exclusive) {
        size_t bytes = 0;
        if (exclusive)
            CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, int(n)));
        else
            CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, int(n)));
        void *tmp = scratch(bytes);
        float ms = median_ms([&] {
            if (exclusive)
                CHECK(cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, int(n)));
            else
                CHECK(cub::DeviceScan::InclusiveSum(tmp, bytes, in, out, int(n)));
        });
        T last;
        CHECK(cudaMemcpy(&last, out + n - 1, sizeof(T), cudaMemcpyDeviceToHost));
        double expect = 0;
        unsigned wrapped = 0;
        for (size_t i = 0; i + exclusive < n; ++i) {
            expect += double(host[i]);
            wrapped += unsigned(static_cast<long long>(host[i]));
        }
        bool wrong = std::is_same<T, int>::value ? unsigned(static_cast<long long>(last)) != wrapped
                                                 : std::abs(double(last) - expect) > 1e-3 * std::abs(expect);
        if (wrong)
            std::printf("# %s scan: last element %g, host %g\n", Name<T>::text, double(last), expect);
        char work[32];
        std::snprintf(work, sizeof work, "%s scan %s", exclusive ? "exclusive" : "inclusive", Name<T>::text);
        report(work, log2n, ms, 2.0 * n * sizeof(T), "GB/s");
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
    if (argc > 1 && std::string(argv[1]) == "scans") {
        for (int a = 2; a < argc; ++a) {
            int log2n = std::atoi(argv[a]);
            scans<int>(log2n);
            scans<long long>(log2n);
            scans<float>(log2n);
            scans<double>(log2n);
        }
        return 0;
    }
    for (int a = 1; a < argc; ++a) {
        int log2n = std::atoi(argv[a]);
        size_t n = size_t(1) << log2n;
        std::mt19937 rng(log2n);
        std::vector<unsigned> keys(n);
        for (auto &k : keys)
            k = rng();
        std::vector<float> reals(n);
        for (size_t i = 0; i < n; ++i)
            reals[i] = float(keys[i] >> 24) / 256.0f;

        unsigned *dk, *dv, *dk2, *dv2;
        float *df, *dsum;
        CHECK(cudaMalloc(&dk, n * 4));
        CHECK(cudaMalloc(&dv, n * 4));
        CHECK(cudaMalloc(&dk2, n * 4));
        CHECK(cudaMalloc(&dv2, n * 4));
        CHECK(cudaMalloc(&df, n * 4));
        CHECK(cudaMalloc(&dsum, 4));
        CHECK(cudaMemcpy(dk, keys.data(), n * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dv, keys.data(), n * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(df, reals.data(), n * 4, cudaMemcpyHostToDevice));

        float ms = median_ms([&] { CHECK(cudaMemcpyAsync(dk2, dk, n * 4, cudaMemcpyDeviceToDevice)); });
        report("copy", log2n, ms, 8.0 * n, "GB/s");

        size_t bytes = 0;
        CHECK(cub::DeviceReduce::Sum(nullptr, bytes, df, dsum, int(n)));
        void *tmp = scratch(bytes);
        ms = median_ms([&] { CHECK(cub::DeviceReduce::Sum(tmp, bytes, df, dsum, int(n))); });
        float sum = 0;
        CHECK(cudaMemcpy(&sum, dsum, 4, cudaMemcpyDeviceToHost));
        double host_sum = 0;
        for (float r : reals)
            host_sum += r;
        if (std::abs(double(sum) - host_sum) > 1e-5 * host_sum)
            std::printf("# reduce: %f, host %f\n", sum, host_sum);
        report("reduce sum float32", log2n, ms, 4.0 * n, "GB/s");
        CHECK(cudaFree(tmp));

        scans<int>(log2n);

        bytes = 0;
        CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, dk, dk2, int(n)));
        tmp = scratch(bytes);
        ms = median_ms([&] { CHECK(cub::DeviceRadixSort::SortKeys(tmp, bytes, dk, dk2, int(n))); });
        std::vector<unsigned> sorted(n);
        CHECK(cudaMemcpy(sorted.data(), dk2, n * 4, cudaMemcpyDeviceToHost));
        if (!std::is_sorted(sorted.begin(), sorted.end()))
            std::printf("# sort keys: not sorted\n");
        report("sort keys uint32", log2n, ms, double(n), "Gkeys/s");
        CHECK(cudaFree(tmp));

        bytes = 0;
        CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dk2, dv, dv2, int(n)));
        tmp = scratch(bytes);
        ms = median_ms([&] { CHECK(cub::DeviceRadixSort::SortPairs(tmp, bytes, dk, dk2, dv, dv2, int(n))); });
        std::vector<unsigned> values(n);
        CHECK(cudaMemcpy(sorted.data(), dk2, n * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(values.data(), dv2, n * 4, cudaMemcpyDeviceToHost));
        if (!std::is_sorted(sorted.begin(), sorted.end()) || values != sorted)  // values were the keys
            std::printf("# sort pairs: wrong\n");
        report("sort pairs uint32", log2n, ms, double(n), "Gpairs/s");
        CHECK(cudaFree(tmp));

        for (void *p : {(void *)dk, (void *)dv, (void *)dk2, (void *)dv2, (void *)df, (void *)dsum})
            CHECK(cudaFree(p));
    }
    return 0;
}
