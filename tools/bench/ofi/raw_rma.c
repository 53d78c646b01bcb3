/* Raw libfabric RMA between two processes, the floor the network path of PEs as processes
 * is measured against (tools/bench/ofi.sh, docs/multi-node.md).
 *
 * The process forks; the two trade endpoint names, keys and addresses through pipes. The
 * parent times, against the child's registered buffer:
 *   - put: fi_write with FI_DELIVERY_COMPLETE, waiting for its completion counter each time;
 *   - get: fi_read, waiting for its counter;
 *   - put bandwidth: a window of 64 fi_write, then the wait for all of them;
 *   - fetch-add: fi_fetch_atomic FI_SUM on a 64-bit word, waiting for the result;
 *   - add rate: 1000 fi_atomic FI_SUM, then the wait for all of them.
 * The child spins on fi_cq_read (which is what moves a provider with manual progress) until
 * the parent writes -1 into its last word. Prints lines `raw: ...` that ofi.sh reads.
 *
 *   cc -O2 raw_rma.c -o raw_rma -lfabric && FI_PROVIDER="tcp;ofi_rxm" ./raw_rma
 */
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_BYTES (16 << 20)
#define WINDOW 64

static void check(int rc, const char *what) {
    if (rc) {
        fprintf(stderr, "raw_rma: %s: %s\n", what, fi_strerror(-rc));
        exit(1);
    }
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static struct fid_ep *ep;
static struct fid_cq *cq;
static struct fid_cntr *writes, *reads;
static uint64_t writes_posted, reads_posted;
static const char *stage = "setting up";

/* Moves the endpoint: reads the completion queue, where only failures are written. */
static void progress(void) {
    char entry[64];
    ssize_t rc = fi_cq_read(cq, entry, 1);
    if (rc > 0 || rc == -FI_EAVAIL) {
        struct fi_cq_err_entry err = {0};
        fi_cq_readerr(cq, &err, 0);
        fprintf(stderr, "raw_rma: %s failed: %s (provider error %d)\n", stage, fi_strerror(err.err),
                err.prov_errno);
        exit(1);
    }
}

static void wait_counter(struct fid_cntr *counter, uint64_t target) {
    while (fi_cntr_read(counter) < target) progress();
}

/* Retries a post while the provider says to come back later. */
#define POST(call)                                     \
    do {                                               \
        ssize_t rc_;                                   \
        while ((rc_ = (call)) == -FI_EAGAIN) progress(); \
        check((int)rc_, #call);                        \
    } while (0)

int main(void) {
    int to_child[2], to_parent[2];
    if (pipe(to_child) || pipe(to_parent)) return 1;
    pid_t child = fork();
    int is_child = child == 0;

    struct fi_info *hints = fi_allocinfo(), *info;
    hints->caps = FI_RMA | FI_ATOMIC;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | FI_MR_ALLOCATED;
    const char *provider = getenv("FI_PROVIDER");
    if (provider) hints->fabric_attr->prov_name = strdup(provider);
    check(fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &info), "fi_getinfo");
    info->tx_attr->op_flags |= FI_DELIVERY_COMPLETE;

    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    check(fi_fabric(info->fabric_attr, &fabric, NULL), "fi_fabric");
    check(fi_domain(fabric, info, &domain, NULL), "fi_domain");
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT, .size = 128};
    check(fi_cq_open(domain, &cq_attr, &cq, NULL), "fi_cq_open");
    struct fi_cntr_attr cntr_attr = {.events = FI_CNTR_EVENTS_COMP};
    check(fi_cntr_open(domain, &cntr_attr, &writes, NULL), "fi_cntr_open");
    check(fi_cntr_open(domain, &cntr_attr, &reads, NULL), "fi_cntr_open");
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    check(fi_av_open(domain, &av_attr, &av, NULL), "fi_av_open");
    check(fi_endpoint(domain, info, &ep, NULL), "fi_endpoint");
    check(fi_ep_bind(ep, &av->fid, 0), "bind av");
    check(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION), "bind cq");
    check(fi_ep_bind(ep, &writes->fid, FI_WRITE), "bind writes");
    check(fi_ep_bind(ep, &reads->fid, FI_READ), "bind reads");
    check(fi_enable(ep), "fi_enable");

    /* The child's buffer, with a 64-bit word for atomics and one for the end after it. */
    size_t len = MAX_BYTES + 16;
    uint8_t *buffer = aligned_alloc(4096, len);
    memset(buffer, 0, len);
    volatile int64_t *end_word = (volatile int64_t *)(buffer + MAX_BYTES + 8);
    struct fid_mr *mr;
    check(fi_mr_reg(domain, buffer, len, FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 0, 0, &mr, NULL),
          "fi_mr_reg");

    char name[256];
    size_t name_len = sizeof name;
    check(fi_getname(&ep->fid, name, &name_len), "fi_getname");
    /* Offsets into the region, unless the provider addresses it by virtual address. */
    int virtual_addresses = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    uint64_t key = fi_mr_key(mr), base = virtual_addresses ? (uint64_t)(uintptr_t)buffer : 0;
    int out = is_child ? to_parent[1] : to_child[1], in = is_child ? to_child[0] : to_parent[0];
    char peer_name[256];
    size_t peer_len;
    uint64_t peer_key, peer_base;
    if (write(out, &name_len, sizeof name_len) < 0 || write(out, name, name_len) < 0 ||
        write(out, &key, 8) < 0 || write(out, &base, 8) < 0 ||
        read(in, &peer_len, sizeof peer_len) < 0 || read(in, peer_name, peer_len) < 0 ||
        read(in, &peer_key, 8) < 0 || read(in, &peer_base, 8) < 0) {
        perror("raw_rma: trading addresses");
        return 1;
    }
    fi_addr_t peer;
    if (fi_av_insert(av, peer_name, 1, &peer, 0, NULL) != 1) {
        fprintf(stderr, "raw_rma: fi_av_insert failed\n");
        return 1;
    }

    if (is_child) {
        stage = "the target's progress";
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        while (*end_word != -1) progress();
        return 0;
    }

    uint8_t *source = aligned_alloc(4096, MAX_BYTES);
    memset(source, 7, MAX_BYTES);
    uint64_t word_at = peer_base + MAX_BYTES;
    for (size_t size = 8; size <= MAX_BYTES; size *= 8) {
        int ops = (int)(20000000 / (size + 8000));
        ops = ops < 20 ? 20 : ops > 2000 ? 2000 : ops;
        stage = "put";
        double started = now_us();
        for (int i = 0; i < ops; i++) {
            POST(fi_write(ep, source, size, NULL, peer, peer_base, peer_key, NULL));
            wait_counter(writes, ++writes_posted);
        }
        double put_us = (now_us() - started) / ops;
        stage = "get";
        started = now_us();
        for (int i = 0; i < ops; i++) {
            POST(fi_read(ep, source, size, NULL, peer, peer_base, peer_key, NULL));
            wait_counter(reads, ++reads_posted);
        }
        double get_us = (now_us() - started) / ops;
        stage = "streamed put";
        started = now_us();
        for (int i = 0; i < ops; i++) {
            POST(fi_write(ep, source, size, NULL, peer, peer_base, peer_key, NULL));
            if (++writes_posted % WINDOW == 0) wait_counter(writes, writes_posted);
        }
        wait_counter(writes, writes_posted);
        double stream_us = (now_us() - started) / ops;
        printf("raw: %zu B: put %.2f us, get %.2f us, streamed put %.1f MB/s\n", size, put_us,
               get_us, size / stream_us);
    }
    int64_t one = 1, old;
    stage = "fetch-add";
    double started = now_us();
    for (int i = 0; i < 2000; i++) {
        POST(fi_fetch_atomic(ep, &one, 1, NULL, &old, NULL, peer, word_at, peer_key, FI_INT64,
                             FI_SUM, NULL));
        wait_counter(reads, ++reads_posted);
    }
    printf("raw: fetch_add %.2f us\n", (now_us() - started) / 2000);
    stage = "add";
    started = now_us();
    for (int i = 0; i < 1000; i++) {
        POST(fi_atomic(ep, &one, 1, NULL, peer, word_at, peer_key, FI_INT64, FI_SUM, NULL));
        ++writes_posted;
    }
    wait_counter(writes, writes_posted);
    printf("raw: add rate %.3f M/s\n", 1000 / (now_us() - started));
    int64_t end = -1;
    POST(fi_write(ep, &end, 8, NULL, peer, word_at + 8, peer_key, NULL));
    wait_counter(writes, ++writes_posted);
    waitpid(child, NULL, 0);
    return 0;
}
