// static_destructor: a C++ object made on first use while the PE runs (a function-local
// static) registers its destructor with __cxa_atexit when it is made; C++17 [basic.start.term]
// destroys it at exit, after the atexit handlers registered before it was made, before
// those registered after. Each PE prints its lines, so the output shows the destructor ran
// once per PE, on that PE, in that order.
#include <shmem.h>
#include <cstdio>
#include <cstdlib>

static int me = -1;

struct Tally {
    int pe;
    explicit Tally(int pe) : pe(pe) {}
    ~Tally() { std::printf("destructor: PE %d tally\n", pe); }
};

static Tally &tally() {
    static Tally made(me);
    return made;
}

static void before_tally() { std::printf("atexit: PE %d before_tally\n", me); }
static void after_tally() { std::printf("atexit: PE %d after_tally\n", me); }

int main() {
    shmem_init();
    me = shmem_my_pe();
    std::atexit(before_tally);
    if (tally().pe != me) {
        std::fprintf(stderr, "FAIL static_destructor: PE %d made a tally for %d\n", me, tally().pe);
        return 1;
    }
    std::atexit(after_tally);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
