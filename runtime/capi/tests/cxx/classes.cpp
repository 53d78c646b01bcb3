// classes: OpenSHMEM inside ordinary C++: RAII wrappers (a symmetric array that allocates in
// its constructor and frees in its destructor, a team that destroys itself), templates that
// pick the typed call through a traits struct, std::vector sources, lambdas, exceptions kept
// inside the program, and static class members as symmetric data.
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "../c/check.h"

namespace {

// The typed calls for each element type, so templates need no generic names.
template <typename T> struct Rma;
template <> struct Rma<long> {
    static void put(long *d, const long *s, size_t n, int pe) { shmem_long_put(d, s, n, pe); }
    static int sum(shmem_team_t t, long *d, const long *s, size_t n) {
        return shmem_long_sum_reduce(t, d, s, n);
    }
};
template <> struct Rma<double> {
    static void put(double *d, const double *s, size_t n, int pe) {
        shmem_double_put(d, s, n, pe);
    }
    static int sum(shmem_team_t t, double *d, const double *s, size_t n) {
        return shmem_double_sum_reduce(t, d, s, n);
    }
};

// A symmetric array: every PE constructs it in the same order (shmem_malloc is collective).
template <typename T> class SymmetricArray {
  public:
    explicit SymmetricArray(size_t len)
        : data_(static_cast<T *>(shmem_calloc(len, sizeof(T)))), len_(len) {
        if (data_ == nullptr)
            throw std::runtime_error("shmem_calloc of " + std::to_string(len) + " elements");
    }
    ~SymmetricArray() { shmem_free(data_); }
    SymmetricArray(const SymmetricArray &) = delete;
    SymmetricArray &operator=(const SymmetricArray &) = delete;

    T &operator[](size_t i) { return data_[i]; }
    size_t size() const { return len_; }
    void put_to(int pe, const std::vector<T> &src) { Rma<T>::put(data_, src.data(), src.size(), pe); }
    T *data() { return data_; }

  private:
    T *data_;
    size_t len_;
};

// A team that is destroyed when it goes out of scope.
class Team {
  public:
    Team(int start, int stride, int size) {
        if (shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size, nullptr, 0,
                                     &team_) != 0)
            throw std::runtime_error("shmem_team_split_strided failed");
    }
    ~Team() {
        if (member())
            shmem_team_destroy(team_);
    }
    Team(const Team &) = delete;
    Team &operator=(const Team &) = delete;
    bool member() const { return team_ != SHMEM_TEAM_INVALID; }
    shmem_team_t get() const { return team_; }

  private:
    shmem_team_t team_ = SHMEM_TEAM_INVALID;
};

struct Counters {
    static long hits; // a static member: symmetric like any global of the program
};
long Counters::hits = 0;

template <typename T> void ring_exchange(int me, int n) {
    SymmetricArray<T> arr(16);
    std::vector<T> src(16);
    std::iota(src.begin(), src.end(), static_cast<T>(me * 100));
    shmem_barrier_all();
    arr.put_to((me + 1) % n, src);
    shmem_barrier_all();
    int left = (me + n - 1) % n;
    for (size_t i = 0; i < arr.size(); i++)
        CHECK(arr[i] == static_cast<T>(left * 100 + static_cast<int>(i)), "ring element %zu", i);
    SymmetricArray<T> total(1);
    SymmetricArray<T> mine(1);
    mine[0] = static_cast<T>(me);
    CHECK(Rma<T>::sum(SHMEM_TEAM_WORLD, total.data(), mine.data(), 1) == 0, "sum_reduce");
    CHECK(total[0] == static_cast<T>(n * (n - 1) / 2), "templated sum_reduce");
    shmem_barrier_all();
}

} // namespace

int main() {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    try {
        ring_exchange<long>(me, n);
        ring_exchange<double>(me, n);
        {
            Team evens(0, 2, (n + 1) / 2);
            CHECK(evens.member() == (me % 2 == 0), "membership of the even team");
            if (evens.member())
                CHECK(shmem_team_sync(evens.get()) == 0, "team_sync through the wrapper");
        }
        auto bump = [](int pe) { shmem_long_atomic_inc(&Counters::hits, pe); };
        for (int pe = 0; pe < n; pe++)
            bump(pe);
        shmem_barrier_all();
        CHECK(Counters::hits == n, "static member counter %ld", Counters::hits);
    } catch (const std::exception &e) {
        CHECK(false, "exception: %s", e.what());
    }
    FINISH("classes");
    return 0;
}
