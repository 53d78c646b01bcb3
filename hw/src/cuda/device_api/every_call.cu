// Calls every function of rshmem_device.cuh at each type it promises, so that compiling it
// checks the whole header (the header's own unit test; never launched).

template <typename T>
__device__ void atomics(T *word, int pe) {
    T v = rshmem_atomic_fetch(word, pe);
    rshmem_atomic_set(word, v, pe);
    v += rshmem_atomic_swap(word, 1, pe);
    v += rshmem_atomic_compare_swap(word, 1, 2, pe);
    v += rshmem_atomic_fetch_add(word, 1, pe);
    rshmem_atomic_add(word, 1, pe);
    v += rshmem_atomic_fetch_and(word, 1, pe);
    v += rshmem_atomic_fetch_or(word, 1, pe);
    v += rshmem_atomic_fetch_xor(word, 1, pe);
    rshmem_p(word, v, pe);
    rshmem_wait_until(word, RSHMEM_CMP_NE, v);
}

extern "C" __global__ void every_call(unsigned long long *heap, unsigned long long n) {
    int pe = (rshmem_my_pe() + 1) % rshmem_n_pes();
    char *bytes = (char *)heap;
    rshmem_putmem(bytes, bytes + 64, n, pe);
    rshmem_getmem(bytes, bytes + 64, n, pe);
    rshmem_putmem_warp(bytes, bytes + 64, n, pe);
    rshmem_getmem_warp(bytes, bytes + 64, n, pe);
    rshmem_putmem_block(bytes, bytes + 64, n, pe);
    rshmem_getmem_block(bytes, bytes + 64, n, pe);
    rshmem_putmem_nbi(bytes, bytes + 64, n, pe);
    rshmem_getmem_nbi(bytes, bytes + 64, n, pe);
    rshmem_putmem_nbi_warp(bytes, bytes + 64, n, pe);
    rshmem_getmem_nbi_warp(bytes, bytes + 64, n, pe);
    rshmem_putmem_nbi_block(bytes, bytes + 64, n, pe);
    rshmem_getmem_nbi_block(bytes, bytes + 64, n, pe);
    rshmem_put(heap, heap + 8, n, pe);
    rshmem_get(heap, heap + 8, n, pe);
    rshmem_p((double *)heap, rshmem_g((double *)heap, pe), pe);
    rshmem_p((short *)heap, rshmem_g((short *)heap, pe), pe);
    atomics(heap, pe);
    atomics((unsigned int *)heap, pe);
    atomics((int *)heap, pe);
    rshmem_fence();
    rshmem_quiet();
    rshmem_put_signal(bytes, bytes + 64, n, heap + 16, 1, RSHMEM_SIGNAL_ADD, pe);
    rshmem_put_signal_nbi(bytes, bytes + 64, n, heap + 16, 1, RSHMEM_SIGNAL_SET, pe);
    rshmem_signal_wait_until(heap + 16, RSHMEM_CMP_GE, rshmem_signal_fetch(heap + 16));
    heap[0] = rshmem_ptr(heap, pe) != nullptr;
    rshmem_barrier_all();
    rshmem_sum_reduce_block((float *)(heap + 64), (const float *)(heap + 128), n);
    rshmem_sum_reduce_block(heap + 64, heap + 128, n);
    rshmem_broadcast_block(heap + 64, heap + 128, n, 0);
    rshmem_fcollect_block(heap + 64, heap + 128, n);
    rshmem_alltoall_block((int *)(heap + 64), (const int *)(heap + 128), n);
}
