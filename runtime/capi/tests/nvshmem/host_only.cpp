// A host-only NVSHMEM program, compiled by g++ with no CUDA anywhere: it includes nvshmem.h and
// nvshmemx.h and uses what NVSHMEM's headers give a host file (the status codes, assert, the
// host API and the stream-ordered calls with a null stream). Each PE writes its number into its
// right neighbour's buffer, adds to a signal on it, and checks what its left neighbour wrote.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace {

void expect(bool condition, const std::string &what) {
    if (!condition) throw std::runtime_error(what);
}

void exchange_with_neighbours() {
    const int me = nvshmem_my_pe();
    const int npes = nvshmem_n_pes();
    const int right = (me + 1) % npes;
    const int left = (me + npes - 1) % npes;
    const std::size_t count = 4;

    auto *inbox = static_cast<int *>(nvshmem_calloc(count, sizeof(int)));
    auto *signal = static_cast<uint64_t *>(nvshmem_calloc(1, sizeof(uint64_t)));
    expect(inbox != nullptr && signal != nullptr, "nvshmem_calloc returned NULL");

    std::vector<int> outbox(count);
    for (std::size_t i = 0; i < count; ++i) outbox[i] = me * 100 + static_cast<int>(i);
    nvshmem_barrier_all();
    nvshmem_int_put_signal(inbox, outbox.data(), count, signal, 1, NVSHMEM_SIGNAL_ADD, right);
    nvshmem_signal_wait_until(signal, NVSHMEM_CMP_EQ, 1);
    for (std::size_t i = 0; i < count; ++i) {
        std::ostringstream what;
        what << "PE " << me << " inbox[" << i << "] is " << inbox[i] << ", not PE " << left << "'s "
             << left * 100 + static_cast<int>(i);
        expect(inbox[i] == left * 100 + static_cast<int>(i), what.str());
    }
    nvshmem_barrier_all();  // every PE has read its inbox before the next round writes it

    // The stream-ordered forms take cudaStream_t, an opaque type here; 0 is the default stream.
    // Their source is read when the stream gets there, so it is symmetric, as a GPU buffer is.
    static int negated;
    negated = -me;
    nvshmemx_int_put_on_stream(inbox, &negated, 1, right, 0);
    nvshmemx_quiet_on_stream(0);
    nvshmemx_barrier_all_on_stream(0);
    expect(nvshmem_int_g(inbox, me) == -left, "nvshmemx_int_put_on_stream's value did not arrive");

    const int total = nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, inbox, inbox, 1);
    expect(total == NVSHMEMX_SUCCESS, "nvshmem_int_sum_reduce failed");
    expect(inbox[0] == -(npes * (npes - 1) / 2), "the sum of -left over all PEs is wrong");

    nvshmem_free(signal);
    nvshmem_free(inbox);
}

}  // namespace

int main() {
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    int status = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr);
    assert(status == NVSHMEMX_SUCCESS);
    assert(nvshmemx_init_status() == NVSHMEM_STATUS_IS_INITIALIZED);
    try {
        exchange_with_neighbours();
    } catch (const std::exception &error) {
        std::cerr << "host_only: " << error.what() << std::endl;
        nvshmem_global_exit(1);
    }
    nvshmem_barrier_all();
    if (nvshmem_my_pe() == 0) std::cout << "host_only: " << nvshmem_n_pes() << " PEs agree" << std::endl;
    nvshmem_finalize();
    return 0;
}
