/* The entry points a program compiled with -fsanitize=thread calls, so that `oshcc
 * -rshmem-check` programs tell the race detector about their own loads and stores
 * (docs/c-tools.md). oshcc compiles this file into LIBDIR/rshmem-check/libtsan.so the first
 * time it is asked to, and links the program with it in place of the compiler's libtsan.
 *
 * Why C: the compiler replaces every atomic of the program by a call here, which must then
 * do the atomic itself, for widths up to 128 bits and every memory order; C's __atomic
 * builtins say that directly. This file is compiled without the sanitizer.
 *
 * Plain accesses go to rshmem_check_access (Rust, sim_host/check.rs) only while a checked
 * simulated run is on or shmem_ptr gave a view of a peer (rshmem_check_on); otherwise a hook
 * costs a load and a branch.
 * 16-byte atomics are left out (they would need libatomic): a program that uses them fails
 * to link under -rshmem-check, naming the function. Atomics go to rshmem_check_atomic (Rust,
 * sim_host/check.rs) before they are done, while any simulated run is on (rshmem_sim_on):
 * between the threads of a PE they synchronise for the race detector, and a loop that spins
 * on one lets the PE's other threads and time go on (sim_host/threads/spin.rs). Between PEs
 * they are not recorded: OpenSHMEM leaves C atomics on symmetric memory that peers update
 * with SHMEM atomics undefined, and the detector orders SHMEM operations. */
#include <stddef.h>
#include <stdint.h>

extern void rshmem_check_access(const void *addr, size_t bytes, int write);
extern volatile int rshmem_check_on;
extern void rshmem_check_atomic(const volatile void *addr, size_t bytes, int how);
extern volatile int rshmem_sim_on;

/* What an atomic does, as rshmem_check_atomic's `how` says it. */
enum { ATOMIC_LOAD = 0, ATOMIC_STORE = 1, ATOMIC_RMW = 2 };

#define NOTE_ATOMIC(addr, bytes, how)                                                        \
    do {                                                                                     \
        if (__builtin_expect(rshmem_sim_on, 0))                                              \
            rshmem_check_atomic((addr), (bytes), (how));                                     \
    } while (0)

#define NOTE(addr, bytes, write)                                                             \
    do {                                                                                     \
        if (__builtin_expect(rshmem_check_on, 0))                                            \
            rshmem_check_access((addr), (bytes), (write));                                   \
    } while (0)

extern void rshmem_check_hooked(void);

/* The program's host code has the hooks: shmem_ptr may give views of peers (cuda_sim/peer_views.rs). */
void __tsan_init(void) { rshmem_check_hooked(); }
void __tsan_func_entry(void *caller) { (void)caller; }
void __tsan_func_exit(void) {}
void __tsan_ignore_thread_begin(void) {}
void __tsan_ignore_thread_end(void) {}

#define ACCESS(bytes)                                                                        \
    void __tsan_read##bytes(void *a) { NOTE(a, bytes, 0); }                                  \
    void __tsan_write##bytes(void *a) { NOTE(a, bytes, 1); }                                 \
    void __tsan_unaligned_read##bytes(void *a) { NOTE(a, bytes, 0); }                        \
    void __tsan_unaligned_write##bytes(void *a) { NOTE(a, bytes, 1); }                       \
    void __tsan_volatile_read##bytes(void *a) { NOTE(a, bytes, 0); }                         \
    void __tsan_volatile_write##bytes(void *a) { NOTE(a, bytes, 1); }                        \
    void __tsan_read##bytes##_pc(void *a, void *pc) { (void)pc; NOTE(a, bytes, 0); }         \
    void __tsan_write##bytes##_pc(void *a, void *pc) { (void)pc; NOTE(a, bytes, 1); }
ACCESS(1)
ACCESS(2)
ACCESS(4)
ACCESS(8)
ACCESS(16)

void __tsan_read_range(void *a, size_t n) { NOTE(a, n, 0); }
void __tsan_write_range(void *a, size_t n) { NOTE(a, n, 1); }
void __tsan_vptr_update(void **slot, void *value) { (void)value; NOTE(slot, sizeof *slot, 1); }
void __tsan_vptr_read(void **slot) { NOTE(slot, sizeof *slot, 0); }

/* The memory orders the compiler passes are C11's __ATOMIC_* values. Only a constant order
 * may be given to a builtin, hence the switch. */

