// Host code of the histogram program, compiled as plain C++: checks the world's histogram
// against the values every PE draws, counted on the host.
#include "rdc_histogram.h"

#include <sstream>

std::string summary(int pe, int n_pes, const std::vector<long long>& totals, int width, unsigned values_per_pe) {
    std::vector<long long> expected(kBuckets + 1, 0);
    for (int from = 0; from < n_pes; from++) {
        for (unsigned i = 0; i < values_per_pe; i++) {
            int value = value_of(from, i, width);
            expected[value >= kBuckets * width ? kBuckets : value / width]++;
        }
    }
    long long counted = 0;
    for (long long count : totals) counted += count;
    std::ostringstream line;
    line << "PE " << pe << ": " << counted << " values of " << n_pes << " PEs, histogram "
         << (totals == expected ? "right" : "WRONG") << ", " << totals[kBuckets] << " out of range";
    return line.str();
}
