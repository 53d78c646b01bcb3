// Kernels of the device-side API's tests (cuda_device.rs). Each PE sends to the next PE and
// receives from the previous one, so with one PE it talks to itself and with two to its peer.
// Results land in the PE's heap; `bad` counts the checks that failed on the GPU.

#define TO ((rshmem_my_pe() + 1) % rshmem_n_pes())
#define FROM ((rshmem_my_pe() + rshmem_n_pes() - 1) % rshmem_n_pes())

typedef unsigned long long u64;

// out: my_pe, n_pes, g of a u64 p'd to self, of a u32, of a double's bits, rshmem_ptr(self)
// == x, rshmem_ptr of a PE out of range == NULL.
extern "C" __global__ void p_g_self(u64 *x, u64 *out) {
    int me = rshmem_my_pe();
    rshmem_p(x, 42ull + me, me);
    rshmem_p((unsigned int *)(x + 1), 7u, me);
    rshmem_p((double *)(x + 2), 2.5, me);
    rshmem_quiet();
    out[0] = me;
    out[1] = rshmem_n_pes();
    out[2] = rshmem_g(x, me);
    out[3] = rshmem_g((unsigned int *)(x + 1), me);
    double d = rshmem_g((double *)(x + 2), me);
    out[4] = d == 2.5;
    out[5] = rshmem_ptr(x, me) == (void *)x;
    out[6] = rshmem_ptr(x, rshmem_n_pes()) == nullptr;
}

// Block 0 sends `rounds` messages of `words` words with p, fence, then a flag, and waits for
// each to be acknowledged; block 1 waits for each flag, checks the words and acknowledges.
extern "C" __global__ void message_passing(u64 *data, u64 *flag, u64 *ack, u64 *bad,
                                           unsigned words, unsigned rounds) {
    if (threadIdx.x != 0) return;
    for (u64 r = 1; r <= rounds; ++r) {
        if (blockIdx.x == 0) {
            for (unsigned i = 0; i < words; ++i) rshmem_p(data + i, r * 100000 + i, TO);
            rshmem_fence();
            rshmem_p(flag, r, TO);
            rshmem_wait_until(ack, RSHMEM_CMP_GE, r);
        } else {
            rshmem_wait_until(flag, RSHMEM_CMP_GE, r);
            for (unsigned i = 0; i < words; ++i) {
                if (data[i] != r * 100000 + i) atomicAdd(bad, 1ull);
            }
            rshmem_p(ack, r, FROM);
        }
    }
}

// As message_passing, with put_signal (ADD 1) from a source buffer and signal_wait_until.
extern "C" __global__ void signal_passing(u64 *src, u64 *data, u64 *sig, u64 *ack, u64 *bad,
                                          unsigned words, unsigned rounds) {
    if (threadIdx.x != 0) return;
    for (u64 r = 1; r <= rounds; ++r) {
        if (blockIdx.x == 0) {
            for (unsigned i = 0; i < words; ++i) src[i] = r * 100000 + i;
            rshmem_put_signal(data, src, words * sizeof(u64), sig, 1, RSHMEM_SIGNAL_ADD, TO);
            rshmem_wait_until(ack, RSHMEM_CMP_GE, r);
        } else {
            u64 seen = rshmem_signal_wait_until(sig, RSHMEM_CMP_GE, r);
            if (seen != r) atomicAdd(bad, 1ull);
            for (unsigned i = 0; i < words; ++i) {
                if (data[i] != r * 100000 + i) atomicAdd(bad, 1ull);
            }
            rshmem_p(ack, r, FROM);
        }
    }
}

// One block: fills `src` with this PE's pattern, puts it to the next PE's `dst` with the
// whole block, meets the others at a barrier, checks what the previous PE put here, then
// gets the next PE's `src` into `got` with the whole block and checks it.
extern "C" __global__ void block_copy(u64 *src, u64 *dst, u64 *got, u64 *bad, u64 nbytes) {
    u64 words = nbytes / sizeof(u64);
    unsigned rank = threadIdx.x, n = blockDim.x;
    u64 me = rshmem_my_pe();
    for (u64 i = rank; i < words; i += n) src[i] = (me << 40) | i;
    rshmem_putmem_block(dst, src, nbytes, TO);
    rshmem_barrier_all();
    for (u64 i = rank; i < words; i += n) {
        if (dst[i] != (((u64)FROM << 40) | i)) atomicAdd(bad, 1ull);
    }
    rshmem_getmem_block(got, src, nbytes, TO);
    for (u64 i = rank; i < words; i += n) {
        if (got[i] != (((u64)TO << 40) | i)) atomicAdd(bad, 1ull);
    }
}

