// rshmem's device-side API (docs/teams-and-contexts.md, Tier-0): SHMEM calls from CUDA kernels on the
// default context, for peers whose memory this GPU reaches by loads and stores (NVLink or
// PCIe peer access). The runtime compiles it with NVRTC in front of the user's source;
// docs/device-api.md is the user's guide, hw/src/cuda/device_api/mod.rs the design.
//
// Ordering (docs/ordering.md). A remote put or p is a store the thread issues at once; a get
// or g is a load that completes before the call returns. `__threadfence_system()` orders a
// thread's earlier loads and stores before its later ones as every thread of the system
// observes them, so it is fence, and it is also quiet: a load/store transport has no
// operation in flight beyond what the fence orders, and the observer's own synchronisation
// (wait_until, signal_wait_until, barrier_all, all of which end with a fence) makes the
// writes visible to it. Fences order only the calling thread's operations; scoped calls
// (_warp, _block) are collective, and a fence by one thread after them covers the whole
// group's operations because the group's barrier (__syncwarp, __syncthreads) is in the
// causality order of the CUDA memory model.

#ifndef RSHMEM_DEVICE_CUH
#define RSHMEM_DEVICE_CUH

// The most PEs a kernel's state describes (hw::cuda's MAX_PES).
#define RSHMEM_MAX_PES 128
// Bytes of the synchronisation memory the runtime reserves per PE (hw::cuda's SYNC_BYTES):
// rshmem_sync_t in the first RSHMEM_SYNC_HEADER_BYTES, the collectives' scratch after it.
#define RSHMEM_SYNC_BYTES 2097152
#define RSHMEM_SYNC_HEADER_BYTES 8192
#define RSHMEM_SCRATCH_BYTES (RSHMEM_SYNC_BYTES - RSHMEM_SYNC_HEADER_BYTES)

// The team slots (runtime/src/team: every member of a team agrees on its slot, at most 64,
// and teams that share a slot have no PE in common) and the rounds of a dissemination barrier
// over RSHMEM_MAX_PES (2^7 = 128).
#define RSHMEM_TEAM_SLOTS 64
#define RSHMEM_TEAM_ROUNDS 7
static_assert((1 << RSHMEM_TEAM_ROUNDS) >= RSHMEM_MAX_PES, "a team barrier has too few rounds");

// A wait that has not been satisfied after this many nanoseconds reports what it waits for
// and traps, which fails the kernel (and the GPU's context) instead of hanging the program.
// The runtime sets it with -D when asked to; left 0, the bound state's wait_timeout_ns (the
// run's RSHMEM_WAIT_TIMEOUT_MS) decides, and 0 there waits forever.
#ifndef RSHMEM_WAIT_TIMEOUT_NS
#define RSHMEM_WAIT_TIMEOUT_NS 0
#endif

typedef unsigned long long rshmem_u64;

// The record of a wait that timed out (hw::cuda::watchdog, byte for byte, 256 bytes): the
// first thread to time out claims it, fills it, fences system-wide and sets `ready`; the PE's
// watchdog thread, which polls it in pinned host memory, names the word in the program's
// terms (its allocation table) and ends the job.
#define RSHMEM_HANG_CALL_BYTES 48
#define RSHMEM_HANG_FUNCTION_BYTES 136
typedef struct {
    unsigned int claimed;
    unsigned int ready;
    int pe;
    int cmp;
    unsigned int block[3];
    unsigned int thread[3];
    rshmem_u64 word;
    rshmem_u64 value;
    rshmem_u64 seen;
    rshmem_u64 waited_ns;
    char call[RSHMEM_HANG_CALL_BYTES];
    char function[RSHMEM_HANG_FUNCTION_BYTES];
} rshmem_hang_t;

static_assert(sizeof(rshmem_hang_t) == 256, "rshmem_hang_t is hw::cuda::watchdog's record");

// What the runtime binds before each launch (hw::cuda::device_api::state, byte for byte).
typedef struct {
    int my_pe;
    int n_pes;
    // The smallest PE's device heap, in bytes: an offset below it is inside every heap.
    rshmem_u64 heap_bytes;
    // How long a wait may go unsatisfied before it reports and traps; 0: forever.
    rshmem_u64 wait_timeout_ns;
    // The PE's rshmem_hang_t (pinned host memory mapped to the GPU); 0: none, the wait only
    // prints.
    rshmem_u64 hang_record;
    // The PE's rshmem_channel_t (pinned host memory mapped to the GPU), through which kernels
    // reach PEs of other nodes; 0: every peer is reached by loads and stores.
    rshmem_u64 channel;
    // The base address of every PE's device heap, valid on this GPU (one process, UVA); 0 for
    // a PE of another node (reached through the channel).
    rshmem_u64 heap_base[RSHMEM_MAX_PES];
    // The base address of every PE's synchronisation memory (rshmem_sync_t); 0 for a PE of
    // another node.
    rshmem_u64 sync_base[RSHMEM_MAX_PES];
} rshmem_state_t;

// Programs built by nvcc with rshmem/device_gpu.cuh define RSHMEM_STATE_STORAGE as `static`:
// each of their translation units then has its own copy, which libshmem binds through that
// unit's binder (runtime/capi/src/device_state.rs), and -rdc links no duplicate.
#ifndef RSHMEM_STATE_STORAGE
#define RSHMEM_STATE_STORAGE
#endif
RSHMEM_STATE_STORAGE __constant__ rshmem_state_t rshmem_state;

// One PE's synchronisation memory: zeroed by the runtime, kept for the whole run.
typedef struct {
    // How many barrier_all calls this PE began; only this PE writes it.
    rshmem_u64 barrier_epoch;
    // arrived[pe]: the last barrier_all epoch PE `pe` reached, written by `pe`.
    rshmem_u64 arrived[RSHMEM_MAX_PES];
    // How many pushed reductions this PE began; only this PE writes it.
    rshmem_u64 reduce_epoch;
    // pushed[pe]: the last pushed-reduction epoch whose data PE `pe` has put into this PE's
    // scratch, written by `pe`.
    rshmem_u64 pushed[RSHMEM_MAX_PES];
    // The grid barrier of this PE's on-stream collectives (a kernel of several blocks): how
    // many blocks arrived, and how many times all of them did. Only this PE's grid uses them.
    unsigned grid_arrived;
    unsigned grid_generation;
    // The barriers of teams of some of the PEs, by team slot: word 0 is how many barriers this
    // PE began on the slot (only this PE writes it), word 1 + k the counter to which round k's
    // member behind this PE adds (rshmem_detail_team_barrier_thread).
    rshmem_u64 team_barrier[RSHMEM_TEAM_SLOTS][1 + RSHMEM_TEAM_ROUNDS];
    // How many requests this PE's kernels posted to its channel: the next ticket.
    rshmem_u64 proxy_tickets;
} rshmem_sync_t;

static_assert(sizeof(rshmem_sync_t) <= RSHMEM_SYNC_HEADER_BYTES,
              "rshmem_sync_t outgrew its memory");
// hw::cuda::device_api::sync_words names these words in hang reports by these offsets. NVRTC
// has no offsetof, so programs that nvcc compiles check them.
#ifndef __CUDACC_RTC__
static_assert(__builtin_offsetof(rshmem_sync_t, arrived) == 8 &&
                  __builtin_offsetof(rshmem_sync_t, pushed) == 1040 &&
                  __builtin_offsetof(rshmem_sync_t, grid_arrived) == 2064 &&
                  __builtin_offsetof(rshmem_sync_t, team_barrier) == 2072,
              "rshmem_sync_t's layout is mirrored in hw/src/cuda/device_api/sync_words.rs");
#endif

// Comparisons of wait_until and signal_wait_until (hw::Cmp's order).
#define RSHMEM_CMP_EQ 0
#define RSHMEM_CMP_NE 1
#define RSHMEM_CMP_GT 2
#define RSHMEM_CMP_GE 3
#define RSHMEM_CMP_LT 4
#define RSHMEM_CMP_LE 5

// Signal operators of put_signal.
#define RSHMEM_SIGNAL_SET 0
#define RSHMEM_SIGNAL_ADD 1

// `T` where it must not take part in template argument deduction, so that
// `rshmem_atomic_add(counter, 1, pe)` takes its type from `counter` alone.
template <typename T> struct rshmem_detail_same { typedef T type; };
#define RSHMEM_SAME(T) typename rshmem_detail_same<T>::type

// ---- The channel to PEs of other nodes ----------------------------------------------------
//
// A kernel reaches a PE of another node (heap_base 0 in the state) through its PE's proxy, a
// host thread (hw::cuda::remote::kernel_proxy, which mirrors these layouts) serving a ring of
// requests in pinned host memory. A thread takes a ticket (an atomic add on its PE's
// proxy_tickets), waits until the ticket's slot is released, writes the request, fences and
// writes the slot's seq last. The proxy performs requests in ticket order, each complete at
// its target before the next starts, then writes its result and `completed`. So requests
// reach every target in ticket order (fence needs nothing more for them) and quiet waits
// until `completed` passes every ticket taken before it.
#define RSHMEM_CHANNEL_SLOTS 1024

