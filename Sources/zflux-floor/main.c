// zflux-floor: the physical floor of `zflux bench --floor`, in C on libzmq.
//
// The same hops as a zflux cluster (client -> sequencer -> forward relay per store -> sinks), the same
// three-frame messages (topic, a zflux header, payload) of the same sizes, the same open-loop pacing,
// and none of zflux's logic: no journal, no reducer, no codec. What it measures is what libzmq and
// the machine cost; zflux's figures are reported as ratios to it.
//
//   zflux-floor sequencer --input EP --publish EP
//   zflux-floor forward   --input EP --publish EP
//   zflux-floor sink      --input EP --out FILE --count N [--timeout-ms T]
//   zflux-floor client    --connect EP --rate R --count N --clients C --payload-bytes P --out FILE
//                         [--ready FILE]...
//
// The client's FILE: u64 start, u64 sent, then per scheduled action u64 ACK time after the start and
// u64 seq (0, 0: no ACK). A sink's FILE: per message u64 seq, u64 arrival time. Both write FILE.cpu,
// the CPU they used in µs and their context switches.
//   zflux-floor fsync     --dir D [--count N] [--bytes B] [--layout append|preallocated]
//     (append, the journal's way: each write grows the file, so each fdatasync also writes the inode;
//     preallocated: the file is written whole with zeros and synced first, then each record overwrites
//     its place, and fdatasync has no size to write)
//
// Times are CLOCK_MONOTONIC nanoseconds (every process is on one host). The client writes its start
// time and, per scheduled message, when its ACK came and the seq it got; a sink writes, per message,
// the seq and when it arrived. `zflux bench` reads both and accounts for them as for zflux itself.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

enum { header_size = 60, seq_offset = 8, client_seq_offset = 32, timestamp_offset = 40 };
enum { kind_dispatch = 1, kind_ack = 2, kind_action = 4 };
static const uint64_t probe = UINT64_MAX;

static volatile sig_atomic_t stop_requested = 0;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }
static pid_t parent;
/// Asked to stop, or the bench that started it is gone (even killed with -9): no orphan outlives it.
#define stopping (stop_requested || getppid() != parent)

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t wall_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }  // little-endian hosts only
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void die(const char *what) {
    fprintf(stderr, "zflux-floor: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

/// What `zflux-floor --help` prints (the comment at the top of this file, for a user without it).
static const char usage[] =
    "zflux-floor: the physical floor of `zflux bench --floor`: C programs on libzmq, the same hops as a\n"
    "zflux cluster and none of its logic. `zflux bench --floor` starts them; run alone, `fsync` is the one\n"
    "a user may want.\n"
    "\n"
    "  zflux-floor sequencer --input EP --publish EP\n"
    "  zflux-floor forward   --input EP --publish EP\n"
    "  zflux-floor sink      --input EP --out FILE --count N [--timeout-ms T]\n"
    "  zflux-floor client    --connect EP --rate R --count N --clients C --payload-bytes P --out FILE [--ready FILE]...\n"
    "  zflux-floor fsync     --dir D [--count N] [--bytes B] [--layout append|preallocated]\n"
    "\n"
    "fsync times N (default 500) writes of B bytes (default 160, a small journal record) each followed by\n"
    "fdatasync, in a file it makes in D (made when missing) and removes, and prints one JSON line:\n"
    "count, bytes, layout, p50_us, p90_us, p99_us, max_us. --layout append (default) grows the file at\n"
    "each write, as the journal does, so each fdatasync also writes the file's size; preallocated writes\n"
    "the file whole with zeros and syncs it first, then each record overwrites its place.\n";

/// Exits 2 naming the first argument after the command that is not one of `names` (each taking a
/// value) or lacks its value.
static void only_options(int argc, char **argv, const char *const *names) {
    for (int i = 2; i < argc; i += 2) {
        int known = 0;
        for (const char *const *name = names; *name; name++) known |= strcmp(argv[i], *name) == 0;
        if (!known) { fprintf(stderr, "zflux-floor %s: unknown option %s (--help lists them)\n", argv[1], argv[i]); exit(2); }
        if (i + 1 >= argc) { fprintf(stderr, "zflux-floor %s: %s needs a value\n", argv[1], argv[i]); exit(2); }
    }
}

/// The whole of `text` as a positive integer, or exit 2 naming `name`.
static long long positive(const char *name, const char *text) {
    char *end = NULL;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 1) {
        fprintf(stderr, "zflux-floor: %s must be a whole number of at least 1, not '%s'\n", name, text);
        exit(2);
    }
    return value;
}

static const char *option(int argc, char **argv, const char *name, const char *fallback) {
    for (int i = 2; i + 1 < argc; i++) if (strcmp(argv[i], name) == 0) return argv[i + 1];
    if (!fallback) { fprintf(stderr, "zflux-floor: %s is required\n", name); exit(2); }
    return fallback;
}

/// A zflux header: magic "ZF", protocol 2, kind, flags 0, the action type "post".
static void make_header(unsigned char *h, int kind) {
    memset(h, 0, header_size);
    h[0] = 'Z'; h[1] = 'F'; h[2] = 2; h[3] = (unsigned char)kind;
    h[6] = 4;  // action type length
    memcpy(h + 56, "post", 4);
}

static void *socket_of(void *context, int type) {
    void *s = zmq_socket(context, type);
    if (!s) die("zmq_socket");
    int hwm = 100000, linger = 0;
    zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof hwm);
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    return s;
}

