// generic_types (C++): the specification's generic names as C++ overloads, on every type of
// each name's table (OpenSHMEM 1.5 sections 9.6 RMA, 9.7 AMO, 9.8 signals, 9.9 collectives
// and reductions, 9.10 point-to-point synchronization; the 1.6 ibput/ibget, scans and
// signal_add/set), each typedef'd type through variables declared with the typedef, with and
// without a context where the name has one; shmem_sync(team) next to the deprecated
// active-set shmem_sync; the deprecated generic AMO names and shmem_wait. The values carry a
// high bit, so an overload of the wrong width would show.
#include <cstddef>
#include <cstdint>

#include "../c/check.h"
#include "../c/generic_tables.h"

namespace {

int me, npes, right, left;
shmem_ctx_t ctx;

template <typename T> T value(T high, int k) { return static_cast<T>(high + static_cast<T>(k)); }

template <typename T> T *symmetric(std::size_t count) {
    T *p = static_cast<T *>(shmem_calloc(count, sizeof(T)));
    CHECK(p != nullptr, "calloc of %zu elements", count);
    return p;
}

// Standard RMA types: put, p, g, get, iput, iget, ibput, ibget, put_nbi, get_nbi,
// put_signal(_nbi), and the collectives over the same table.
template <typename T> void rma(const char *name, T high) {
    T *dest = symmetric<T>(64), *src = symmetric<T>(8);
    std::uint64_t *sig = symmetric<std::uint64_t>(1);
    T back[8];
    for (int k = 0; k < 8; k++)
        src[k] = value(high, me * 8 + k);
    shmem_barrier_all();
    shmem_put(dest, src, 2, right);
    shmem_put(ctx, dest + 2, src, 2, right);
    shmem_p(dest + 4, src[0], right);
    shmem_p(ctx, dest + 5, src[1], right);
    shmem_iput(dest + 6, src, 2, 1, 2, right);
    shmem_iput(ctx, dest + 10, src, 2, 1, 2, right);
    shmem_ibput(dest + 14, src, 3, 4, 2, 2, right);
    shmem_ibput(ctx, dest + 20, src, 3, 4, 1, 2, right);
    shmem_put_nbi(dest + 24, src, 2, right);
    shmem_put_nbi(ctx, dest + 26, src, 2, right);
    shmem_put_signal(dest + 28, src, 1, sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_put_signal(ctx, dest + 29, src, 1, sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_put_signal_nbi(dest + 30, src, 1, sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_put_signal_nbi(ctx, dest + 31, src, 1, sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_quiet(ctx);
    shmem_quiet();
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 4);
    shmem_barrier_all();
    const int at[] = {0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 15, 17, 18, 20, 23, 24, 25, 26, 27};
    const int from[] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 4, 5, 0, 4, 0, 1, 0, 1};
    for (std::size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        CHECK(dest[at[i]] == value(high, left * 8 + from[i]), "%s: element %d", name, at[i]);
    for (int k = 28; k < 32; k++)
        CHECK(dest[k] == value(high, left * 8), "%s: put_signal element %d", name, k);
    CHECK(shmem_g(dest + 4, right) == value(high, me * 8), "%s: g", name);
    CHECK(shmem_g(ctx, dest + 5, right) == value(high, me * 8 + 1), "%s: ctx g", name);
    shmem_get(back, dest, 2, right);
    shmem_get(ctx, back + 2, dest + 2, 2, right);
    shmem_get_nbi(back + 4, dest + 24, 2, right);
    shmem_get_nbi(ctx, back + 6, dest + 26, 2, right);
    shmem_ctx_quiet(ctx);
    shmem_quiet();
    for (int k = 0; k < 8; k++)
        CHECK(back[k] == value(high, me * 8 + k % 2), "%s: get element %d", name, k);
    shmem_iget(back, dest + 6, 1, 2, 2, right);
    shmem_iget(ctx, back + 2, dest + 10, 1, 2, 2, right);
    for (int k = 0; k < 4; k++)
        CHECK(back[k] == value(high, me * 8 + k % 2), "%s: iget element %d", name, k);
    shmem_ibget(back, dest + 14, 4, 3, 2, 2, right);
    shmem_ibget(ctx, back + 2, dest + 20, 4, 3, 1, 2, right);
    CHECK(back[0] == value(high, me * 8) && back[5] == value(high, me * 8 + 5) &&
              back[2] == value(high, me * 8) && back[6] == value(high, me * 8 + 4),
          "%s: ibget", name);
    shmem_barrier_all();
    // Each collective into its own part of dest: a PE may write another's dest as soon as it
    // enters a collective.
    src[0] = value(high, me);
    CHECK(shmem_broadcast(SHMEM_TEAM_WORLD, dest + 40, src, 1, 0) == 0, "%s: broadcast", name);
    CHECK(me == 0 || dest[40] == value(high, 0), "%s: broadcast value", name);
    CHECK(shmem_collect(SHMEM_TEAM_WORLD, dest + 44, src, 1) == 0, "%s: collect", name);
    CHECK(shmem_fcollect(SHMEM_TEAM_WORLD, dest + 48, src, 1) == 0, "%s: fcollect", name);
    for (int p = 0; p < npes; p++)
        CHECK(dest[44 + p] == value(high, p) && dest[48 + p] == value(high, p),
              "%s: (f)collect from %d", name, p);
    for (int p = 0; p < npes; p++)
        src[p] = value(high, me * 4 + p);
    CHECK(shmem_alltoall(SHMEM_TEAM_WORLD, dest + 52, src, 1) == 0, "%s: alltoall", name);
    CHECK(shmem_alltoalls(SHMEM_TEAM_WORLD, dest + 56, src, 1, 1, 1) == 0, "%s: alltoalls", name);
    for (int p = 0; p < npes; p++)
        CHECK(dest[52 + p] == value(high, p * 4 + me) && dest[56 + p] == value(high, p * 4 + me),
              "%s: alltoall(s) from %d", name, p);
    shmem_barrier_all();
    shmem_free(sig);
    shmem_free(src);
    shmem_free(dest);
}

// Standard AMO types: 12 increments of PE 0's a[0] per PE, a compare_swap chain on the
// right neighbour's a[1].
template <typename T> void std_amo(const char *name, T high) {
    T *a = symmetric<T>(2);
    T fetched[4];
    const T most = static_cast<T>(12 * npes);
    a[1] = value(high, 0);
    shmem_barrier_all();
    shmem_atomic_add(a, T(1), 0);
    shmem_atomic_add(ctx, a, T(1), 0);
    shmem_atomic_inc(a, 0);
    shmem_atomic_inc(ctx, a, 0);
    CHECK(shmem_atomic_fetch_add(a, T(1), 0) < most, "%s: fetch_add", name);
    CHECK(shmem_atomic_fetch_add(ctx, a, T(1), 0) < most, "%s: ctx fetch_add", name);
    CHECK(shmem_atomic_fetch_inc(a, 0) < most, "%s: fetch_inc", name);
    CHECK(shmem_atomic_fetch_inc(ctx, a, 0) < most, "%s: ctx fetch_inc", name);
    shmem_atomic_fetch_add_nbi(fetched, a, T(1), 0);
    shmem_atomic_fetch_add_nbi(ctx, fetched + 1, a, T(1), 0);
    shmem_atomic_fetch_inc_nbi(fetched + 2, a, 0);
    shmem_atomic_fetch_inc_nbi(ctx, fetched + 3, a, 0);
    shmem_quiet();
    shmem_ctx_quiet(ctx);
    for (int k = 0; k < 4; k++)
        CHECK(fetched[k] < most, "%s: nbi fetch %d", name, k);
    CHECK(shmem_atomic_compare_swap(a + 1, value(high, 0), value(high, 1), right) ==
              value(high, 0),
          "%s: compare_swap", name);
    CHECK(shmem_atomic_compare_swap(ctx, a + 1, value(high, 1), value(high, 2), right) ==
              value(high, 1),
          "%s: ctx compare_swap", name);
    CHECK(shmem_atomic_compare_swap(a + 1, T(2), T(0), right) == value(high, 2),
          "%s: compare_swap compared the high bit", name);
    shmem_atomic_compare_swap_nbi(fetched, a + 1, value(high, 2), value(high, 3), right);
    shmem_quiet();
    shmem_atomic_compare_swap_nbi(ctx, fetched + 1, a + 1, value(high, 3), value(high, 4), right);
    shmem_ctx_quiet(ctx);
    CHECK(fetched[0] == value(high, 2) && fetched[1] == value(high, 3), "%s: cswap_nbi", name);
    shmem_barrier_all();
    CHECK(me != 0 || a[0] == most, "%s: 12 adds per PE", name);
    CHECK(a[1] == value(high, 4), "%s: compare_swap chain", name);
    shmem_barrier_all();
    shmem_free(a);
}

// Extended AMO types: set, fetch, swap and their nbi forms on the right neighbour's e.
template <typename T> void ext_amo(const char *name, T high) {
    T *e = symmetric<T>(2);
    T fetched[2];
    shmem_barrier_all();
    shmem_atomic_set(e, value(high, me + 1), right);
    shmem_atomic_set(ctx, e + 1, value(high, me + 2), right);
    shmem_quiet();
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    CHECK(shmem_atomic_fetch(e, me) == value(high, left + 1), "%s: fetch", name);
    CHECK(shmem_atomic_fetch(ctx, e + 1, me) == value(high, left + 2), "%s: ctx fetch", name);
    shmem_barrier_all(); // before the left neighbour swaps e
    shmem_atomic_fetch_nbi(fetched, e, right);
    shmem_atomic_fetch_nbi(ctx, fetched + 1, e + 1, right);
    shmem_quiet();
    shmem_ctx_quiet(ctx);
    CHECK(fetched[0] == value(high, me + 1) && fetched[1] == value(high, me + 2),
          "%s: fetch_nbi", name);
    CHECK(shmem_atomic_swap(e, value(high, 7), right) == value(high, me + 1), "%s: swap", name);
    CHECK(shmem_atomic_swap(ctx, e + 1, value(high, 8), right) == value(high, me + 2),
          "%s: ctx swap", name);
    shmem_atomic_swap_nbi(fetched, e, T(9), right);
    shmem_atomic_swap_nbi(ctx, fetched + 1, e + 1, T(10), right);
    shmem_quiet();
    shmem_ctx_quiet(ctx);
    CHECK(fetched[0] == value(high, 7) && fetched[1] == value(high, 8), "%s: swap_nbi", name);
    shmem_barrier_all();
    CHECK(e[0] == T(9) && e[1] == T(10), "%s: swapped in", name);
    shmem_barrier_all();
    shmem_free(e);
}

// Bitwise AMO types: and (from all ones), or, xor (from zero) of PE 0's b, six forms each.
template <typename T> void bit_amo(const char *name, T high) {
    T *b = symmetric<T>(18);
    T fetched[4];
    const T mine = static_cast<T>(T(1) << me), all = static_cast<T>((T(1) << npes) - 1);
    const T not_mine = static_cast<T>(~mine), with_high = static_cast<T>(mine | high);
    for (int f = 0; f < 6; f++)
        b[f] = static_cast<T>(~T(0));
    shmem_barrier_all();
    shmem_atomic_and(b, not_mine, 0);
    shmem_atomic_and(ctx, b + 1, not_mine, 0);
    fetched[0] = shmem_atomic_fetch_and(b + 2, not_mine, 0);
    fetched[1] = shmem_atomic_fetch_and(ctx, b + 3, not_mine, 0);
    shmem_atomic_fetch_and_nbi(fetched + 2, b + 4, not_mine, 0);
    shmem_atomic_fetch_and_nbi(ctx, fetched + 3, b + 5, not_mine, 0);
    shmem_quiet();
    shmem_ctx_quiet(ctx);
    for (int k = 0; k < 4; k++)
        CHECK((fetched[k] & high) && (fetched[k] & mine), "%s: fetch_and %d", name, k);
    shmem_atomic_or(b + 6, with_high, 0);
    shmem_atomic_or(ctx, b + 7, with_high, 0);
    fetched[0] = shmem_atomic_fetch_or(b + 8, with_high, 0);
    fetched[1] = shmem_atomic_fetch_or(ctx, b + 9, with_high, 0);
    shmem_atomic_fetch_or_nbi(fetched + 2, b + 10, with_high, 0);
    shmem_atomic_fetch_or_nbi(ctx, fetched + 3, b + 11, with_high, 0);
    shmem_atomic_xor(b + 12, mine, 0);
    shmem_atomic_xor(ctx, b + 13, mine, 0);
    (void) shmem_atomic_fetch_xor(b + 14, mine, 0);
    (void) shmem_atomic_fetch_xor(ctx, b + 15, mine, 0);
    shmem_atomic_fetch_xor_nbi(fetched, b + 16, mine, 0);
    shmem_atomic_fetch_xor_nbi(ctx, fetched + 1, b + 17, mine, 0);
    shmem_quiet();
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    for (int f = 0; me == 0 && f < 6; f++)
        CHECK(b[f] == static_cast<T>(~all) && b[6 + f] == static_cast<T>(all | high) &&
                  b[12 + f] == all,
              "%s: bitwise form %d", name, f);
    shmem_barrier_all();
    shmem_free(b);
}

// Point-to-point synchronization types: every wait and test form on four ivars the left
// neighbour sets to the high bit plus one.
template <typename T> void p2p(const char *name, T high) {
    T *ivars = symmetric<T>(4);
    const T want = value(high, 1);
    T cmp_values[4] = {want, want, want, want};
    int status[4] = {0, 0, 0, 0};
    std::size_t indices[4];
    shmem_barrier_all();
    for (int k = 0; k < 4; k++)
        shmem_p(ivars + k, want, right);
    shmem_wait_until(ivars, SHMEM_CMP_EQ, want);
    shmem_wait_until_all(ivars, 4, status, SHMEM_CMP_EQ, want);
    CHECK(shmem_wait_until_any(ivars, 4, status, SHMEM_CMP_EQ, want) < 4, "%s: any", name);
    CHECK(shmem_wait_until_some(ivars, 4, indices, status, SHMEM_CMP_EQ, want) == 4,
          "%s: some", name);
    shmem_wait_until_all_vector(ivars, 4, status, SHMEM_CMP_EQ, cmp_values);
    CHECK(shmem_wait_until_any_vector(ivars, 4, status, SHMEM_CMP_EQ, cmp_values) < 4,
          "%s: any_vector", name);
    CHECK(shmem_wait_until_some_vector(ivars, 4, indices, status, SHMEM_CMP_EQ, cmp_values) == 4,
          "%s: some_vector", name);
    CHECK(shmem_test(ivars, SHMEM_CMP_EQ, want) && !shmem_test(ivars, SHMEM_CMP_EQ, T(1)),
          "%s: test compares the high bit", name);
    CHECK(shmem_test_all(ivars, 4, status, SHMEM_CMP_EQ, want), "%s: test_all", name);
    CHECK(shmem_test_any(ivars, 4, status, SHMEM_CMP_EQ, want) < 4, "%s: test_any", name);
    CHECK(shmem_test_some(ivars, 4, indices, status, SHMEM_CMP_EQ, want) == 4, "%s: test_some",
          name);
    CHECK(shmem_test_all_vector(ivars, 4, status, SHMEM_CMP_EQ, cmp_values), "%s: all_v", name);
    CHECK(shmem_test_any_vector(ivars, 4, status, SHMEM_CMP_EQ, cmp_values) < 4, "%s: any_v",
          name);
    CHECK(shmem_test_some_vector(ivars, 4, indices, status, SHMEM_CMP_EQ, cmp_values) == 4,
          "%s: some_v", name);
    shmem_barrier_all();
    shmem_free(ivars);
}

// Team reductions: the bitwise ones with the high bit.
template <typename T> void bit_reduce(const char *name, T high) {
    T *src = symmetric<T>(3), *dst = symmetric<T>(3);
    const T mine = static_cast<T>(T(1) << me), all = static_cast<T>((T(1) << npes) - 1);
    src[0] = static_cast<T>(~mine);
    src[1] = static_cast<T>(mine | high);
    src[2] = mine;
    CHECK(shmem_and_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, "%s: and", name);
    CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, dst + 1, src + 1, 1) == 0, "%s: or", name);
    CHECK(shmem_xor_reduce(SHMEM_TEAM_WORLD, dst + 2, src + 2, 1) == 0, "%s: xor", name);
    CHECK(dst[0] == static_cast<T>(~all) && dst[1] == static_cast<T>(all | high) &&
              dst[2] == all,
          "%s: bitwise reductions", name);
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

template <typename T> void minmax_reduce(const char *name) {
    T *src = symmetric<T>(1), *dst = symmetric<T>(2);
    *src = static_cast<T>(me + 1);
    CHECK(shmem_max_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, "%s: max", name);
    CHECK(shmem_min_reduce(SHMEM_TEAM_WORLD, dst + 1, src, 1) == 0, "%s: min", name);
    CHECK(dst[0] == static_cast<T>(npes) && dst[1] == T(1), "%s: max/min values", name);
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

template <typename T> void arith_reduce(const char *name) {
    T *src = symmetric<T>(1), *dst = symmetric<T>(4);
    int product = 1;
    for (int p = 2; p <= npes; p++)
        product *= p;
    *src = static_cast<T>(me + 1);
    CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, "%s: sum", name);
    CHECK(shmem_prod_reduce(SHMEM_TEAM_WORLD, dst + 1, src, 1) == 0, "%s: prod", name);
    CHECK(shmem_sum_inscan(SHMEM_TEAM_WORLD, dst + 2, src, 1) == 0, "%s: inscan", name);
    CHECK(shmem_sum_exscan(SHMEM_TEAM_WORLD, dst + 3, src, 1) == 0, "%s: exscan", name);
    CHECK(dst[0] == static_cast<T>(npes * (npes + 1) / 2) && dst[1] == static_cast<T>(product) &&
              dst[2] == static_cast<T>((me + 1) * (me + 2) / 2) &&
              (me == 0 || dst[3] == static_cast<T>(me * (me + 1) / 2)),
          "%s: sum, prod and scans", name);
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}


// The deprecated generic names, which have no context form: fetch, set, swap on the
// extended rows of OpenSHMEM 1.3, and cswap, finc, inc, fadd, add on its standard rows.
template <typename T> void deprecated_ext(const char *name, T high) {
    T *d = symmetric<T>(1);
    shmem_barrier_all();
    shmem_set(d, value(high, me + 1), right);
    shmem_barrier_all();
    CHECK(shmem_fetch(d, me) == value(high, left + 1), "%s: shmem_fetch", name);
    shmem_barrier_all(); // before the left neighbour swaps d
    CHECK(shmem_swap(d, T(5), right) == value(high, me + 1), "%s: shmem_swap", name);
    shmem_barrier_all();
    shmem_free(d);
}

template <typename T> void deprecated_std(const char *name, T high) {
    T *d = symmetric<T>(2);
    d[1] = value(high, 0);
    shmem_barrier_all();
    shmem_add(d, T(1), 0);
    shmem_inc(d, 0);
    CHECK(shmem_fadd(d, T(1), 0) < T(4 * npes), "%s: shmem_fadd", name);
    CHECK(shmem_finc(d, 0) < T(4 * npes), "%s: shmem_finc", name);
    CHECK(shmem_cswap(d + 1, value(high, 0), value(high, 1), right) == value(high, 0),
          "%s: shmem_cswap", name);
    shmem_barrier_all();
    CHECK(me != 0 || d[0] == T(4 * npes), "%s: 4 adds per PE", name);
    CHECK(d[1] == value(high, 1), "%s: cswap stored", name);
    shmem_barrier_all();
    shmem_free(d);
}

// The deprecated shmem_wait returns once ivar differs from cmp_value.
template <typename T> void deprecated_wait(const char *name, T high) {
    T *ivar = symmetric<T>(1);
    shmem_barrier_all();
    shmem_p(ivar, high, right);
    shmem_wait(ivar, T(0));
    CHECK(*ivar == high, "%s: shmem_wait returned early", name);
    shmem_barrier_all();
    shmem_free(ivar);
}

} // namespace

int main() {
    shmem_init();
    ring_of_pes(&me, &npes, &right, &left);
    CHECK(npes <= 4, "the values are made for at most 4 PEs");
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");

    // Every table of ../c/generic_tables.h, each name's template on each row.
#define RUN_RMA(T, NAME, HIGH) rma<T>(#NAME, HIGH);
#define RUN_STD_AMO(T, NAME, HIGH) std_amo<T>(#NAME, HIGH);
#define RUN_EXT_AMO(T, NAME, HIGH) ext_amo<T>(#NAME, HIGH);
#define RUN_BIT_AMO(T, NAME, HIGH) bit_amo<T>(#NAME, HIGH);
#define RUN_P2P(T, NAME, HIGH) p2p<T>(#NAME, HIGH);
#define RUN_BIT_REDUCE(T, NAME, HIGH) bit_reduce<T>(#NAME, HIGH);
#define RUN_MINMAX_REDUCE(T, NAME, HIGH) minmax_reduce<T>(#NAME);
#define RUN_ARITH_REDUCE(T, NAME, HIGH) arith_reduce<T>(#NAME);
#define RUN_DEPRECATED_EXT(T, NAME, HIGH) deprecated_ext<T>(#NAME, HIGH);
#define RUN_DEPRECATED_STD(T, NAME, HIGH) deprecated_std<T>(#NAME, HIGH);
#define RUN_DEPRECATED_WAIT(T, NAME, HIGH) deprecated_wait<T>(#NAME, HIGH);
    RMA_TYPES(RUN_RMA)
    STD_AMO_TYPES(RUN_STD_AMO)
    EXT_AMO_TYPES(RUN_EXT_AMO)
    BIT_AMO_TYPES(RUN_BIT_AMO)
    P2P_TYPES(RUN_P2P)
    REDUCE_BIT_TYPES(RUN_BIT_REDUCE)
    REDUCE_MINMAX_TYPES(RUN_MINMAX_REDUCE)
    REDUCE_ARITH_TYPES(RUN_ARITH_REDUCE)
    DEPRECATED_EXT_TYPES(RUN_DEPRECATED_EXT)
    DEPRECATED_STD_TYPES(RUN_DEPRECATED_STD)
    DEPRECATED_WAIT_TYPES(RUN_DEPRECATED_WAIT)

    // shmem_sync: the team form, then the deprecated active-set form of the same name.
    static long psync[SHMEM_SYNC_SIZE];
    for (int k = 0; k < SHMEM_SYNC_SIZE; k++)
        psync[k] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync(team)");
    shmem_sync(0, 0, npes, psync);

    // Signal updates with the optional context first.
    std::uint64_t *sig = symmetric<std::uint64_t>(2);
    shmem_barrier_all();
    shmem_signal_set(sig, 10, right);
    shmem_fence();
    shmem_signal_add(sig, 5, right);
    shmem_signal_set(ctx, sig + 1, 20, right);
    shmem_ctx_fence(ctx);
    shmem_signal_add(ctx, sig + 1, 7, right);
    shmem_ctx_quiet(ctx);
    CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 15) == 15, "signal_set/add");
    CHECK(shmem_signal_wait_until(sig + 1, SHMEM_CMP_EQ, 27) == 27, "ctx signal_set/add");
    shmem_barrier_all();
    shmem_free(sig);
    shmem_ctx_destroy(ctx);
    FINISH("generic_types_cxx");
    return 0;
}
