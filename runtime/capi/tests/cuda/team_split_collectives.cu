// Kernels that run every collective on teams of some of the PEs, at thread, warp and block
// scope: the even PEs, the last three PEs and the rows and columns of a 2-d split. The teams are
// destroyed and made again, in another order, three times, so later teams take the slots of
// earlier ones with other members. Each kernel checks what it received and counts mismatches;
// the host prints the first one and exits with 1, or one line per PE at the end.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#define CUDA_CHECK(call) check_cuda((call), #call, __LINE__)

static void check_cuda(cudaError_t status, const char* call, int line) {
    if (status != cudaSuccess) {
        std::ostringstream message;
        message << call << " failed at line " << line << ": " << cudaGetErrorString(status);
        throw std::runtime_error(message.str());
    }
}

constexpr int kElems = 4;  // elements each member contributes to each collective

// The symmetric arrays every kernel uses; sized for a team of every PE.
struct Buffers {
    int* source;
    int* dest;
    long* values;
    long* result;
    int* marks;  // marks[j]: the last round member j of the team announced here
};

// The first wrong value a kernel saw, and how many there were.
struct Mismatch {
    int count;
    int step;
    int index;
    long got;
    long want;
};

enum Step { kFcollect = 1, kBarrier, kAlltoall, kBroadcast, kSum, kMax };
const char* step_name(int step) {
    switch (step) {
    case kFcollect: return "fcollect";
    case kBarrier: return "barrier";
    case kAlltoall: return "alltoall";
    case kBroadcast: return "broadcast";
    case kSum: return "sum reduction";
    case kMax: return "max reduction";
    default: return "nothing";
    }
}

__device__ void expect(Mismatch* mismatch, int step, int index, long got, long want) {
    if (got == want) return;
    if (atomicAdd(&mismatch->count, 1) == 0) {
        mismatch->step = step;
        mismatch->index = index;
        mismatch->got = got;
        mismatch->want = want;
    }
}

// NVSHMEM's calls at thread scope, where the group is the calling thread.
struct ThreadScope {
    static __device__ unsigned rank() { return 0; }
    static __device__ unsigned size() { return 1; }
    static __device__ void sync() {}
    static __device__ void barrier(nvshmem_team_t team) { nvshmem_barrier(team); }
    static __device__ void team_sync(nvshmem_team_t team) { nvshmem_team_sync(team); }
    static __device__ void fcollect(nvshmem_team_t team, int* d, const int* s, size_t n) {
        nvshmem_int_fcollect(team, d, s, n);
    }
    static __device__ void alltoall(nvshmem_team_t team, int* d, const int* s, size_t n) {
        nvshmem_int_alltoall(team, d, s, n);
    }
    static __device__ void broadcast(nvshmem_team_t team, int* d, const int* s, size_t n, int root) {
        nvshmem_int_broadcast(team, d, s, n, root);
    }
    static __device__ void sum(nvshmem_team_t team, long* d, const long* s, size_t n) {
        nvshmem_long_sum_reduce(team, d, s, n);
    }
    static __device__ void max(nvshmem_team_t team, long* d, const long* s, size_t n) {
        nvshmem_long_max_reduce(team, d, s, n);
    }
};