// Verbs. PUT: `len` bytes from this PE's `src` (global memory) to offset `dst` of the target's
// region; GET: `len` bytes from offset `src` of the region to this PE's `dst`; AMO: atomic
// `op` on the `len`-byte word at offset `dst`, result the old value; PUT_VALUE: the low `len`
// bytes of `value` to offset `dst`; GET_VALUE: `len` bytes at offset `src` as the result;
// PUT_INLINE: the first `len` bytes of the slot's payload to offset `dst`; GET_INLINE: `len`
// bytes at offset `src` into the slot's payload. The inline verbs carry what the proxy cannot
// copy itself: bytes in shared or local memory.
#define RSHMEM_VERB_PUT 1
#define RSHMEM_VERB_GET 2
#define RSHMEM_VERB_AMO 3
#define RSHMEM_VERB_PUT_VALUE 4
#define RSHMEM_VERB_GET_VALUE 5
#define RSHMEM_VERB_PUT_INLINE 6
#define RSHMEM_VERB_GET_INLINE 7
#define RSHMEM_INLINE_BYTES 1024

// Regions of the target: its device heap, its synchronisation memory (rshmem_sync_t and the
// collectives' scratch).
#define RSHMEM_REGION_HEAP 0
#define RSHMEM_REGION_SYNC 1

// Atomic operations of an AMO request.
#define RSHMEM_AMO_FETCH 1
#define RSHMEM_AMO_SET 2
#define RSHMEM_AMO_SWAP 3
#define RSHMEM_AMO_COMPARE_SWAP 4
#define RSHMEM_AMO_ADD 5
#define RSHMEM_AMO_AND 6
#define RSHMEM_AMO_OR 7
#define RSHMEM_AMO_XOR 8

typedef struct {
    rshmem_u64 seq; // ticket + 1, written last
    unsigned short verb;
    unsigned char region;
    unsigned char awaited; // 1: the thread waits for the result and acknowledges it
    int pe;
    rshmem_u64 dst, src, len, value, compare;
    unsigned op;
    unsigned reserved;
} rshmem_request_t;
typedef struct {
    rshmem_u64 done;  // ticket + 1 once the request is complete
    rshmem_u64 value; // its result
    rshmem_u64 ack;   // ticket + 1 once its thread read the result
    rshmem_u64 reserved;
} rshmem_result_t;
typedef struct {
    rshmem_u64 released; // slots of tickets below released + RSHMEM_CHANNEL_SLOTS are free
    rshmem_u64 pad0[7];
    rshmem_u64 completed; // every ticket below it is complete
    rshmem_u64 pad1[7];
    rshmem_u64 failed; // the proxy failed a request (for the host; the proxy ends the job)
    rshmem_u64 pad2[15];
    rshmem_request_t request[RSHMEM_CHANNEL_SLOTS];
    rshmem_result_t result[RSHMEM_CHANNEL_SLOTS];
    unsigned char payload[RSHMEM_CHANNEL_SLOTS][RSHMEM_INLINE_BYTES];
} rshmem_channel_t;
static_assert(sizeof(rshmem_request_t) == 64, "rshmem_request_t is hw::cuda::remote::kernel_proxy's");
static_assert(sizeof(rshmem_result_t) == 32, "rshmem_result_t is hw::cuda::remote::kernel_proxy's");
static_assert(sizeof(rshmem_channel_t) == 1147136, "rshmem_channel_t is hw::cuda::remote::kernel_proxy's");

// ---- Setup and addressing ----------------------------------------------------------------

__device__ inline int rshmem_my_pe() { return rshmem_state.my_pe; }
__device__ inline int rshmem_n_pes() { return rshmem_state.n_pes; }

// Traps, naming it, on a PE outside the run, which would index past the heap table and fault
// somewhere else.
__device__ inline void rshmem_detail_check_pe(int pe) {
    if (pe < 0 || pe >= rshmem_state.n_pes) {
        printf("rshmem: PE %d: PE %d does not exist: this run has %d PEs; pass a PE below n_pes()\n",
               rshmem_state.my_pe, pe, rshmem_state.n_pes);
        __trap();
    }
}

// Whether `pe` (a PE of the run) is on another node: reached through the channel, not by loads
// and stores.
__device__ inline bool rshmem_detail_proxied(int pe) {
    rshmem_detail_check_pe(pe);
    return rshmem_state.heap_base[pe] == 0;
}

// Symmetric address `ptr` of this PE translated to `pe`: the same offset in its heap. No
// checks of the address: the callers below, like SHMEM's, leave validation to the program.
__device__ inline void *rshmem_detail_remote(const void *ptr, int pe) {
    if (rshmem_detail_proxied(pe)) {
        printf("rshmem: PE %d: PE %d is on another node and has no address here; this call reaches "
               "only PEs of this node\n",
               rshmem_state.my_pe, pe);
        __trap();
    }
    rshmem_u64 offset = (rshmem_u64)ptr - rshmem_state.heap_base[rshmem_state.my_pe];
    return (void *)(rshmem_state.heap_base[pe] + offset);
}

// A pointer that loads and stores reach `pe`'s copy of the symmetric object at `ptr`, or
// NULL if `pe` is not a PE of the run, is on another node, or `ptr` is not in the symmetric
// heap.
__device__ inline void *rshmem_ptr(const void *ptr, int pe) {
    rshmem_u64 offset = (rshmem_u64)ptr - rshmem_state.heap_base[rshmem_state.my_pe];
    if (pe < 0 || pe >= rshmem_state.n_pes || offset >= rshmem_state.heap_bytes ||
        rshmem_state.heap_base[pe] == 0) {
        return nullptr;
    }
    return rshmem_detail_remote(ptr, pe);
}

// `pe`'s synchronisation memory (0 for a PE of another node).
__device__ inline rshmem_sync_t *rshmem_detail_sync(int pe) {
    return (rshmem_sync_t *)rshmem_state.sync_base[pe];
}

// ---- Requests through the channel ----------------------------------------------------------

// The waits' poll (below), here for the channel's waits, which time out and are reported as
// the program's own waits are. A proxy that fails a request ends the job itself.
template <typename T>
__device__ inline T rshmem_detail_poll(const T *word, int cmp, RSHMEM_SAME(T) value, const char *what,
                                       const char *caller = nullptr);

__device__ inline rshmem_channel_t *rshmem_detail_channel() {
    return (rshmem_channel_t *)rshmem_state.channel;
}

