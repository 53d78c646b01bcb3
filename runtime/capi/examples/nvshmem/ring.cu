#include <nvshmem.h>
#include <nvshmemx.h>

__global__ void ring_kernel(int* data, int my_pe, int n_pes) {
    int tid = threadIdx.x + blockIdx.x * blockDim.x;

    if (tid == 0) {
        // �始化本地数�
        *data = my_pe * 100;

        // �下一个 PE ��（�形拓扑）
        int next_pe = (my_pe + 1) % n_pes;
        nvshmem_int_p(data, *data, next_pe);

        // �待所有传输完�
        nvshmem_quiet();

        // �障��
        nvshmem_barrier_all();

        // �在 data 包��一个 PE 的数�
        printf("PE %d received: %d (from PE %d)\n",
               my_pe, *data, (my_pe - 1 + n_pes) % n_pes);
    }
}

int main() {
    nvshmem_init();

    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();

    int* data = (int*) nvshmem_malloc(sizeof(int));

    ring_kernel<<<1, 256>>>(data, my_pe, n_pes);
    cudaDeviceSynchronize();

    nvshmem_free(data);
    nvshmem_finalize();
    return 0;
}