// The _warp and _block forms, the group's rank and size, and its barrier.
#define GROUP_SCOPE(Name, suffix, RANK, SIZE, SYNC)                                                 \
    struct Name {                                                                                  \
        static __device__ unsigned rank() { return RANK; }                                         \
        static __device__ unsigned size() { return SIZE; }                                         \
        static __device__ void sync() { SYNC; }                                                    \
        static __device__ void barrier(nvshmem_team_t team) { nvshmemx_barrier_##suffix(team); }   \
        static __device__ void team_sync(nvshmem_team_t team) { nvshmemx_team_sync_##suffix(team); } \
        static __device__ void fcollect(nvshmem_team_t team, int* d, const int* s, size_t n) {     \
            nvshmemx_int_fcollect_##suffix(team, d, s, n);                                         \
        }                                                                                          \
        static __device__ void alltoall(nvshmem_team_t team, int* d, const int* s, size_t n) {     \
            nvshmemx_int_alltoall_##suffix(team, d, s, n);                                         \
        }                                                                                          \
        static __device__ void broadcast(nvshmem_team_t team, int* d, const int* s, size_t n, int root) { \
            nvshmemx_int_broadcast_##suffix(team, d, s, n, root);                                  \
        }                                                                                          \
        static __device__ void sum(nvshmem_team_t team, long* d, const long* s, size_t n) {        \
            nvshmemx_long_sum_reduce_##suffix(team, d, s, n);                                      \
        }                                                                                          \
        static __device__ void max(nvshmem_team_t team, long* d, const long* s, size_t n) {        \
            nvshmemx_long_max_reduce_##suffix(team, d, s, n);                                      \
        }                                                                                          \
    };
GROUP_SCOPE(WarpScope, warp, threadIdx.x % 32, 32, __syncwarp())
GROUP_SCOPE(BlockScope, block, threadIdx.x, blockDim.x, __syncthreads())

// Every collective once on `team`, each checked by the whole group; `round` makes the barrier's
// marks differ from one kernel to the next.
template <typename Scope>
__global__ void exchange(nvshmem_team_t team, Buffers b, int round, Mismatch* mismatch) {
    const int me = nvshmem_team_my_pe(team);
    const int n = nvshmem_team_n_pes(team);
    const int world = nvshmem_my_pe();
    auto world_of = [team](int member) { return nvshmem_team_translate_pe(team, member, NVSHMEM_TEAM_WORLD); };
    const unsigned rank = Scope::rank(), size = Scope::size();

    for (unsigned i = rank; i < kElems; i += size) b.source[i] = 100 * world + i;
    Scope::fcollect(team, b.dest, b.source, kElems);
    for (unsigned i = rank; i < n * kElems; i += size) {
        expect(mismatch, kFcollect, i, b.dest[i], 100 * world_of(i / kElems) + i % kElems);
    }

    if (rank == 0) nvshmem_int_p(b.marks + me, round, world_of((me + 1) % n));
    Scope::barrier(team);
    if (rank == 0) expect(mismatch, kBarrier, round, b.marks[(me + n - 1) % n], round);
    Scope::team_sync(team);

    for (unsigned i = rank; i < n * kElems; i += size) {
        b.source[i] = 1000 * world + 10 * (i / kElems) + i % kElems;  // block j goes to member j
    }
    Scope::alltoall(team, b.dest, b.source, kElems);
    for (unsigned i = rank; i < n * kElems; i += size) {
        expect(mismatch, kAlltoall, i, b.dest[i], 1000 * world_of(i / kElems) + 10 * me + i % kElems);
    }

    const int root = n > 1 ? 1 : 0;
    for (unsigned i = rank; i < kElems; i += size) b.source[i] = 7 * world + i;
    Scope::broadcast(team, b.dest, b.source, kElems, root);
    for (unsigned i = rank; i < kElems; i += size) expect(mismatch, kBroadcast, i, b.dest[i], 7 * world_of(root) + i);

    long members = 0, largest = 0, smallest = 0;
    for (int j = 0; j < n; j++) {
        int pe = world_of(j);
        members += pe;
        largest = j == 0 || pe > largest ? pe : largest;
        smallest = j == 0 || pe < smallest ? pe : smallest;
    }
    for (unsigned i = rank; i < kElems; i += size) b.values[i] = world + i;
    Scope::sum(team, b.result, b.values, kElems);
    for (unsigned i = rank; i < kElems; i += size) expect(mismatch, kSum, i, b.result[i], members + n * (long)i);

    Scope::sync();
    for (unsigned i = rank; i < kElems; i += size) b.values[i] = i % 2 == 0 ? world : -world;
    Scope::max(team, b.result, b.values, kElems);
    for (unsigned i = rank; i < kElems; i += size) {
        expect(mismatch, kMax, i, b.result[i], i % 2 == 0 ? largest : -smallest);
    }
}

struct NamedTeam {
    std::string name;
    nvshmem_team_t team;
    int round;  // the same on every member, and never the same for two kernels of the run
};

// Runs `exchange` at every scope on `team`; throws with the first mismatch.
void exchange_on(const NamedTeam& named, const Buffers& buffers, Mismatch* mismatch) {
    struct Launch {
        const char* scope;
        void (*run)(nvshmem_team_t, Buffers, int, Mismatch*);
    };
    const Launch launches[] = {
        {"thread", [](nvshmem_team_t t, Buffers b, int r, Mismatch* m) { exchange<ThreadScope><<<1, 1>>>(t, b, r, m); }},
        {"warp", [](nvshmem_team_t t, Buffers b, int r, Mismatch* m) { exchange<WarpScope><<<1, 32>>>(t, b, r, m); }},
        {"block", [](nvshmem_team_t t, Buffers b, int r, Mismatch* m) { exchange<BlockScope><<<1, 64>>>(t, b, r, m); }},
    };
    int round = named.round;
    for (const Launch& launch : launches) {
        CUDA_CHECK(cudaMemset(mismatch, 0, sizeof(Mismatch)));
        launch.run(named.team, buffers, ++round, mismatch);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        Mismatch seen{};
        CUDA_CHECK(cudaMemcpy(&seen, mismatch, sizeof seen, cudaMemcpyDeviceToHost));
        if (seen.count != 0) {
            std::ostringstream message;
            message << named.name << " at " << launch.scope << " scope: " << seen.count << " wrong values; the "
                    << step_name(seen.step) << " gave " << seen.got << " at " << seen.index << ", not " << seen.want;
            throw std::runtime_error(message.str());
        }
    }
}

// Splits the world's teams of this generation, those this PE is in, in an order every PE shares.
std::vector<NamedTeam> make_teams(int generation, int n_pes) {
    std::vector<NamedTeam> made;
    auto add = [&](const char* name, nvshmem_team_t team) {
        made.push_back({name, team, 100 * generation + 10 * static_cast<int>(made.size())});
    };
    auto evens = [&] {
        nvshmem_team_t team = NVSHMEM_TEAM_INVALID;
        nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, n_pes / 2, nullptr, 0, &team);
        add("the even PEs", team);
    };
    auto last_three = [&] {
        nvshmem_team_t team = NVSHMEM_TEAM_INVALID;
        nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, n_pes - 3, 1, 3, nullptr, 0, &team);
        add("the last three PEs", team);
    };
    auto grid = [&] {
        nvshmem_team_t row = NVSHMEM_TEAM_INVALID, column = NVSHMEM_TEAM_INVALID;
        nvshmem_team_split_2d(NVSHMEM_TEAM_WORLD, 2, nullptr, 0, &row, nullptr, 0, &column);
        add("a row of the 2-d split", row);
        add("a column of the 2-d split", column);
    };
    if (generation % 2 == 0) {
        evens();
        last_three();
        grid();
    } else {
        grid();
        last_three();
        evens();
    }
    std::vector<NamedTeam> mine;
    for (const NamedTeam& team : made) {
        if (team.team != NVSHMEM_TEAM_INVALID) mine.push_back(team);
    }
    return mine;
}