// Whether `ptr` is in global memory (device memory, or host memory mapped for the GPU), which
// the proxy can copy from and to; not shared or local memory.
__device__ inline bool rshmem_detail_is_global(const void *ptr) {
    unsigned global;
    asm("{ .reg .pred p; isspacep.global p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(global) : "l"(ptr));
    return global != 0;
}
__device__ inline void rshmem_detail_copy_bytes(void *dst, const void *src, size_t nbytes) {
    for (size_t i = 0; i < nbytes; ++i) ((char *)dst)[i] = ((const char *)src)[i];
}

// Takes a ticket and waits until its slot is free.
__device__ inline rshmem_u64 rshmem_detail_claim() {
    rshmem_channel_t *channel = rshmem_detail_channel();
    rshmem_u64 ticket = atomicAdd(&rshmem_detail_sync(rshmem_state.my_pe)->proxy_tickets, 1ull);
    if (ticket >= RSHMEM_CHANNEL_SLOTS) {
        rshmem_detail_poll((const rshmem_u64 *)&channel->released, RSHMEM_CMP_GT, ticket - RSHMEM_CHANNEL_SLOTS,
                           "a free slot of the kernel proxy's ring");
    }
    return ticket;
}

// Writes the request of `ticket` (see the channel above). `awaited`: the caller will wait for
// its result with rshmem_detail_await. The fence before the sequence number makes this thread's
// earlier writes (a put's source, the slot's payload) visible to the proxy.
__device__ inline void rshmem_detail_publish(rshmem_u64 ticket, unsigned verb, int pe, unsigned region,
                                             rshmem_u64 dst, rshmem_u64 src, rshmem_u64 len, rshmem_u64 value,
                                             rshmem_u64 compare, unsigned op, bool awaited) {
    volatile rshmem_request_t *request = &rshmem_detail_channel()->request[ticket % RSHMEM_CHANNEL_SLOTS];
    request->verb = (unsigned short)verb;
    request->region = (unsigned char)region;
    request->awaited = awaited ? 1 : 0;
    request->pe = pe;
    request->dst = dst;
    request->src = src;
    request->len = len;
    request->value = value;
    request->compare = compare;
    request->op = op;
    __threadfence_system();
    request->seq = ticket + 1;
}

// Posts a request and returns its ticket.
__device__ inline rshmem_u64 rshmem_detail_post(unsigned verb, int pe, unsigned region, rshmem_u64 dst,
                                                rshmem_u64 src, rshmem_u64 len, rshmem_u64 value,
                                                rshmem_u64 compare, unsigned op, bool awaited) {
    rshmem_u64 ticket = rshmem_detail_claim();
    rshmem_detail_publish(ticket, verb, pe, region, dst, src, len, value, compare, op, awaited);
    return ticket;
}

// Waits until the request of `ticket` is complete, copies the first `nbytes` of its slot's
// payload to `into`, and returns its result. The acquire makes what the proxy wrote for it (a
// get's bytes) visible to this thread.
__device__ inline rshmem_u64 rshmem_detail_await_into(rshmem_u64 ticket, void *into, size_t nbytes) {
    rshmem_channel_t *channel = rshmem_detail_channel();
    rshmem_result_t *result = &channel->result[ticket % RSHMEM_CHANNEL_SLOTS];
    rshmem_detail_poll((const rshmem_u64 *)&result->done, RSHMEM_CMP_EQ, ticket + 1,
                       "the kernel proxy's answer to a request to a PE of another node");
    rshmem_u64 value = *(volatile rshmem_u64 *)&result->value;
    rshmem_detail_copy_bytes(into, channel->payload[ticket % RSHMEM_CHANNEL_SLOTS], nbytes);
    *(volatile rshmem_u64 *)&result->ack = ticket + 1;
    return value;
}
__device__ inline rshmem_u64 rshmem_detail_await(rshmem_u64 ticket) {
    return rshmem_detail_await_into(ticket, nullptr, 0);
}

// Waits until every request this PE's kernels posted before the call is complete at its
// target: the channel's part of quiet.
__device__ inline void rshmem_detail_proxy_quiet() {
    rshmem_channel_t *channel = rshmem_detail_channel();
    if (channel == nullptr) return;
    rshmem_u64 taken = *(volatile rshmem_u64 *)&rshmem_detail_sync(rshmem_state.my_pe)->proxy_tickets;
    rshmem_detail_poll((const rshmem_u64 *)&channel->completed, RSHMEM_CMP_GE, taken,
                       "quiet: the kernel proxy's requests to PEs of other nodes");
}

// The offset of `ptr`, a symmetric address of this PE, in every PE's heap.
__device__ inline rshmem_u64 rshmem_detail_heap_offset(const void *ptr) {
    return (rshmem_u64)ptr - rshmem_state.heap_base[rshmem_state.my_pe];
}

// Puts `nbytes` from this PE's `src` to offset `dst` of `pe`'s `region` through the channel;
// returns the (last) ticket. Up to 8 bytes travel in the request; more are copied by the proxy
// from `src` in global memory, or, from shared or local memory, which the proxy cannot read,
// by this thread into the payloads of requests of RSHMEM_INLINE_BYTES each.
__device__ inline rshmem_u64 rshmem_detail_proxy_put(rshmem_u64 dst, unsigned region, const void *src,
                                                     size_t nbytes, int pe, bool awaited) {
    if (nbytes <= 8) {
        rshmem_u64 value = 0;
        rshmem_detail_copy_bytes(&value, src, nbytes);
        return rshmem_detail_post(RSHMEM_VERB_PUT_VALUE, pe, region, dst, 0, nbytes, value, 0, 0, awaited);
    }
    if (rshmem_detail_is_global(src)) {
        return rshmem_detail_post(RSHMEM_VERB_PUT, pe, region, dst, (rshmem_u64)src, nbytes, 0, 0, 0, awaited);
    }
    rshmem_u64 ticket = 0;
    for (size_t done = 0; done < nbytes; done += RSHMEM_INLINE_BYTES) {
        size_t piece = nbytes - done < RSHMEM_INLINE_BYTES ? nbytes - done : RSHMEM_INLINE_BYTES;
        ticket = rshmem_detail_claim();
        rshmem_detail_copy_bytes(rshmem_detail_channel()->payload[ticket % RSHMEM_CHANNEL_SLOTS],
                                 (const char *)src + done, piece);
        // Only the last is awaited: tickets complete in order.
        rshmem_detail_publish(ticket, RSHMEM_VERB_PUT_INLINE, pe, region, dst + done, 0, piece, 0, 0, 0,
                              awaited && done + piece == nbytes);
    }
    return ticket;
}

// Gets `nbytes` at offset `src` of `pe`'s `region` into this PE's `dst` through the channel,
// complete when it returns: into global memory by the proxy; up to 8 bytes, or into shared or
// local memory, through the request's result or payload.
__device__ inline void rshmem_detail_proxy_get(void *dst, rshmem_u64 src, unsigned region, size_t nbytes,
                                               int pe) {
    if (nbytes <= 8) {
        rshmem_u64 value = rshmem_detail_await(
            rshmem_detail_post(RSHMEM_VERB_GET_VALUE, pe, region, 0, src, nbytes, 0, 0, 0, true));
        rshmem_detail_copy_bytes(dst, &value, nbytes);
    } else if (rshmem_detail_is_global(dst)) {
        rshmem_detail_await(
            rshmem_detail_post(RSHMEM_VERB_GET, pe, region, (rshmem_u64)dst, src, nbytes, 0, 0, 0, true));
    } else {
        for (size_t done = 0; done < nbytes; done += RSHMEM_INLINE_BYTES) {
            size_t piece = nbytes - done < RSHMEM_INLINE_BYTES ? nbytes - done : RSHMEM_INLINE_BYTES;
            rshmem_u64 ticket =
                rshmem_detail_post(RSHMEM_VERB_GET_INLINE, pe, region, 0, src + done, piece, 0, 0, 0, true);
            rshmem_detail_await_into(ticket, (char *)dst + done, piece);
        }
    }
}

// The offset of `word`, in this PE's synchronisation memory, which is the same in every PE's.
__device__ inline rshmem_u64 rshmem_detail_sync_offset(const rshmem_u64 *word) {
    return (rshmem_u64)word - rshmem_state.sync_base[rshmem_state.my_pe];
}

// Sets `pe`'s copy of `word`, a word of this PE's rshmem_sync_t, to `value`: a relaxed store
// over NVLink (callers fence first), or an atomic set through the channel, which follows this
// PE's earlier requests.
__device__ inline void rshmem_detail_sync_set(int pe, rshmem_u64 *word, rshmem_u64 value) {
    rshmem_u64 offset = rshmem_detail_sync_offset(word);
    if (rshmem_detail_proxied(pe)) {
        rshmem_detail_post(RSHMEM_VERB_AMO, pe, RSHMEM_REGION_SYNC, offset, 0, 8, value, 0, RSHMEM_AMO_SET, false);
        return;
    }
    *(volatile rshmem_u64 *)(rshmem_state.sync_base[pe] + offset) = value;
}

// Adds `value` to `pe`'s copy of `word` (as above) with release: a release reduction over
// NVLink, or an atomic add through the channel.
__device__ inline void rshmem_detail_sync_add_release(int pe, rshmem_u64 *word, rshmem_u64 value) {
    rshmem_u64 offset = rshmem_detail_sync_offset(word);
    if (rshmem_detail_proxied(pe)) {
        rshmem_detail_post(RSHMEM_VERB_AMO, pe, RSHMEM_REGION_SYNC, offset, 0, 8, value, 0, RSHMEM_AMO_ADD, false);
        return;
    }
    rshmem_u64 *theirs = (rshmem_u64 *)(rshmem_state.sync_base[pe] + offset);
    asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(theirs), "l"(value) : "memory");
}

// ---- Ordering ------------------------------------------------------------------------------

// Orders this thread's puts, p's, atomics and put_signals to each PE before those it issues
// later (docs/ordering.md: fence orders delivery per destination). One system-scope fence
// orders them to every PE at once, and also orders its blocking gets (the relaxed-fetch
// rule's restoring fence). Requests through the channel are delivered in ticket order, so
// they need nothing more.
__device__ inline void rshmem_fence() { __threadfence_system(); }

// Completes this thread's operations, nbi ones included, and makes them visible: a store to
// a peer over NVLink is complete once a system-scope fence has ordered it, because any
// observer synchronises through a later write of this thread (or a barrier) that the fence
// orders after it. Call it from every thread that issued operations (or after a
// __syncthreads, from the thread that then synchronises) to cover a block's. Requests through
// the channel are complete once the proxy completed every ticket taken before the quiet.
__device__ inline void rshmem_quiet() {
    __threadfence_system();
    rshmem_detail_proxy_quiet();
}

// ---- Copies --------------------------------------------------------------------------------

// Rounds of the copy below from unit `i` on: each round issues UNROLL loads before their stores,
// so that a thread keeps UNROLL transfers in flight instead of waiting out one load's latency
// per unit. Returns the first unit no full round covered.
template <int UNROLL, typename T>
__device__ inline size_t rshmem_detail_copy_rounds(T *d, const T *s, size_t i, size_t count,
                                                   unsigned n_threads) {
    for (; i + (size_t)(UNROLL - 1) * n_threads < count; i += (size_t)UNROLL * n_threads) {
        T v[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; ++k) v[k] = s[i + (size_t)k * n_threads];
#pragma unroll
        for (int k = 0; k < UNROLL; ++k) d[i + (size_t)k * n_threads] = v[k];
    }
    return i;
}

// The part of thread `rank` of `n_threads` in copying `count` units of T: rounds of 4 units,
// then one of 2, then the last unit, so a thread waits out at most two latencies after its
// last full round. Four, not eight: on two H200s (2026-11-29) rounds of 8 then 4 and 2 held
// the transpose benchmark's get kernel (16 KiB a block's call) at 0.92 of NVSHMEM's rate over
// NVLink, rounds of 4 at 1.00 (likely as fewer registers let more blocks share an SM), and the on-stream alltoall kept its
// rate, where a plain loop lost 5 % of it. Neighbouring threads touch neighbouring units.
template <typename T>
__device__ inline void rshmem_detail_copy_units(T *d, const T *s, size_t count, unsigned rank,
                                                unsigned n_threads) {
    size_t i = rshmem_detail_copy_rounds<4>(d, s, rank, count, n_threads);
    i = rshmem_detail_copy_rounds<2>(d, s, i, count, n_threads);
    if (i < count) d[i] = s[i];
}