/// Receives one multipart message without waiting into `parts` (at most `max`); returns its frame
/// count, 0 when nothing is queued.
static int receive(void *s, zmq_msg_t *parts, int max) {
    int n = 0, more = 1;
    while (more) {
        zmq_msg_init(&parts[n < max ? n : max - 1]);
        if (zmq_msg_recv(&parts[n < max ? n : max - 1], s, n == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close(&parts[n < max ? n : max - 1]);
            if (n == 0 && zmq_errno() == EAGAIN) return 0;
            if (zmq_errno() == EINTR) return 0;
            // Anything else ends the loop the way a stop does, so what was measured is still written.
            fprintf(stderr, "zflux-floor: zmq_msg_recv: %s\n", zmq_strerror(zmq_errno()));
            stop_requested = 1;
            return 0;
        }
        more = zmq_msg_more(&parts[n < max ? n : max - 1]);
        if (n < max) n++;
    }
    return n;
}

static void write_cpu(const char *path);

// The scheduler's slice zflux's node threads ask for when ZFLUX_NODE_SLICE_US says (µs; unset or 0: the
// kernel's default; Sources/NodeSupport/NodeThreadSlice.swift), asked for here the same way once a
// role's sockets exist, so that the floor runs under the scheduling the cluster does. A value zflux
// refuses makes no request here (zflux's own nodes stop on it).
static void ask_slice(void) {
    struct { uint32_t size, policy; uint64_t flags; int32_t nice; uint32_t priority; uint64_t runtime, deadline, period; } attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0 || attr.policy != SCHED_OTHER) return;
    const char *text = getenv("ZFLUX_NODE_SLICE_US");
    if (!text || text[0] < '0' || text[0] > '9') return;
    char *end;
    errno = 0;
    unsigned long long micros = strtoull(text, &end, 10);
    if (errno || *end || micros < 100 || micros > 100000) return;
    attr.size = sizeof attr;
    attr.flags = 0x01;  // SCHED_FLAG_RESET_ON_FORK, as the nodes ask (threads started later get the default)
    attr.runtime = micros * 1000;
    syscall(SYS_sched_setattr, 0, &attr, 0);
}

static void close_all(zmq_msg_t *parts, int n) { for (int i = 0; i < n; i++) zmq_msg_close(&parts[i]); }