// Every thread of one block adds 1 to the next PE's counter and keeps the old value in
// olds[thread]; after a barrier, thread 0 runs each other atomic on the next PE's `word`
// and keeps what each returned in results[0..7].
extern "C" __global__ void atomics(u64 *counter, u64 *olds, u64 *word, u64 *results) {
    olds[threadIdx.x] = rshmem_atomic_fetch_add(counter, 1, TO);
    rshmem_barrier_all();
    if (threadIdx.x != 0) return;
    rshmem_atomic_set(word, 5, TO);
    rshmem_fence();
    results[0] = rshmem_atomic_swap(word, 7, TO);              // 5, word 7
    results[1] = rshmem_atomic_compare_swap(word, 7, 9, TO);   // 7, word 9
    results[2] = rshmem_atomic_compare_swap(word, 7, 11, TO);  // 9, word 9
    results[3] = rshmem_atomic_fetch_and(word, 0xc, TO);       // 9, word 8
    results[4] = rshmem_atomic_fetch_or(word, 3, TO);          // 8, word 11
    results[5] = rshmem_atomic_fetch_xor(word, 1, TO);         // 11, word 10
    rshmem_atomic_add(word, 5, TO);                            // word 15
    rshmem_fence();
    results[6] = rshmem_atomic_fetch(word, TO);                // 15
}

// `rounds` times: thread 0 writes the round into the next PE's slot, all meet at a barrier,
// thread 0 checks its own slot holds the round, and all meet again before the next write.
extern "C" __global__ void barrier_loop(u64 *slot, u64 *bad, unsigned rounds, unsigned first) {
    for (u64 r = first; r < (u64)first + rounds; ++r) {
        if (threadIdx.x == 0) rshmem_p(slot, r, TO);
        rshmem_barrier_all();
        if (threadIdx.x == 0 && *(volatile u64 *)slot != r) atomicAdd(bad, 1ull);
        rshmem_barrier_all();
    }
}

// Every collective on `n` words per PE, with sources that name their PE and index; each
// wrong element counts one in `bad`. `src` holds n_pes * n words (alltoall's source), `dst`
// as many.
extern "C" __global__ void collectives(u64 *src, u64 *dst, u64 *bad, u64 n) {
    int me = rshmem_my_pe(), npes = rshmem_n_pes();
    unsigned rank = threadIdx.x;
    for (u64 i = rank; i < n * npes; i += blockDim.x) src[i] = 1000 * (u64)(me + 1) + i;
    __syncthreads();
    u64 wrong = 0;

    rshmem_sum_reduce_block(dst, src, n);
    for (u64 i = rank; i < n; i += blockDim.x) {
        u64 want = 0;
        for (int pe = 0; pe < npes; ++pe) want += 1000 * (u64)(pe + 1) + i;
        wrong += dst[i] != want;
    }
    rshmem_barrier_all();

    rshmem_broadcast_block(dst, src, n, npes - 1);
    for (u64 i = rank; i < n; i += blockDim.x) wrong += dst[i] != 1000 * (u64)npes + i;
    rshmem_barrier_all();

    rshmem_fcollect_block(dst, src, n);
    for (u64 i = rank; i < n * npes; i += blockDim.x) {
        u64 pe = i / n;
        wrong += dst[i] != 1000 * (pe + 1) + i % n;
    }
    rshmem_barrier_all();

    rshmem_alltoall_block(dst, src, n);
    for (u64 i = rank; i < n * npes; i += blockDim.x) {
        u64 pe = i / n;
        wrong += dst[i] != 1000 * (pe + 1) + (u64)me * n + i % n;
    }
    if (wrong) atomicAdd(bad, wrong);
}