// Copies `nbytes` from `src` to `dst` (either may be remote): the part of thread `rank` of
// `n_threads`, in 16-, 8- or 1-byte units by the common alignment.
__device__ inline void rshmem_detail_copy(void *dst, const void *src, size_t nbytes,
                                          unsigned rank, unsigned n_threads) {
    rshmem_u64 alignment = (rshmem_u64)dst | (rshmem_u64)src | (rshmem_u64)nbytes;
    if (alignment % 16 == 0) {
        rshmem_detail_copy_units((uint4 *)dst, (const uint4 *)src, nbytes / 16, rank, n_threads);
    } else if (alignment % 8 == 0) {
        rshmem_detail_copy_units((rshmem_u64 *)dst, (const rshmem_u64 *)src, nbytes / 8, rank,
                                 n_threads);
    } else {
        rshmem_detail_copy_units((char *)dst, (const char *)src, nbytes, rank, n_threads);
    }
}

// This thread's rank in its block, and the block's size.
__device__ inline unsigned rshmem_detail_block_rank() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
__device__ inline unsigned rshmem_detail_block_size() {
    return blockDim.x * blockDim.y * blockDim.z;
}

// The part of thread `rank` of a group of `n_threads` in putting `nbytes` from `src` to `pe`'s
// copy of the symmetric `dst`: each thread's share of stores over NVLink, or one request
// through the channel made by the group's first thread (the callers' group barrier before it
// makes the group's writes of `src` visible to that thread), complete on return unless `nbi`.
__device__ inline void rshmem_detail_put_group(void *dst, const void *src, size_t nbytes, int pe,
                                               unsigned rank, unsigned n_threads, bool nbi) {
    if (!rshmem_detail_proxied(pe)) {
        rshmem_detail_copy(rshmem_detail_remote(dst, pe), src, nbytes, rank, n_threads);
    } else if (rank == 0) {
        rshmem_u64 ticket = rshmem_detail_proxy_put(rshmem_detail_heap_offset(dst), RSHMEM_REGION_HEAP, src,
                                                    nbytes, pe, !nbi);
        if (!nbi) rshmem_detail_await(ticket);
    }
}
// The same for a get from `pe`'s copy of the symmetric `src`, complete on return for the
// group's first thread (the callers' group barrier after it, for the others).
__device__ inline void rshmem_detail_get_group(void *dst, const void *src, size_t nbytes, int pe,
                                               unsigned rank, unsigned n_threads) {
    if (!rshmem_detail_proxied(pe)) {
        rshmem_detail_copy(dst, rshmem_detail_remote(src, pe), nbytes, rank, n_threads);
    } else if (rank == 0) {
        rshmem_detail_proxy_get(dst, rshmem_detail_heap_offset(src), RSHMEM_REGION_HEAP, nbytes, pe);
    }
}

// Thread scope: the calling thread alone. A put returns when `src` may be reused (its loads
// are done); its stores are ordered by a later fence or quiet. A get returns with the data
// in `dst`.
__device__ inline void rshmem_putmem(void *dst, const void *src, size_t nbytes, int pe) {
    rshmem_detail_put_group(dst, src, nbytes, pe, 0, 1, false);
}
__device__ inline void rshmem_getmem(void *dst, const void *src, size_t nbytes, int pe) {
    rshmem_detail_get_group(dst, src, nbytes, pe, 0, 1);
}

// Warp scope: every thread of a full, converged warp calls with the same arguments; each
// copies a strided part. The __syncwarp before makes the warp's earlier writes of `src`
// visible to the lanes that copy them; the one after makes the call complete for every lane.
__device__ inline void rshmem_detail_putmem_warp(void *dst, const void *src, size_t nbytes, int pe, bool nbi) {
    __syncwarp();
    rshmem_detail_put_group(dst, src, nbytes, pe, rshmem_detail_block_rank() % 32, 32, nbi);
    __syncwarp();
}
__device__ inline void rshmem_putmem_warp(void *dst, const void *src, size_t nbytes, int pe) {
    rshmem_detail_putmem_warp(dst, src, nbytes, pe, false);
}
__device__ inline void rshmem_getmem_warp(void *dst, const void *src, size_t nbytes, int pe) {
    __syncwarp();
    rshmem_detail_get_group(dst, src, nbytes, pe, rshmem_detail_block_rank() % 32, 32);
    __syncwarp();
}

// Block scope: every thread of the block calls with the same arguments, as for
// __syncthreads; each copies a strided part.
__device__ inline void rshmem_detail_putmem_block(void *dst, const void *src, size_t nbytes, int pe, bool nbi) {
    __syncthreads();
    rshmem_detail_put_group(dst, src, nbytes, pe, rshmem_detail_block_rank(), rshmem_detail_block_size(), nbi);
    __syncthreads();
}
__device__ inline void rshmem_putmem_block(void *dst, const void *src, size_t nbytes, int pe) {
    rshmem_detail_putmem_block(dst, src, nbytes, pe, false);
}
__device__ inline void rshmem_getmem_block(void *dst, const void *src, size_t nbytes, int pe) {
    __syncthreads();
    rshmem_detail_get_group(dst, src, nbytes, pe, rshmem_detail_block_rank(), rshmem_detail_block_size());
    __syncthreads();
}

// Non-blocking variants. Loads and stores are issued at once, so they behave as the blocking
// calls; what differs is only what the program may assume (docs/ordering.md): the source of an
// nbi put and the destination of an nbi get are reusable or valid only after quiet, and
// fence does not order nbi gets. Code written to those rules stays correct on transports
// where nbi operations are truly in flight, as a put through the channel is: it returns once
// posted.
__device__ inline void rshmem_putmem_nbi(void *dst, const void *src, size_t nbytes, int pe) {
    rshmem_detail_put_group(dst, src, nbytes, pe, 0, 1, true);
}
__device__ inline void rshmem_getmem_nbi(void *dst, const void *src, size_t nbytes, int pe) {
    rshmem_getmem(dst, src, nbytes, pe);
}
__device__ inline void rshmem_putmem_nbi_warp(void *dst, const void *src, size_t nbytes,
                                              int pe) {
    rshmem_detail_putmem_warp(dst, src, nbytes, pe, true);
}
__device__ inline void rshmem_getmem_nbi_warp(void *dst, const void *src, size_t nbytes,
                                              int pe) {
    rshmem_getmem_warp(dst, src, nbytes, pe);
}
__device__ inline void rshmem_putmem_nbi_block(void *dst, const void *src, size_t nbytes,
                                               int pe) {
    rshmem_detail_putmem_block(dst, src, nbytes, pe, true);
}
__device__ inline void rshmem_getmem_nbi_block(void *dst, const void *src, size_t nbytes,
                                               int pe) {
    rshmem_getmem_block(dst, src, nbytes, pe);
}

// Typed copies of `nelems` elements.
template <typename T>
__device__ inline void rshmem_put(T *dst, const T *src, size_t nelems, int pe) {
    rshmem_putmem(dst, src, nelems * sizeof(T), pe);
}
template <typename T>
__device__ inline void rshmem_get(T *dst, const T *src, size_t nelems, int pe) {
    rshmem_getmem(dst, src, nelems * sizeof(T), pe);
}

// One element (any type of 1, 2, 4 or 8 bytes, naturally aligned). Volatile so that the
// store is issued now and the load reads memory, not a register or a stale cache line.
// Through the channel, the value travels in the request and the store is posted.
template <typename T>
__device__ inline void rshmem_p(T *dst, RSHMEM_SAME(T) value, int pe) {
    if (rshmem_detail_proxied(pe)) {
        rshmem_detail_proxy_put(rshmem_detail_heap_offset(dst), RSHMEM_REGION_HEAP, &value, sizeof(T), pe, false);
        return;
    }
    *(volatile T *)rshmem_detail_remote(dst, pe) = value;
}
template <typename T>
__device__ inline T rshmem_g(const T *src, int pe) {
    if (rshmem_detail_proxied(pe)) {
        T value;
        rshmem_detail_proxy_get(&value, rshmem_detail_heap_offset(src), RSHMEM_REGION_HEAP, sizeof(T), pe);
        return value;
    }
    return *(const volatile T *)rshmem_detail_remote(src, pe);
}

// ---- Atomics -------------------------------------------------------------------------------
// System-scope atomics on `pe`'s copy of `dest`, for the types CUDA's *_system intrinsics
// take (unsigned long long, unsigned int and int; add also float and double). Atomicity holds
// among atomics on the same word with the same type (docs/ordering.md). Fetch and set are
// naturally aligned volatile accesses, single-copy atomic with the read-modify-writes.