// The dispatcher's place: numbers each message, acknowledges it and publishes it, a drained burst at a time.
static int sequencer(int argc, char **argv) {
    void *context = zmq_ctx_new();
    void *in = socket_of(context, ZMQ_ROUTER), *out = socket_of(context, ZMQ_PUB);
    if (zmq_bind(in, option(argc, argv, "--input", NULL)) != 0) die("bind input");
    if (zmq_bind(out, option(argc, argv, "--publish", NULL)) != 0) die("bind publish");
    ask_slice();
    uint64_t seq = 0;
    zmq_msg_t parts[4];
    while (!stopping) {
        zmq_pollitem_t item = {in, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 100) <= 0) continue;
        int n;
        while (!stop_requested && (n = receive(in, parts, 4)) > 0) {
            if (n == 4 && zmq_msg_size(&parts[2]) == header_size) {
                unsigned char *h = zmq_msg_data(&parts[2]);
                h[3] = kind_action;
                put64(h + seq_offset, ++seq);
                put64(h + timestamp_offset, wall_ns());
                unsigned char ack[header_size];
                memcpy(ack, h, header_size);
                ack[3] = kind_ack;
                zmq_msg_send(&parts[1], out, ZMQ_SNDMORE | ZMQ_DONTWAIT);
                zmq_msg_send(&parts[2], out, ZMQ_SNDMORE | ZMQ_DONTWAIT);
                zmq_msg_send(&parts[3], out, ZMQ_DONTWAIT);
                zmq_msg_send(&parts[0], in, ZMQ_SNDMORE | ZMQ_DONTWAIT);
                zmq_send(in, ack, header_size, ZMQ_DONTWAIT);
                zmq_msg_close(&parts[1]); zmq_msg_close(&parts[2]); zmq_msg_close(&parts[3]); zmq_msg_close(&parts[0]);
            } else {
                close_all(parts, n);
            }
        }
    }
    zmq_close(in); zmq_close(out); zmq_ctx_term(context);
    return 0;
}

// A store's place: what comes in goes out unchanged.
static int forward(int argc, char **argv) {
    void *context = zmq_ctx_new();
    void *in = socket_of(context, ZMQ_SUB), *out = socket_of(context, ZMQ_PUB);
    zmq_setsockopt(in, ZMQ_SUBSCRIBE, "", 0);
    if (zmq_connect(in, option(argc, argv, "--input", NULL)) != 0) die("connect input");
    if (zmq_bind(out, option(argc, argv, "--publish", NULL)) != 0) die("bind publish");
    ask_slice();
    zmq_msg_t parts[3];
    while (!stopping) {
        zmq_pollitem_t item = {in, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 100) <= 0) continue;
        int n;
        while (!stop_requested && (n = receive(in, parts, 3)) > 0) {
            for (int i = 0; i < n; i++) zmq_msg_send(&parts[i], out, (i + 1 < n ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT);
            close_all(parts, n);
        }
    }
    zmq_close(in); zmq_close(out); zmq_ctx_term(context);
    return 0;
}

static void write_file(const char *path, const void *data, size_t bytes) {
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", path);
    FILE *f = fopen(temporary, "wb");
    if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0 || rename(temporary, path) != 0) {
        fprintf(stderr, "zflux-floor: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

// A view's place: records (seq, arrival) per message until it saw --count of the run's messages
// or it is stopped; creates FILE.ready at its first message (the chain is connected).
static int sink(int argc, char **argv) {
    const char *out_path = option(argc, argv, "--out", NULL);
    uint64_t expected = strtoull(option(argc, argv, "--count", NULL), NULL, 10);
    uint64_t timeout_ns = strtoull(option(argc, argv, "--timeout-ms", "600000"), NULL, 10) * 1000000ull;
    void *context = zmq_ctx_new();
    void *in = socket_of(context, ZMQ_SUB);
    zmq_setsockopt(in, ZMQ_SUBSCRIBE, "", 0);
    if (zmq_connect(in, option(argc, argv, "--input", NULL)) != 0) die("connect input");
    ask_slice();
    size_t capacity = (size_t)expected + 1024, count = 0;
    uint64_t *records = malloc(capacity * 2 * sizeof(uint64_t));
    if (!records) { fprintf(stderr, "zflux-floor: out of memory\n"); return 1; }
    int ready = 0;
    uint64_t seen = 0, deadline = now_ns() + timeout_ns;
    zmq_msg_t parts[3];
    while (!stopping && seen < expected && now_ns() < deadline) {
        zmq_pollitem_t item = {in, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 100) <= 0) continue;
        uint64_t at = now_ns();  // one wake-up: what it drains is visible at once, as in a view
        int n;
        while (!stop_requested && (n = receive(in, parts, 3)) > 0) {
            if (n == 3 && zmq_msg_size(&parts[1]) == header_size) {
                const unsigned char *h = zmq_msg_data(&parts[1]);
                if (!ready) {
                    char path[4096];
                    snprintf(path, sizeof path, "%s.ready", out_path);
                    write_file(path, "", 0);
                    ready = 1;
                }
                if (get64(h + client_seq_offset) != probe) {
                    if (count == capacity) {
                        capacity *= 2;
                        records = realloc(records, capacity * 2 * sizeof(uint64_t));
                        if (!records) { fprintf(stderr, "zflux-floor: out of memory\n"); return 1; }
                    }
                    records[2 * count] = get64(h + seq_offset);
                    records[2 * count + 1] = at;
                    count++;
                    seen++;
                }
            }
            close_all(parts, n);
        }
    }
    write_file(out_path, records, count * 2 * sizeof(uint64_t));
    write_cpu(out_path);
    zmq_close(in); zmq_ctx_term(context);
    return 0;
}

static int file_exists(const char *path) { struct stat s; return stat(path, &s) == 0; }

/// Writes the CPU this process used (user + system, µs) and its context switches (voluntary and
/// involuntary, every thread's, libzmq's I/O thread included) to PATH.cpu, as `µs switches`.
static void write_cpu(const char *path) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    uint64_t us = (uint64_t)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000ull
                  + (uint64_t)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    char name[4096], text[64];
    snprintf(name, sizeof name, "%s.cpu", path);
    int n = snprintf(text, sizeof text, "%llu %llu\n", (unsigned long long)us, (unsigned long long)(usage.ru_nvcsw + usage.ru_nivcsw));
    write_file(name, text, (size_t)n);
}

