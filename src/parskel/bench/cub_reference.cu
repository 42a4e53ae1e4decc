// CUB's own figures on this GPU, the reference the GPU variants aim past: device-to-device copy,
// DeviceReduce::Sum (float32), DeviceScan::InclusiveSum and ExclusiveSum (int32),
// DeviceRadixSort::SortKeys and SortPairs (uint32), on data that stays on the device.
//
//   nvcc -O3 -arch=native -o /tmp/cub_reference src/parskel/bench/cub_reference.cu && /tmp/cub_reference 24 26 28
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

int main(int argc, char **argv)
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("# %s, CUB %d.%d.%d\n", prop.name, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
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

        int *di = reinterpret_cast<int *>(dk), *do_ = reinterpret_cast<int *>(dk2);
        for (int exclusive = 0; exclusive < 2; ++exclusive) {
            bytes = 0;
            if (exclusive)
                CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, di, do_, int(n)));
            else
                CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, di, do_, int(n)));
            tmp = scratch(bytes);
            ms = median_ms([&] {
                if (exclusive)
                    CHECK(cub::DeviceScan::ExclusiveSum(tmp, bytes, di, do_, int(n)));
                else
                    CHECK(cub::DeviceScan::InclusiveSum(tmp, bytes, di, do_, int(n)));
            });
            int last = 0;
            CHECK(cudaMemcpy(&last, do_ + n - 1, 4, cudaMemcpyDeviceToHost));
            unsigned expect = 0;  // int32 sums wrap: add as unsigned
            for (size_t i = 0; i + exclusive < n; ++i)
                expect += keys[i];
            if (unsigned(last) != expect)
                std::printf("# scan: last element %u, host %u\n", unsigned(last), expect);
            report(exclusive ? "exclusive scan int32" : "inclusive scan int32", log2n, ms, 8.0 * n, "GB/s");
            CHECK(cudaFree(tmp));
        }

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