// An atomic on `pe`'s word through the channel, performed by the target's proxy with the
// GPU's system-scope atomics (or the CPU's, on host memory): indivisible against the
// target's kernels. Returns the old value when `fetches`, else posts and returns at once.
// Floating-point adds have no such operation there: refused.
template <typename T>
__device__ inline T rshmem_detail_proxy_amo(const T *dest, unsigned op, T value, T compare, int pe,
                                            bool fetches) {
    if (sizeof(T) != 4 && sizeof(T) != 8) {
        printf("rshmem: PE %d: an atomic on a word of %d bytes; atomics take 4 or 8\n", rshmem_state.my_pe,
               (int)sizeof(T));
        __trap();
    }
    if ((T)0.5 != (T)0 && op != RSHMEM_AMO_FETCH && op != RSHMEM_AMO_SET && op != RSHMEM_AMO_SWAP) {
        printf("rshmem: PE %d: a floating-point atomic add on PE %d, on another node, which its "
               "proxy does not perform; use an integer word or a PE of this node\n",
               rshmem_state.my_pe, pe);
        __trap();
    }
    rshmem_u64 operand = 0, expected = 0;
    rshmem_detail_copy_bytes(&operand, &value, sizeof(T));
    rshmem_detail_copy_bytes(&expected, &compare, sizeof(T));
    rshmem_u64 ticket = rshmem_detail_post(RSHMEM_VERB_AMO, pe, RSHMEM_REGION_HEAP, rshmem_detail_heap_offset(dest),
                                           0, sizeof(T), operand, expected, op, fetches);
    T old = T();
    if (fetches) {
        rshmem_u64 bits = rshmem_detail_await(ticket);
        rshmem_detail_copy_bytes(&old, &bits, sizeof(T));
    }
    return old;
}

template <typename T>
__device__ inline T rshmem_atomic_fetch(const T *dest, int pe) {
    if (rshmem_detail_proxied(pe)) return rshmem_detail_proxy_amo(dest, RSHMEM_AMO_FETCH, T(), T(), pe, true);
    return rshmem_g(dest, pe);
}
template <typename T>
__device__ inline void rshmem_atomic_set(T *dest, RSHMEM_SAME(T) value, int pe) {
    if (rshmem_detail_proxied(pe)) {
        rshmem_detail_proxy_amo(dest, RSHMEM_AMO_SET, value, T(), pe, false);
        return;
    }
    rshmem_p(dest, value, pe);
}
template <typename T>
__device__ inline T rshmem_atomic_swap(T *dest, RSHMEM_SAME(T) value, int pe) {
    if (rshmem_detail_proxied(pe)) return rshmem_detail_proxy_amo(dest, RSHMEM_AMO_SWAP, value, T(), pe, true);
    return atomicExch_system((T *)rshmem_detail_remote(dest, pe), value);
}
template <typename T>
__device__ inline T rshmem_atomic_compare_swap(T *dest, RSHMEM_SAME(T) cond,
                                             RSHMEM_SAME(T) value, int pe) {
    if (rshmem_detail_proxied(pe)) return rshmem_detail_proxy_amo(dest, RSHMEM_AMO_COMPARE_SWAP, value, cond, pe, true);
    return atomicCAS_system((T *)rshmem_detail_remote(dest, pe), cond, value);
}
template <typename T>
__device__ inline T rshmem_atomic_fetch_add(T *dest, RSHMEM_SAME(T) value, int pe) {
    if (rshmem_detail_proxied(pe)) return rshmem_detail_proxy_amo(dest, RSHMEM_AMO_ADD, value, T(), pe, true);
    return atomicAdd_system((T *)rshmem_detail_remote(dest, pe), value);
}
template <typename T>
__device__ inline void rshmem_atomic_add(T *dest, RSHMEM_SAME(T) value, int pe) {
    if (rshmem_detail_proxied(pe)) {
        rshmem_detail_proxy_amo(dest, RSHMEM_AMO_ADD, value, T(), pe, false);
        return;
    }
    rshmem_atomic_fetch_add(dest, value, pe);
}
template <typename T>
__device__ inline T rshmem_atomic_fetch_and(T *dest, RSHMEM_SAME(T) value, int pe) {
    if (rshmem_detail_proxied(pe)) return rshmem_detail_proxy_amo(dest, RSHMEM_AMO_AND, value, T(), pe, true);
    return atomicAnd_system((T *)rshmem_detail_remote(dest, pe), value);
}
template <typename T>
__device__ inline T rshmem_atomic_fetch_or(T *dest, RSHMEM_SAME(T) value, int pe) {
    if (rshmem_detail_proxied(pe)) return rshmem_detail_proxy_amo(dest, RSHMEM_AMO_OR, value, T(), pe, true);
    return atomicOr_system((T *)rshmem_detail_remote(dest, pe), value);
}
template <typename T>
__device__ inline T rshmem_atomic_fetch_xor(T *dest, RSHMEM_SAME(T) value, int pe) {
    if (rshmem_detail_proxied(pe)) return rshmem_detail_proxy_amo(dest, RSHMEM_AMO_XOR, value, T(), pe, true);
    return atomicXor_system((T *)rshmem_detail_remote(dest, pe), value);
}

// ---- Waiting -------------------------------------------------------------------------------

template <typename T>
__device__ inline bool rshmem_detail_holds(T lhs, int cmp, T rhs) {
    switch (cmp) {
    case RSHMEM_CMP_EQ: return lhs == rhs;
    case RSHMEM_CMP_NE: return lhs != rhs;
    case RSHMEM_CMP_GT: return lhs > rhs;
    case RSHMEM_CMP_GE: return lhs >= rhs;
    case RSHMEM_CMP_LT: return lhs < rhs;
    default: return lhs <= rhs;
    }
}

__device__ inline rshmem_u64 rshmem_detail_now_ns() {
    rshmem_u64 now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    return now;
}

// An acquire load at system scope (PTX ld.acquire.sys) of a naturally aligned word of 4 or 8
// bytes: this thread's later loads and stores are ordered after it, for observers on every
// GPU and the host, so a load that reads a writer's release (or fence-then-store) sees
// everything the writer ordered before it. It costs what a volatile load does; a volatile
// load followed by an acquire fence (fence.acq_rel.sys) cost 0.6 µs more per wait over NVLink
// (p ping-pong 1.37 against 0.77 µs half round trip on two H200s, 2026-11-23).
__device__ inline unsigned int rshmem_detail_load_acquire_bits(const unsigned int *word) {
    unsigned int bits;
    asm volatile("ld.acquire.sys.global.b32 %0, [%1];" : "=r"(bits) : "l"(word) : "memory");
    return bits;
}
__device__ inline rshmem_u64 rshmem_detail_load_acquire_bits(const rshmem_u64 *word) {
    rshmem_u64 bits;
    asm volatile("ld.acquire.sys.global.b64 %0, [%1];" : "=l"(bits) : "l"(word) : "memory");
    return bits;
}
template <int BYTES> struct rshmem_detail_word;
template <> struct rshmem_detail_word<4> { typedef unsigned int type; };
template <> struct rshmem_detail_word<8> { typedef rshmem_u64 type; };
template <typename T>
__device__ inline T rshmem_detail_load_acquire(const T *word) {
    typedef typename rshmem_detail_word<sizeof(T)>::type Bits;
    union {
        Bits bits;
        T value;
    } word_as;
    word_as.bits = rshmem_detail_load_acquire_bits((const Bits *)word);
    return word_as.value;
}

// An acquire-release fence at system scope (PTX fence.acq_rel.sys): a fence then a relaxed
// (volatile) store is a release; a relaxed load then the fence is an acquire. Cheaper than
// __threadfence_system (fence.sc.sys), which also orders earlier stores before later loads.
__device__ inline void rshmem_detail_fence_acq_rel() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

// A release store at system scope (PTX st.release.sys) of a 64-bit word: every load and
// store this thread ordered before it (a block's, after a __syncthreads: release is
// cumulative) is visible to whoever reads the value with an acquire.
__device__ inline void rshmem_detail_store_release(rshmem_u64 *word, rshmem_u64 value) {
    asm volatile("st.release.sys.global.b64 [%0], %1;" ::"l"(word), "l"(value) : "memory");
}

// One load of a wait: acquire for words of 4 or 8 bytes (ACQUIRES); volatile for smaller
// ones, which rshmem_detail_wait follows with an acquire fence (fence.acq_rel.sys) once the
// wait is satisfied.
template <typename T, bool WIDE = (sizeof(T) >= 4)> struct rshmem_detail_poller {
    static const bool ACQUIRES = false;
    __device__ static T load(const T *word) { return *(const volatile T *)word; }
};
template <typename T> struct rshmem_detail_poller<T, true> {
    static const bool ACQUIRES = true;
    __device__ static T load(const T *word) { return rshmem_detail_load_acquire(word); }
};

// The function that called a wait, for its report, where the compiler can say it: a
// defaulted argument `RSHMEM_CALLER_PARAM` of a public wait takes `__builtin_FUNCTION()` at
// the call site. Without the builtin the report says the function is not known.
#if defined(__has_builtin)
#if __has_builtin(__builtin_FUNCTION)
#define RSHMEM_CALLER_DEFAULT = __builtin_FUNCTION()
#endif
#endif
#ifndef RSHMEM_CALLER_DEFAULT
#define RSHMEM_CALLER_DEFAULT = nullptr
#endif
#define RSHMEM_CALLER_PARAM const char *rshmem_caller RSHMEM_CALLER_DEFAULT

// NVSHMEM's name of comparison `cmp`, for reports.
__device__ inline const char *rshmem_detail_cmp_name(int cmp) {
    switch (cmp) {
    case RSHMEM_CMP_EQ: return "NVSHMEM_CMP_EQ";
    case RSHMEM_CMP_NE: return "NVSHMEM_CMP_NE";
    case RSHMEM_CMP_GT: return "NVSHMEM_CMP_GT";
    case RSHMEM_CMP_GE: return "NVSHMEM_CMP_GE";
    case RSHMEM_CMP_LT: return "NVSHMEM_CMP_LT";
    default: return "NVSHMEM_CMP_LE";
    }
}