/* A load may not be a release; a store may not be an acquire. */
#define LOAD_ORDER(mo) ((mo) == __ATOMIC_RELEASE ? __ATOMIC_RELAXED : (mo) == __ATOMIC_ACQ_REL ? __ATOMIC_ACQUIRE : (mo))
#define STORE_ORDER(mo) ((mo) == __ATOMIC_ACQUIRE || (mo) == __ATOMIC_CONSUME ? __ATOMIC_RELAXED : (mo) == __ATOMIC_ACQ_REL ? __ATOMIC_RELEASE : (mo))

#define RMW(bits, T, name, builtin)                                                          \
    T __tsan_atomic##bits##_##name(volatile T *a, T v, int mo) {                             \
        NOTE_ATOMIC(a, bits / 8, ATOMIC_RMW);                                                \
        _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wswitch\"")         \
        switch (mo) {                                                                        \
        case __ATOMIC_RELAXED: return builtin(a, v, __ATOMIC_RELAXED);                       \
        case __ATOMIC_CONSUME: case __ATOMIC_ACQUIRE: return builtin(a, v, __ATOMIC_ACQUIRE);\
        case __ATOMIC_RELEASE: return builtin(a, v, __ATOMIC_RELEASE);                       \
        case __ATOMIC_ACQ_REL: return builtin(a, v, __ATOMIC_ACQ_REL);                       \
        default: return builtin(a, v, __ATOMIC_SEQ_CST);                                     \
        }                                                                                    \
        _Pragma("GCC diagnostic pop")                                                        \
    }

#define ATOMICS(bits, T)                                                                     \
    T __tsan_atomic##bits##_load(const volatile T *a, int mo) {                              \
        NOTE_ATOMIC(a, bits / 8, ATOMIC_LOAD);                                               \
        switch (LOAD_ORDER(mo)) {                                                            \
        case __ATOMIC_RELAXED: return __atomic_load_n(a, __ATOMIC_RELAXED);                  \
        case __ATOMIC_CONSUME: case __ATOMIC_ACQUIRE: return __atomic_load_n(a, __ATOMIC_ACQUIRE); \
        default: return __atomic_load_n(a, __ATOMIC_SEQ_CST);                               \
        }                                                                                    \
    }                                                                                        \
    void __tsan_atomic##bits##_store(volatile T *a, T v, int mo) {                           \
        NOTE_ATOMIC(a, bits / 8, ATOMIC_STORE);                                              \
        switch (STORE_ORDER(mo)) {                                                           \
        case __ATOMIC_RELAXED: __atomic_store_n(a, v, __ATOMIC_RELAXED); return;             \
        case __ATOMIC_RELEASE: __atomic_store_n(a, v, __ATOMIC_RELEASE); return;             \
        default: __atomic_store_n(a, v, __ATOMIC_SEQ_CST); return;                           \
        }                                                                                    \
    }                                                                                        \
    RMW(bits, T, exchange, __atomic_exchange_n)                                              \
    RMW(bits, T, fetch_add, __atomic_fetch_add)                                              \
    RMW(bits, T, fetch_sub, __atomic_fetch_sub)                                              \
    RMW(bits, T, fetch_and, __atomic_fetch_and)                                              \
    RMW(bits, T, fetch_or, __atomic_fetch_or)                                                \
    RMW(bits, T, fetch_xor, __atomic_fetch_xor)                                              \
    RMW(bits, T, fetch_nand, __atomic_fetch_nand)                                            \
    int __tsan_atomic##bits##_compare_exchange_strong(volatile T *a, T *expected, T v,       \
                                                      int mo, int fail_mo) {                 \
        (void)mo; (void)fail_mo;                                                             \
        NOTE_ATOMIC(a, bits / 8, ATOMIC_RMW);                                                \
        return __atomic_compare_exchange_n(a, expected, v, 0, __ATOMIC_SEQ_CST,              \
                                           __ATOMIC_SEQ_CST);                                \
    }                                                                                        \
    int __tsan_atomic##bits##_compare_exchange_weak(volatile T *a, T *expected, T v,         \
                                                    int mo, int fail_mo) {                   \
        return __tsan_atomic##bits##_compare_exchange_strong(a, expected, v, mo, fail_mo);   \
    }                                                                                        \
    T __tsan_atomic##bits##_compare_exchange_val(volatile T *a, T expected, T v, int mo,     \
                                                 int fail_mo) {                              \
        __tsan_atomic##bits##_compare_exchange_strong(a, &expected, v, mo, fail_mo);         \
        return expected;                                                                     \
    }

ATOMICS(8, uint8_t)
ATOMICS(16, uint16_t)
ATOMICS(32, uint32_t)
ATOMICS(64, uint64_t)


void __tsan_atomic_thread_fence(int mo) { (void)mo; __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int mo) { (void)mo; __atomic_signal_fence(__ATOMIC_SEQ_CST); }
