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

#endif