// Copies the string `from` (NULL: "") into `to` of `bytes`, cut and terminated.
__device__ inline void rshmem_detail_copy_name(volatile char *to, const char *from, int bytes) {
    int i = 0;
    for (; from != nullptr && from[i] != '\0' && i < bytes - 1; ++i) to[i] = from[i];
    to[i] = '\0';
}

// The bits of `value` (1 to 8 bytes) in the low bytes of a 64-bit word, for reports.
template <typename T> __device__ inline rshmem_u64 rshmem_detail_bits(T value) {
    union {
        T value;
        rshmem_u64 bits;
    } as;
    as.bits = 0;
    as.value = value;
    return as.bits;
}

// Ends a wait on `word` that passed its timeout: prints it in the format of the simulator's
// reports (hw::KernelWait), hands the record to the PE's watchdog, which prints it again with
// the word named in the program's terms and ends the job, and traps. Out of line: the waits
// inline into every kernel, and this path runs once.
static __device__ __noinline__ void rshmem_detail_wait_timed_out(const void *word, int cmp,
                                                                 rshmem_u64 value,
                                                                 rshmem_u64 seen,
                                                                 rshmem_u64 waited_ns,
                                                                 const char *what,
                                                                 const char *caller) {
    const char *function = caller != nullptr ? caller : "(function not known on the GPU)";
    printf("rshmem: PE %d: kernel %s: block (%u,%u,%u) thread (%u,%u,%u): %s waits for the word "
           "at %p to be %s %llu; it holds %llu (RSHMEM_WAIT_TIMEOUT_MS passed: %llu ms)\n",
           rshmem_state.my_pe, function, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
           threadIdx.y, threadIdx.z, what, word, rshmem_detail_cmp_name(cmp), value, seen,
           waited_ns / 1000000);
    rshmem_hang_t *record = (rshmem_hang_t *)rshmem_state.hang_record;
    if (record != nullptr && atomicCAS_system(&record->claimed, 0u, 1u) == 0u) {
        volatile rshmem_hang_t *r = record;
        r->pe = rshmem_state.my_pe;
        r->cmp = cmp;
        r->block[0] = blockIdx.x;
        r->block[1] = blockIdx.y;
        r->block[2] = blockIdx.z;
        r->thread[0] = threadIdx.x;
        r->thread[1] = threadIdx.y;
        r->thread[2] = threadIdx.z;
        r->word = (rshmem_u64)word;
        r->value = value;
        r->seen = seen;
        r->waited_ns = waited_ns;
        rshmem_detail_copy_name(r->call, what, RSHMEM_HANG_CALL_BYTES);
        rshmem_detail_copy_name(r->function, caller, RSHMEM_HANG_FUNCTION_BYTES);
        // The record before `ready`, as the watchdog on the host observes them.
        __threadfence_system();
        r->ready = 1u;
        __threadfence_system();
    }
    __trap();
}

// Polls `word` of this PE's memory with acquire loads until `word <cmp> value` and returns
// what it saw; a wait not satisfied within its timeout (RSHMEM_WAIT_TIMEOUT_NS if defined,
// else the bound state's) reports and traps (rshmem_detail_wait_timed_out). Words of 1 or 2
// bytes are polled with volatile loads and take an acquire fence after the one that
// satisfied the wait.
template <typename T>
__device__ inline T rshmem_detail_poll(const T *word, int cmp, RSHMEM_SAME(T) value,
                                       const char *what, const char *caller) {
    rshmem_u64 timeout_ns =
        RSHMEM_WAIT_TIMEOUT_NS ? (rshmem_u64)RSHMEM_WAIT_TIMEOUT_NS : rshmem_state.wait_timeout_ns;
    rshmem_u64 start = timeout_ns ? rshmem_detail_now_ns() : 0;
    T seen;
    while (!rshmem_detail_holds(seen = rshmem_detail_poller<T>::load(word), cmp, value)) {
        if (timeout_ns) {
            rshmem_u64 waited_ns = rshmem_detail_now_ns() - start;
            if (waited_ns > timeout_ns) {
                rshmem_detail_wait_timed_out(word, cmp, rshmem_detail_bits<T>(value),
                                             rshmem_detail_bits<T>(seen), waited_ns, what,
                                             caller);
            }
        }
    }
    return seen;
}

// Polls until `word <cmp> value`: the acquire load that saw the writer's value is the
// acquire half of the writer's release (or fence-then-write), so this thread's later loads
// see what the writer ordered before it (docs/ordering.md: wait_until returns after the update
// is complete, with visibility).
template <typename T>
__device__ inline T rshmem_detail_wait(const T *word, int cmp, RSHMEM_SAME(T) value,
                                       const char *what, const char *caller = nullptr) {
    T seen = rshmem_detail_poll(word, cmp, value, what, caller);
    if (!rshmem_detail_poller<T>::ACQUIRES) {
        rshmem_detail_fence_acq_rel();
    }
    return seen;
}

// Waits until this PE's `ivar <cmp> value` and returns the value that satisfied it. `ivar`
// is a symmetric object a peer updates with p, put or an atomic.
template <typename T>
__device__ inline T rshmem_wait_until(T *ivar, int cmp, RSHMEM_SAME(T) value,
                                      RSHMEM_CALLER_PARAM) {
    return rshmem_detail_wait((const T *)ivar, cmp, value, "nvshmem_wait_until", rshmem_caller);
}

// ---- Signals -------------------------------------------------------------------------------

// Copies `nbytes` to `pe` as putmem does, then updates `pe`'s 64-bit `sig_addr` with `signal`
// (RSHMEM_SIGNAL_SET or RSHMEM_SIGNAL_ADD) atomically, with release semantics: a release
// store (SET) or a release reduction (ADD, PTX red.release.sys.add), neither of which waits
// for a reply. The release is what makes the ordering rules' guarantee hold: whoever sees the signal
// (with the acquire of signal_wait_until) sees this call's data.
//
// Through the channel: the put, then the signal as an atomic set or add, which its ticket
// delivers after the put; the blocking form waits for the put.
__device__ inline void rshmem_detail_put_signal(void *dest, const void *src, size_t nbytes,
                                                rshmem_u64 *sig_addr, rshmem_u64 signal, int sig_op,
                                                int pe, bool nbi) {
    if (rshmem_detail_proxied(pe)) {
        bool awaited = !nbi && nbytes > 0;
        rshmem_u64 ticket = 0;
        if (nbytes > 0) {
            ticket = rshmem_detail_proxy_put(rshmem_detail_heap_offset(dest), RSHMEM_REGION_HEAP, src, nbytes,
                                             pe, awaited);
        }
        unsigned op = sig_op == RSHMEM_SIGNAL_ADD ? RSHMEM_AMO_ADD : RSHMEM_AMO_SET;
        rshmem_detail_post(RSHMEM_VERB_AMO, pe, RSHMEM_REGION_HEAP, rshmem_detail_heap_offset(sig_addr), 0, 8,
                           signal, 0, op, false);
        if (awaited) rshmem_detail_await(ticket);
        return;
    }
    if (nbytes == 8 && ((rshmem_u64)dest | (rshmem_u64)src) % 8 == 0) {
        // One word, the common message of a ping-pong: one load and one store, without the
        // copy loop's set-up (0.1 µs of a 1.9 µs half round trip on two H200s).
        *(volatile rshmem_u64 *)rshmem_detail_remote(dest, pe) = *(const rshmem_u64 *)src;
    } else {
        rshmem_putmem(dest, src, nbytes, pe);
    }
    rshmem_u64 *word = (rshmem_u64 *)rshmem_detail_remote(sig_addr, pe);
    if (sig_op == RSHMEM_SIGNAL_ADD) {
        asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(word), "l"(signal)
                     : "memory");
    } else {
        rshmem_detail_store_release(word, signal);
    }
}
__device__ inline void rshmem_put_signal(void *dest, const void *src, size_t nbytes,
                                         rshmem_u64 *sig_addr, rshmem_u64 signal, int sig_op,
                                         int pe) {
    rshmem_detail_put_signal(dest, src, nbytes, sig_addr, signal, sig_op, pe, false);
}

// The same; the source may be reused only after quiet (see the nbi copies).
__device__ inline void rshmem_put_signal_nbi(void *dest, const void *src, size_t nbytes,
                                             rshmem_u64 *sig_addr, rshmem_u64 signal,
                                             int sig_op, int pe) {
    rshmem_detail_put_signal(dest, src, nbytes, sig_addr, signal, sig_op, pe, true);
}

// This PE's signal word, read atomically.
__device__ inline rshmem_u64 rshmem_signal_fetch(const rshmem_u64 *sig_addr) {
    return *(const volatile rshmem_u64 *)sig_addr;
}

// Waits until this PE's `sig_addr <cmp> value`, as wait_until, and returns the signal.
__device__ inline rshmem_u64 rshmem_signal_wait_until(rshmem_u64 *sig_addr, int cmp,
                                                      rshmem_u64 value, RSHMEM_CALLER_PARAM) {
    return rshmem_detail_wait((const rshmem_u64 *)sig_addr, cmp, value,
                              "nvshmem_signal_wait_until", rshmem_caller);
}

// ---- Barrier -------------------------------------------------------------------------------