// The client: message i is due at start + i/rate (open loop, so a stall is not hidden); ACKs are
// read between sends. Before the run it sends probes until every --ready file exists.
static int client(int argc, char **argv) {
    const char *out_path = option(argc, argv, "--out", NULL);
    double rate = strtod(option(argc, argv, "--rate", NULL), NULL);
    uint64_t count = strtoull(option(argc, argv, "--count", NULL), NULL, 10);
    int clients = atoi(option(argc, argv, "--clients", "1"));
    size_t payload_bytes = (size_t)strtoull(option(argc, argv, "--payload-bytes", "64"), NULL, 10);
    if (rate <= 0 || count == 0 || clients < 1) { fprintf(stderr, "zflux-floor: bad --rate, --count or --clients\n"); return 2; }
    void *context = zmq_ctx_new();
    void **sockets = calloc((size_t)clients, sizeof(void *));
    zmq_pollitem_t *items = calloc((size_t)clients, sizeof(zmq_pollitem_t));
    for (int c = 0; c < clients; c++) {
        sockets[c] = socket_of(context, ZMQ_DEALER);
        if (zmq_connect(sockets[c], option(argc, argv, "--connect", NULL)) != 0) die("connect");
        items[c] = (zmq_pollitem_t){sockets[c], 0, ZMQ_POLLIN, 0};
    }
    ask_slice();
    unsigned char header[header_size];
    unsigned char *payload = calloc(payload_bytes ? payload_bytes : 1, 1);
    make_header(header, kind_dispatch);
    // Probes until every sink has heard one (the chain's subscriptions are in place).
    for (;;) {
        int all = 1;
        for (int i = 2; i + 1 < argc; i++) if (strcmp(argv[i], "--ready") == 0 && !file_exists(argv[i + 1])) all = 0;
        if (all || stopping) break;
        put64(header + client_seq_offset, probe);
        zmq_send(sockets[0], "ledger", 6, ZMQ_SNDMORE);
        zmq_send(sockets[0], header, header_size, ZMQ_SNDMORE);
        zmq_send(sockets[0], payload, payload_bytes, 0);
        usleep(20000);
        unsigned char ack[header_size];
        while (zmq_recv(sockets[0], ack, sizeof ack, ZMQ_DONTWAIT) >= 0) {}
    }
    uint64_t *records = calloc((size_t)count * 2, sizeof(uint64_t));  // per index: ACK time, seq
    // The same schedule and wake-ups as zflux's bench client: action i due at round(i * 1e9 / rate)
    // after the start, a timerfd (1 µs slack) waking the thread when the next one is due.
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    zmq_pollitem_t *all = calloc((size_t)clients + 1, sizeof(zmq_pollitem_t));
    for (int c = 0; c < clients; c++) all[c] = items[c];
    all[clients] = (zmq_pollitem_t){NULL, timer, ZMQ_POLLIN, 0};
    uint64_t start = now_ns() + 50000000ull;
    uint64_t next = 0, acked = 0, span = (uint64_t)llround((double)(count - 1) * 1e9 / rate);
    // The instant the timer is set for, and the one it last fired at.
    uint64_t armed = 0, last_timer = 0;
    const uint64_t wake_quantum = 50000;
    // As zflux's client: from 20k/s the timer ticks every quantum from the start, set once.
    const int periodic = rate * (double)wake_quantum >= 1e9;
    if (periodic) {
        struct itimerspec spec = {{0, (long)wake_quantum}, {(time_t)(start / 1000000000ull), (long)(start % 1000000000ull)}};
        timerfd_settime(timer, TFD_TIMER_ABSTIME, &spec, NULL);
    }
    while (!stopping) {
        uint64_t now = now_ns(), elapsed = now >= start ? now - start : 0;
        if (now >= start) {
            uint64_t due = (uint64_t)floor((double)elapsed * rate / 1e9) + 1;
            if (due > count) due = count;
            while (next < due) {
                void *s = sockets[next % (uint64_t)clients];
                put64(header + client_seq_offset, next);
                if (zmq_send(s, "ledger", 6, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) break;
                zmq_send(s, header, header_size, ZMQ_SNDMORE);
                zmq_send(s, payload, payload_bytes, 0);
                next++;
            }
        }
        if (next >= count) {
            if (acked >= count || elapsed > span + 10000000000ull) break;
            if (periodic && armed != UINT64_MAX) {
                struct itimerspec off = {{0, 0}, {0, 0}};
                timerfd_settime(timer, TFD_TIMER_ABSTIME, &off, NULL);
                armed = UINT64_MAX;
            }
        } else if (!periodic) {
            uint64_t due_at = start + (uint64_t)llround((double)next * 1e9 / rate);
            uint64_t at = due_at > now ? due_at : now + 20000;
            // As zflux's client: timer wake-ups at least wake_quantum apart, and no re-arming for the
            // same instant (an ACK woke the thread, not the timer).
            if (at < last_timer + wake_quantum) at = last_timer + wake_quantum;
            if (at != armed) {
                struct itimerspec spec = {{0, 0}, {(time_t)(at / 1000000000ull), (long)(at % 1000000000ull)}};
                timerfd_settime(timer, TFD_TIMER_ABSTIME, &spec, NULL);
                armed = at;
            }
        }
        if (zmq_poll(all, clients + 1, 100) <= 0) continue;
        if (all[clients].revents) {
            uint64_t expirations;
            ssize_t r = read(timer, &expirations, sizeof expirations);
            (void)r;
            last_timer = armed;
        }
        uint64_t at = now_ns();
        for (int c = 0; c < clients; c++) {
            if (!all[c].revents) continue;
            unsigned char ack[header_size];
            int n;
            while ((n = zmq_recv(sockets[c], ack, sizeof ack, ZMQ_DONTWAIT)) >= 0) {
                if (n != header_size) continue;
                uint64_t index = get64(ack + client_seq_offset);
                if (index >= count || records[2 * index + 1] != 0) continue;
                records[2 * index] = at > start ? at - start : 1;
                records[2 * index + 1] = get64(ack + seq_offset);
                acked++;
            }
        }
    }
    // The start and how many were sent first, then the records.
    size_t bytes = ((size_t)count * 2 + 2) * sizeof(uint64_t);
    uint64_t *file = malloc(bytes);
    file[0] = start;
    file[1] = next;
    memcpy(file + 2, records, (size_t)count * 2 * sizeof(uint64_t));
    write_file(out_path, file, bytes);
    write_cpu(out_path);
    for (int c = 0; c < clients; c++) zmq_close(sockets[c]);
    zmq_ctx_term(context);
    return 0;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

// What the journal's disk costs: B bytes written and fdatasync, N times, in a file in DIR (appended,
// or each over its place in a file written whole first: --layout).
static int fsync_probe(int argc, char **argv) {
    static const char *const names[] = {"--dir", "--count", "--bytes", "--layout", NULL};
    only_options(argc, argv, names);
    const char *dir = option(argc, argv, "--dir", NULL);
    long long counted = positive("--count", option(argc, argv, "--count", "500"));
    long long sized = positive("--bytes", option(argc, argv, "--bytes", "160"));
    if (counted > 100000000 || sized > (1 << 30)) { fprintf(stderr, "zflux-floor: --count at most 100000000, --bytes at most 1 GiB\n"); return 2; }
    int count = (int)counted;
    size_t bytes = (size_t)sized;
    const char *layout = option(argc, argv, "--layout", "append");
    int preallocated = strcmp(layout, "preallocated") == 0;
    if (!preallocated && strcmp(layout, "append") != 0) { fprintf(stderr, "zflux-floor: --layout is append or preallocated, not '%s'\n", layout); return 2; }
    if (dir[0] == '\0') { fprintf(stderr, "zflux-floor: --dir is empty\n"); return 2; }
    // Made when missing, with its parents (mkdir -p).
    char made[4096];
    snprintf(made, sizeof made, "%s", dir);
    for (char *slash = made + 1;; slash++) {
        int last = *slash == '\0';
        if (*slash != '/' && !last) continue;
        *slash = '\0';
        if (mkdir(made, 0700) != 0 && errno != EEXIST) { fprintf(stderr, "zflux-floor: cannot make %s: %s\n", made, strerror(errno)); return 1; }
        if (last) break;
        *slash = '/';
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/zflux-floor-fsync-%d", dir, (int)getpid());
    // append, the journal's way: each write grows the file. preallocated: the file is written whole
    // with zeros and synced first; each record then overwrites its place.
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (preallocated ? 0 : O_APPEND), 0600);
    if (fd < 0) { fprintf(stderr, "zflux-floor: cannot create %s: %s\n", path, strerror(errno)); return 1; }
    unsigned char *block = calloc(bytes, 1);
    uint64_t *times = calloc((size_t)count, sizeof(uint64_t));
    const char *failed = block && times ? NULL : "out of memory";
    if (!failed && preallocated) {
        // In chunks of at most 1 MiB: one write of it all could come back short.
        static unsigned char zeros[1 << 20];
        for (off_t left = (off_t)count * (off_t)bytes; left > 0 && !failed;) {
            size_t chunk = left < (off_t)sizeof zeros ? (size_t)left : sizeof zeros;
            ssize_t written = write(fd, zeros, chunk);
            if (written < 0) failed = "cannot preallocate";
            else if (written == 0) { errno = ENOSPC; failed = "cannot preallocate"; }
            else left -= written;
        }
        if (!failed && fsync(fd) != 0) failed = "cannot preallocate";
    }
    for (int i = 0; i < count && !failed; i++) {
        uint64_t t0 = now_ns();
        ssize_t written = preallocated ? pwrite(fd, block, bytes, (off_t)i * (off_t)bytes) : write(fd, block, bytes);
        if (written != (ssize_t)bytes || fdatasync(fd) != 0) failed = "write+fdatasync failed";
        times[i] = now_ns() - t0;
    }
    int error = errno;
    close(fd);
    unlink(path);
    if (failed) {
        fprintf(stderr, "zflux-floor: %s in %s: %s\n", failed, dir, strerror(error));
        return 1;
    }
    qsort(times, (size_t)count, sizeof(uint64_t), compare_u64);
    printf("{\"count\":%d,\"bytes\":%zu,\"layout\":\"%s\",\"p50_us\":%.1f,\"p90_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f}\n", count,
           bytes, layout, times[count / 2] / 1e3, times[count * 9 / 10] / 1e3, times[count * 99 / 100] / 1e3, times[count - 1] / 1e3);
    return 0;
}

int main(int argc, char **argv) {
    parent = getppid();
    // A child inherits the signal mask of the thread that spawned it: the bench's threads may block
    // SIGTERM, and a floor process that never sees it would run until SIGKILL and write nothing.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    const char *command = argc > 1 ? argv[1] : "";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
    }
    if (strcmp(command, "sequencer") == 0) return sequencer(argc, argv);
    if (strcmp(command, "forward") == 0) return forward(argc, argv);
    if (strcmp(command, "sink") == 0) return sink(argc, argv);
    if (strcmp(command, "client") == 0) return client(argc, argv);
    if (strcmp(command, "fsync") == 0) return fsync_probe(argc, argv);
    fputs(usage, stderr);
    return 2;
}