int main() {
    try {
        nvshmem_init();
        const int world_pe = nvshmem_my_pe();
        const int n_pes = nvshmem_n_pes();
        if (n_pes < 4 || n_pes % 2 != 0) {
            std::cerr << "run on an even number of PEs, at least 4\n";
            return 1;
        }
        Buffers buffers{};
        buffers.source = static_cast<int*>(nvshmem_malloc(sizeof(int) * n_pes * kElems));
        buffers.dest = static_cast<int*>(nvshmem_malloc(sizeof(int) * n_pes * kElems));
        buffers.values = static_cast<long*>(nvshmem_malloc(sizeof(long) * kElems));
        buffers.result = static_cast<long*>(nvshmem_malloc(sizeof(long) * kElems));
        buffers.marks = static_cast<int*>(nvshmem_malloc(sizeof(int) * n_pes));
        Mismatch* mismatch = nullptr;
        CUDA_CHECK(cudaMalloc(&mismatch, sizeof(Mismatch)));

        const int generations = 3;
        int teams_seen = 0;
        for (int generation = 0; generation < generations; generation++) {
            std::vector<NamedTeam> teams = make_teams(generation, n_pes);
            for (const NamedTeam& team : teams) {
                exchange_on(team, buffers, mismatch);
                teams_seen++;
            }
            for (const NamedTeam& team : teams) nvshmem_team_destroy(team.team);
        }
        std::cout << "PE " << world_pe << ": " << teams_seen << " teams over " << generations
                  << " generations agree at thread, warp and block scope" << std::endl;

        nvshmem_barrier_all();
        CUDA_CHECK(cudaFree(mismatch));
        nvshmem_free(buffers.marks);
        nvshmem_free(buffers.result);
        nvshmem_free(buffers.values);
        nvshmem_free(buffers.dest);
        nvshmem_free(buffers.source);
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "PE " << nvshmem_my_pe() << ": " << error.what() << "\n";
        exit(1);
    }
    return 0;
}
