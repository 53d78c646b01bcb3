/* check.h: the one failure path every test program shares.
 *
 * A failed check prints one line on stderr naming the program's file, line, PE, the condition
 * and a message, then exits 1: the launcher then ends the other PEs and exits non-zero, so the
 * harness sees the failure with its reason. exit (not shmem_global_exit) is used on purpose,
 * so that a broken global_exit cannot hide a failed check. Works from C11 and C++17. */
#ifndef RSHMEM_TEST_CHECK_H
#define RSHMEM_TEST_CHECK_H

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

/* Fails the program unless cond holds; the rest is a printf format and its arguments. */
#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "FAIL %s:%d pe %d: %s: ", __FILE__, __LINE__, shmem_my_pe(),  \
                    #cond);                                                               \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                          \
            fflush(stderr);                                                               \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

/* The last line of a passing program: PE 0 says which program passed at how many PEs. */
#define PASS(name)                                                                        \
    do {                                                                                  \
        if (shmem_my_pe() == 0)                                                           \
            printf("%s: ok at %d PEs\n", name, shmem_n_pes());                            \
    } while (0)

/* The end of a passing program: every PE is done checking, PE 0 says so, all finalize. */
#define FINISH(name)                                                                      \
    do {                                                                                  \
        shmem_barrier_all();                                                              \
        PASS(name);                                                                       \
        shmem_finalize();                                                                 \
    } while (0)

/* This PE, the number of PEs and the ring neighbours it writes to and is written by (at one
 * PE, itself). */
static inline void ring_of_pes(int *me, int *n, int *right, int *left) {
    *me = shmem_my_pe();
    *n = shmem_n_pes();
    *right = (*me + 1) % *n;
    *left = (*me + *n - 1) % *n;
}

#endif