// The barrier's arrival and wait, made by one thread for its PE (the block's thread 0 in
// rshmem_barrier_all; the calling thread in NVSHMEM's thread-scope nvshmem_barrier_all).
// `caller` and `what` name the program's function and the call in a hang report.
__device__ inline void rshmem_detail_barrier_thread(const char *caller = nullptr,
                                                    const char *what = "nvshmem_barrier_all") {
    rshmem_quiet();
    int me = rshmem_state.my_pe;
    volatile rshmem_u64 *epoch = &rshmem_detail_sync(me)->barrier_epoch;
    rshmem_u64 now = *epoch + 1;
    *epoch = now;
    for (int pe = 0; pe < rshmem_state.n_pes; ++pe) {
        rshmem_detail_sync_set(pe, &rshmem_detail_sync(me)->arrived[me], now);
    }
    for (int pe = 0; pe < rshmem_state.n_pes; ++pe) {
        rshmem_detail_poll((const rshmem_u64 *)&rshmem_detail_sync(me)->arrived[pe],
                           RSHMEM_CMP_GE, now, what, caller);
    }
}

// The barrier of a team of some of the PEs, made by one thread for its PE: the team holds
// `size` PEs, member i being world PE start + i * stride, this PE member `index`, and its
// words are those of `slot` in every member's rshmem_sync_t. A dissemination barrier
// (Hensgen, Finkel and Manber; runtime/src/team/barrier.rs is the host's): in round k each
// member adds 1 to counter k of the member 2^k ahead and waits until its own counter k reaches
// its epoch, so after ceil(log2 size) rounds each has heard from all. The fence first is the
// quiet; each add is a release (PTX red.release.sys), cumulative over what the rounds before
// it heard through their acquire loads, so the barrier orders every member's writes before it.
//
// Counters only grow: a member already in the next barrier pushes a counter past the epoch a
// slow one waits for, which still satisfies it. Nothing is reset when a later team takes the
// slot, because after a team's last barrier each member's counters equal its epoch word: in
// every barrier its predecessor of each round it uses adds 1 and its epoch grows by 1, and the
// rounds it does not use it sets to the epoch itself (no member of its team adds to them, and
// a team sharing the slot holds none of its PEs). A new team then counts on from there, each
// member against its own epoch. This needs every member to make the same number of barriers
// on the team, which a collective requires anyway.
__device__ inline void rshmem_detail_team_barrier_thread(int slot, int start, int stride, int size,
                                                         int index, const char *what,
                                                         const char *caller) {
    rshmem_quiet();
    rshmem_u64 *mine = rshmem_detail_sync(rshmem_state.my_pe)->team_barrier[slot];
    rshmem_u64 epoch = *(volatile rshmem_u64 *)&mine[0] + 1;
    *(volatile rshmem_u64 *)&mine[0] = epoch;
    int round = 0;
    for (int reach = 1; reach < size; reach *= 2, ++round) {
        int ahead = start + (index + reach) % size * stride;
        rshmem_detail_sync_add_release(ahead, &mine[1 + round], 1ull);
        rshmem_detail_poll((const rshmem_u64 *)&mine[1 + round], RSHMEM_CMP_GE, epoch, what,
                           caller);
    }
    for (; round < RSHMEM_TEAM_ROUNDS; ++round) {
        *(volatile rshmem_u64 *)&mine[1 + round] = epoch;
    }
}

// Quiet, then waits until every PE has arrived (docs/ordering.md: barrier_all is quiet on the
// default context plus all PEs arriving; on NVLink it makes every update visible).
//
// Called by every thread of exactly one block per PE, the same number of times on every PE
// (it contains __syncthreads; a second block calling it at once would count as a second
// arrival of its PE). It persists across launches: barrier k of one kernel meets barrier k of
// the peers, whatever kernels they are in.
//
// The block synchronises; thread 0 fences (the fence is cumulative: it covers what the block's
// threads did before the __syncthreads, as in a grid-wide sync) with a full system fence, the
// quiet part; writes the new epoch into its slot on every PE; and polls its own slots with
// acquire loads until each PE's epoch reached it. Epochs only grow, so no reset is needed and
// a fast PE already in the next barrier still satisfies the wait.
__device__ inline void rshmem_barrier_all(RSHMEM_CALLER_PARAM) {
    __syncthreads();
    if (rshmem_detail_block_rank() == 0) {
        rshmem_detail_barrier_thread(rshmem_caller);
    }
    __syncthreads();
}

// ---- Collectives over every PE -------------------------------------------------------------
//
// For peers the GPU reaches by loads and stores (NVLink). Like barrier_all they are called by
// every thread of exactly one block per PE, the same number of times on every PE. `dest` and
// `source` are symmetric and must not overlap; `nelems` is the same on every PE.
//
// Broadcast, and fcollect and alltoall above the scratch, are one-shot pulls: a barrier_all
// (the sources are ready everywhere), then each thread of the block pulls its strided elements
// straight from the peers' memory, then a barrier_all (no PE changes a source that another
// still reads).
//
// The sum reduction, fcollect and alltoall push instead when the data fits the collectives'
// scratch (every PE's chunk in half of RSHMEM_SCRATCH_BYTES; for fcollect and alltoall, in
// RSHMEM_PUSH_COPY_BYTES): each PE puts its chunk for each
// peer into its slot of that peer's scratch, releases a per-PE epoch word there, waits for
// every peer's epoch in its own memory, and adds or copies locally. One flight instead of two
// barriers and a pull: the reduction of 8 KiB took 2.4 µs against 6.4 µs on two H200s
// (2026-11-23). Broadcast keeps the pull: its root receives nothing, so it could run ahead of
// the epochs and overwrite a half a peer still reads. The scratch alternates between two
// halves by epoch parity, which needs no barrier at the end: a PE writes a half again only
// after every peer has pushed the next epoch, which each does after it finished reading that
// half (its __syncthreads orders the reads before its release).

// The collectives' scratch of `pe`: the bytes of its synchronisation memory after
// rshmem_sync_t.
__device__ inline char *rshmem_detail_scratch(int pe) {
    return (char *)rshmem_state.sync_base[pe] + RSHMEM_SYNC_HEADER_BYTES;
}

// 16 bytes of T, the unit in which the reductions add when the data allows.
template <typename T> struct __align__(16) rshmem_detail_vec16 {
    T v[16 / sizeof(T)];
};

// dest[i] = the sum over every PE of its source[i], by pulling (the data does not fit the
// scratch). Every PE adds in PE order, so each gets the same sums. Where every address and
// the length allow it, a thread reads 16 bytes of up to 8 PEs before it adds them, so that
// those loads are in flight together: one 4-byte load a PE at a time summed 64 MiB of floats
// over 8 PEs of one H200 at 1.3 GB/s (2026-11-28).
template <typename T>
__device__ inline void rshmem_detail_sum_reduce_pulled(T *dest, const T *source,
                                                       size_t nelems) {
    rshmem_barrier_all();
    int n = rshmem_state.n_pes;
    unsigned rank = rshmem_detail_block_rank(), n_threads = rshmem_detail_block_size();
    // Peers' sources by offset from their heap bases, which are aligned as this PE's is.
    rshmem_u64 offset = (rshmem_u64)source - rshmem_state.heap_base[rshmem_state.my_pe];
    size_t bytes = nelems * sizeof(T);
    rshmem_u64 alignment = (rshmem_u64)dest | (rshmem_u64)source | bytes;
    if (16 % sizeof(T) == 0 && alignment % 16 == 0) {
        typedef rshmem_detail_vec16<T> Vec;
        const int PER = 16 / sizeof(T), BATCH = 8;
        for (size_t i = rank; i < bytes / 16; i += n_threads) {
            Vec sum;
#pragma unroll
            for (int k = 0; k < PER; ++k) sum.v[k] = 0;
            for (int first = 0; first < n; first += BATCH) {
                Vec x[BATCH];
#pragma unroll
                for (int b = 0; b < BATCH; ++b) {
                    if (first + b < n) {
                        x[b] = ((const Vec *)(rshmem_state.heap_base[first + b] + offset))[i];
                    }
                }
#pragma unroll
                for (int b = 0; b < BATCH; ++b) {
                    if (first + b < n) {
#pragma unroll
                        for (int k = 0; k < PER; ++k) sum.v[k] += x[b].v[k];
                    }
                }
            }
            ((Vec *)dest)[i] = sum;
        }
    } else {
        for (size_t i = rank; i < nelems; i += n_threads) {
            T sum = 0;
            for (int pe = 0; pe < n; ++pe) {
                sum += ((const T *)(rshmem_state.heap_base[pe] + offset))[i];
            }
            dest[i] = sum;
        }
    }
    rshmem_barrier_all();
}

