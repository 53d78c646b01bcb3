/* flag: PE 0 puts a block of data and then a flag to PE 1; PE 1 waits for the flag and
 * reads the data with plain loads. Without a fence (FENCE=0) nothing orders the two puts, so
 * the flag may arrive first and PE 1 may read stale data: a race the detector reports, and
 * an outcome the simulator shows under some seeds. With -DFENCE=1 neither happens. */
#include <shmem.h>
#include <stdio.h>
#ifndef FENCE
#define FENCE 0
#endif
static long data[16];
static long flag;
int main(void) {
    shmem_init();
    int me = shmem_my_pe();
    if (me == 0) {
        long src[16];
        for (int i = 0; i < 16; i++) src[i] = i + 1;
        shmem_long_put(data, src, 16, 1);
        if (FENCE) shmem_fence();
        shmem_long_p(&flag, 1, 1);
    } else if (me == 1) {
        shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
        long sum = 0;
        for (int i = 0; i < 16; i++) sum += data[i];
        printf("PE 1 read sum %ld (136 when the data arrived first)\n", sum);
    }
    shmem_finalize();
    return 0;
}
