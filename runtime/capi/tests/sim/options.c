/* options: a program that parses its options with getopt and getopt_long before
 * shmem_init, as benchmarks do; every PE must see the same options (on the simulator each
 * PE is a copy of the program with its own optind and optarg). Run with
 *   -n 5 --size 64 extra   and it checks what it got. */
#include <getopt.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int n = 0, size = 0, c;
    static const struct option longs[] = {{"size", required_argument, 0, 's'}, {0, 0, 0, 0}};
    while ((c = getopt_long(argc, argv, "n:", longs, NULL)) != -1) {
        if (c == 'n')
            n = atoi(optarg);
        else if (c == 's')
            size = atoi(optarg);
        else
            return 2;
    }
    const char *rest = optind < argc ? argv[optind] : "";
    shmem_init();
    int me = shmem_my_pe();
    int ok = n == 5 && size == 64 && strcmp(rest, "extra") == 0;
    if (!ok)
        printf("FAIL: PE %d got -n %d --size %d rest '%s'\n", me, n, size, rest);
    shmem_barrier_all();
    if (me == 0 && ok)
        printf("options: ok\n");
    shmem_finalize();
    return ok ? 0 : 1;
}