// The part of thread `rank` of `n_threads` in dest[i] = the sum over PEs of their vectors:
// this PE's `source`, every other PE's slot of `landed`. Every PE adds in PE order, so each
// gets the same sums. Where every address and the length allow it, a thread adds 16 bytes at
// a time (all its loads in flight at once; element by element, the reduction of 8 KiB took
// 0.9 µs longer on an H200).
template <typename T>
__device__ inline void rshmem_detail_sum_landed(T *dest, const T *source, const char *landed,
                                                size_t nelems, unsigned rank,
                                                unsigned n_threads) {
    int n = rshmem_state.n_pes, me = rshmem_state.my_pe;
    size_t bytes = nelems * sizeof(T);
    rshmem_u64 alignment = (rshmem_u64)dest | (rshmem_u64)source | (rshmem_u64)landed | bytes;
    if (16 % sizeof(T) == 0 && alignment % 16 == 0) {
        typedef rshmem_detail_vec16<T> Vec;
        const int PER = 16 / sizeof(T);
        for (size_t i = rank; i < bytes / 16; i += n_threads) {
            Vec sum = me == 0 ? ((const Vec *)source)[i] : ((const Vec *)landed)[i];
            for (int pe = 1; pe < n; ++pe) {
                Vec x = pe == me ? ((const Vec *)source)[i]
                                 : ((const Vec *)(landed + (size_t)pe * bytes))[i];
#pragma unroll
                for (int k = 0; k < PER; ++k) sum.v[k] += x.v[k];
            }
            ((Vec *)dest)[i] = sum;
        }
        return;
    }
    for (size_t i = rank; i < nelems; i += n_threads) {
        T sum = me == 0 ? source[i] : ((const T *)landed)[i];
        for (int pe = 1; pe < n; ++pe) {
            sum += pe == me ? source[i] : ((const T *)(landed + (size_t)pe * bytes))[i];
        }
        dest[i] = sum;
    }
}

// The pushed exchange of the sum reduction, fcollect and alltoall: every PE puts, for each
// peer `pe`, the `bytes` at `chunk_for(pe)` into its slot of the half (by epoch parity) of
// pe's scratch, releases the epoch to every peer and waits for every peer's. Returns this PE's
// half, whose slot `pe` holds what PE `pe` pushed here. The caller reads it and ends with a
// __syncthreads (the next exchange's release must follow those reads).
template <typename ChunkFor>
__device__ inline const char *rshmem_detail_push_exchange(ChunkFor chunk_for, size_t bytes,
                                                          const char *what) {
    int n = rshmem_state.n_pes, me = rshmem_state.my_pe;
    unsigned rank = rshmem_detail_block_rank(), size = rshmem_detail_block_size();
    rshmem_sync_t *mine = rshmem_detail_sync(me);
    // Every thread reads the epoch before the __syncthreads after which thread 0 bumps it.
    rshmem_u64 epoch = *(volatile rshmem_u64 *)&mine->reduce_epoch + 1;
    size_t half = (size_t)(epoch & 1) * (RSHMEM_SCRATCH_BYTES / 2);
    __syncthreads();
    size_t slot = RSHMEM_SYNC_HEADER_BYTES + half + (size_t)me * bytes;
    for (int pe = 0; pe < n; ++pe) {
        if (pe == me) continue;
        if (!rshmem_detail_proxied(pe)) {
            rshmem_detail_copy((char *)rshmem_state.sync_base[pe] + slot, chunk_for(pe), bytes, rank, size);
        } else if (rank == 0) {
            rshmem_detail_proxy_put(slot, RSHMEM_REGION_SYNC, chunk_for(pe), bytes, pe, false);
        }
    }
    __syncthreads();
    if (rank == 0) {
        *(volatile rshmem_u64 *)&mine->reduce_epoch = epoch;
        // One fence then relaxed stores: a release to every peer (cheaper than a release
        // store each), cumulative over the block's pushes through the __syncthreads. Through
        // the channel the epoch follows the push by its ticket.
        rshmem_detail_fence_acq_rel();
        for (int pe = 0; pe < n; ++pe) {
            if (pe != me) {
                rshmem_detail_sync_set(pe, &mine->pushed[me], epoch);
            }
        }
        for (int pe = 0; pe < n; ++pe) {
            if (pe != me) {
                rshmem_detail_poll((const rshmem_u64 *)&mine->pushed[pe], RSHMEM_CMP_GE, epoch,
                                   what);
            }
        }
        // The proxy reads the pushed sources when it performs them: done before they may change.
        rshmem_detail_proxy_quiet();
    }
    __syncthreads();
    return rshmem_detail_scratch(me) + half;
}

// Whether `n_pes` chunks of `bytes` fit half the scratch, so that the reduction pushes.
__device__ inline bool rshmem_detail_pushes(size_t bytes) {
    return (size_t)rshmem_state.n_pes * bytes <= RSHMEM_SCRATCH_BYTES / 2;
}

// The most bytes (all PEs' chunks together) that fcollect and alltoall push: beyond it the
// block's copy of the landed chunks into dest costs more than the two barriers of a pull. On
// two H200s (2026-11-28) pushing was faster at 64 KiB and 256 KiB in all, slower at 512 KiB
// (2 PEs of 256 KiB: 0.83 to 0.93 of NVSHMEM's speed, against 1.04 to 1.31 pulled) and level
// at 1 MiB.
#define RSHMEM_PUSH_COPY_BYTES (256u << 10)

// Whether fcollect and alltoall of `bytes` a chunk push.
__device__ inline bool rshmem_detail_pushes_copy(size_t bytes) {
    return (size_t)rshmem_state.n_pes * bytes <= RSHMEM_PUSH_COPY_BYTES;
}

// dest[i] = the sum over every PE of its source[i].
template <typename T>
__device__ inline void rshmem_detail_sum_reduce_pushed(T *dest, const T *source, size_t nelems) {
    const char *landed = rshmem_detail_push_exchange(
        [&](int) { return (const void *)source; }, nelems * sizeof(T), "sum_reduce_block");
    rshmem_detail_sum_landed(dest, source, landed, nelems, rshmem_detail_block_rank(),
                             rshmem_detail_block_size());
    __syncthreads();
}
// Pushed when it fits the scratch; else pulled, or, where some PEs are on other nodes (their
// memory takes no loads), pushed in chunks that fit (of a multiple of 16 bytes).
template <typename T>
__device__ inline void rshmem_sum_reduce_block(T *dest, const T *source, size_t nelems) {
    if (rshmem_detail_pushes(nelems * sizeof(T))) {
        rshmem_detail_sum_reduce_pushed(dest, source, nelems);
    } else if (rshmem_state.channel == 0) {
        rshmem_detail_sum_reduce_pulled(dest, source, nelems);
    } else {
        size_t chunk = RSHMEM_SCRATCH_BYTES / 2 / (size_t)rshmem_state.n_pes / 16 * 16 / sizeof(T);
        for (size_t start = 0; start < nelems; start += chunk) {
            size_t count = nelems - start < chunk ? nelems - start : chunk;
            rshmem_detail_sum_reduce_pushed(dest + start, source + start, count);
        }
    }
}

// dest[pe * nelems + i] = chunk `pe` of `landed` (what PE `pe` pushed), this PE's own from
// `own`: the end of a pushed fcollect or alltoall.
__device__ inline void rshmem_detail_copy_landed(char *dest, const char *landed,
                                                 const char *own, size_t bytes) {
    unsigned rank = rshmem_detail_block_rank(), size = rshmem_detail_block_size();
    for (int pe = 0; pe < rshmem_state.n_pes; ++pe) {
        const char *from = pe == rshmem_state.my_pe ? own : landed + (size_t)pe * bytes;
        rshmem_detail_copy(dest + (size_t)pe * bytes, from, bytes, rank, size);
    }
    __syncthreads();
}

// dest on every PE = source of PE `root` (`nelems` elements).
template <typename T>
__device__ inline void rshmem_broadcast_block(T *dest, const T *source, size_t nelems,
                                              int root) {
    rshmem_barrier_all();
    rshmem_detail_get_group(dest, source, nelems * sizeof(T), root, rshmem_detail_block_rank(),
                            rshmem_detail_block_size());
    rshmem_barrier_all();
}

// dest[pe * nelems + i] = PE pe's source[i]: every PE's block, in PE order.
template <typename T>
__device__ inline void rshmem_fcollect_block(T *dest, const T *source, size_t nelems) {
    size_t bytes = nelems * sizeof(T);
    if (rshmem_detail_pushes_copy(bytes)) {
        const char *landed = rshmem_detail_push_exchange(
            [&](int) { return (const void *)source; }, bytes, "fcollect_block");
        rshmem_detail_copy_landed((char *)dest, landed, (const char *)source, bytes);
        return;
    }
    rshmem_barrier_all();
    for (int pe = 0; pe < rshmem_state.n_pes; ++pe) {
        rshmem_detail_get_group(dest + (size_t)pe * nelems, source, nelems * sizeof(T), pe,
                                rshmem_detail_block_rank(), rshmem_detail_block_size());
    }
    rshmem_barrier_all();
}

// dest[pe * nelems + i] = PE pe's source[my_pe * nelems + i]: block `j` of PE `i`'s source
// goes to block `i` of PE `j`'s dest.
template <typename T>
__device__ inline void rshmem_alltoall_block(T *dest, const T *source, size_t nelems) {
    int me = rshmem_state.my_pe;
    size_t bytes = nelems * sizeof(T);
    if (rshmem_detail_pushes_copy(bytes)) {
        const char *landed = rshmem_detail_push_exchange(
            [&](int pe) { return (const void *)(source + (size_t)pe * nelems); }, bytes,
            "alltoall_block");
        rshmem_detail_copy_landed((char *)dest, landed, (const char *)(source + (size_t)me * nelems),
                                  bytes);
        return;
    }
    rshmem_barrier_all();
    for (int pe = 0; pe < rshmem_state.n_pes; ++pe) {
        rshmem_detail_get_group(dest + (size_t)pe * nelems, source + (size_t)me * nelems,
                                nelems * sizeof(T), pe, rshmem_detail_block_rank(),
                                rshmem_detail_block_size());
    }
    rshmem_barrier_all();
}

#endif // RSHMEM_DEVICE_CUH
