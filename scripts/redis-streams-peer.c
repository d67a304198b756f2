// redis-streams-peer: the same pipeline as `zflux bench` (a client, a durable log that acknowledges,
// a process that reads the log and broadcasts, a subscriber), built on Redis Streams, for
// BENCHMARKS.md's side-by-side comparison (scripts/redis-streams.sh runs it).
//
//   redis-streams-peer relay  --port P
//       XREAD BLOCK on the stream "zflux:actions" from its start, PUBLISH each entry on "zflux:states".
//   redis-streams-peer client --port P --rate R --count N --payload-bytes B
//       Paces N XADDs open-loop at R per second on one pipelined connection, and subscribes to
//       "zflux:states" on another. Prints one JSON line: the ACK (XADD's reply) and end-to-end (the
//       subscriber's message) latencies, p50/p90/p99/max in µs, each counted from the action's due
//       instant, so a stall counts against every action behind it, as in `zflux bench`.
//
// With redis-server run as `--appendonly yes --appendfsync always`, Redis writes and fsyncs its
// append-only file before it sends the replies of an event-loop turn: an XADD's reply means durable.
// Times are CLOCK_MONOTONIC (one host). Build: cc -O2 -o peer redis-streams-peer.c -lhiredis -lpthread
#define _GNU_SOURCE
#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static const char *option(int argc, char **argv, const char *name, const char *fallback) {
    for (int i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    if (!fallback) {
        fprintf(stderr, "redis-streams-peer: %s is required\n", name);
        exit(2);
    }
    return fallback;
}

static redisContext *connect_or_die(int port) {
    redisContext *c = redisConnect("127.0.0.1", port);
    if (!c || c->err) {
        fprintf(stderr, "redis-streams-peer: cannot connect to 127.0.0.1:%d: %s\n", port, c ? c->errstr : "no memory");
        exit(1);
    }
    return c;
}

static void die_reply(const char *what, redisContext *c) {
    fprintf(stderr, "redis-streams-peer: %s: %s\n", what, c->err ? c->errstr : "unexpected reply");
    exit(1);
}

/// Reads every entry of the stream from its start and publishes each entry's fields as one message
/// "index due_ns", a turn's entries pipelined together (as a store publishes a burst's).
static int relay(int port) {
    redisContext *c = connect_or_die(port);
    char last[64] = "0-0";
    for (;;) {
        redisReply *r = redisCommand(c, "XREAD COUNT 1000 BLOCK 0 STREAMS zflux:actions %s", last);
        if (!r && c->err == REDIS_ERR_EOF) return 0;  // the server was shut down: the run is over
        if (!r) die_reply("XREAD", c);
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 1) die_reply("XREAD's reply", c);
        redisReply *entries = r->element[0]->element[1];
        for (size_t i = 0; i < entries->elements; i++) {
            redisReply *entry = entries->element[i];
            redisReply *fields = entry->element[1];
            snprintf(last, sizeof last, "%s", entry->element[0]->str);
            // Fields: "i", index, "t", due, "p", payload.
            redisAppendCommand(c, "PUBLISH zflux:states %s:%s", fields->element[1]->str, fields->element[3]->str);
        }
        for (size_t i = 0; i < entries->elements; i++) {
            redisReply *p;
            if (redisGetReply(c, (void **)&p) != REDIS_OK) die_reply("PUBLISH", c);
            freeReplyObject(p);
        }
        freeReplyObject(r);
    }
    return 0;
}

static int compare(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void percentiles(const char *name, uint64_t *values, size_t count, int last) {
    qsort(values, count, sizeof *values, compare);
    double p[] = {0.50, 0.90, 0.99};
    printf("\"%s\":{", name);
    for (int i = 0; i < 3; i++) {
        size_t at = count ? (size_t)(p[i] * (double)(count - 1)) : 0;
        printf("\"p%d_us\":%.1f,", (int)(p[i] * 100), count ? values[at] / 1000.0 : 0.0);
    }
    printf("\"max_us\":%.1f}%s", count ? values[count - 1] / 1000.0 : 0.0, last ? "" : ",");
}

struct subscriber {
    int port;
    size_t count;
    uint64_t start;
    uint64_t *e2e;  // per index: arrival - due, 0 until it arrives
    size_t seen;
    int ready;
    pthread_mutex_t lock;
};

static void *subscribe(void *arg) {
    struct subscriber *s = arg;
    redisContext *c = connect_or_die(s->port);
    redisReply *r = redisCommand(c, "SUBSCRIBE zflux:states");
    if (!r) die_reply("SUBSCRIBE", c);
    freeReplyObject(r);
    pthread_mutex_lock(&s->lock);
    s->ready = 1;
    pthread_mutex_unlock(&s->lock);
    while (s->seen < s->count) {
        if (redisGetReply(c, (void **)&r) != REDIS_OK) die_reply("a message", c);
        uint64_t arrived = now_ns();
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 3) {
            unsigned long long index = 0, due = 0;
            if (sscanf(r->element[2]->str, "%llu:%llu", &index, &due) == 2 && index < s->count && s->e2e[index] == 0) {
                s->e2e[index] = arrived > due ? arrived - due : 1;
                s->seen++;
            }
        }
        freeReplyObject(r);
    }
    redisFree(c);
    return NULL;
}

static int client(int port, double rate, size_t count, size_t payload_bytes) {
    struct subscriber s = {.port = port, .count = count, .e2e = calloc(count, sizeof(uint64_t))};
    pthread_mutex_init(&s.lock, NULL);
    pthread_t thread;
    pthread_create(&thread, NULL, subscribe, &s);
    for (;;) {  // subscribed before the first XADD
        pthread_mutex_lock(&s.lock);
        int ready = s.ready;
        pthread_mutex_unlock(&s.lock);
        if (ready) break;
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    redisContext *c = connect_or_die(port);
    char *payload = malloc(payload_bytes + 1);
    memset(payload, 'x', payload_bytes);
    payload[payload_bytes] = 0;
    uint64_t *ack = calloc(count, sizeof(uint64_t));
    uint64_t *due = calloc(count, sizeof(uint64_t));
    uint64_t start = now_ns() + 1000000, interval = (uint64_t)(1e9 / rate);
    size_t sent = 0, acked = 0;
    while (acked < count) {
        uint64_t now = now_ns();
        // Everything due goes out now, in one write.
        size_t before = sent;
        while (sent < count && start + sent * interval <= now) {
            due[sent] = start + sent * interval;
            redisAppendCommand(c, "XADD zflux:actions * i %llu t %llu p %s", (unsigned long long)sent, (unsigned long long)due[sent], payload);
            sent++;
        }
        if (sent > before) {
            int done = 0;
            while (!done)
                if (redisBufferWrite(c, &done) != REDIS_OK) die_reply("XADD", c);
        }
        // Replies until the next action is due.
        uint64_t next = sent < count ? start + sent * interval : now + 1000000000ull;
        int wait_ms = next > now ? (int)((next - now) / 1000000) : 0;
        struct pollfd fd = {.fd = c->fd, .events = POLLIN};
        if (poll(&fd, 1, wait_ms) > 0) {
            if (redisBufferRead(c) != REDIS_OK) die_reply("a reply", c);
            void *reply;
            while (redisGetReplyFromReader(c, &reply) == REDIS_OK && reply) {
                uint64_t arrived = now_ns();
                ack[acked] = arrived - due[acked];
                acked++;
                freeReplyObject(reply);
            }
        }
    }
    pthread_join(thread, NULL);
    uint64_t end = now_ns();
    printf("{\"peer\":\"redis-streams\",\"rate\":%.0f,\"count\":%zu,\"seconds\":%.2f,", rate, count, (end - start) / 1e9);
    percentiles("ack", ack, count, 0);
    percentiles("e2e", s.e2e, count, 1);
    printf("}\n");
    redisFree(c);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: redis-streams-peer relay|client --port P [--rate R --count N --payload-bytes B]\n");
        return 2;
    }
    int port = atoi(option(argc, argv, "--port", NULL));
    if (strcmp(argv[1], "relay") == 0) return relay(port);
    if (strcmp(argv[1], "client") == 0)
        return client(port, atof(option(argc, argv, "--rate", "3000")), (size_t)atol(option(argc, argv, "--count", "30000")),
                      (size_t)atol(option(argc, argv, "--payload-bytes", "64")));
    fprintf(stderr, "redis-streams-peer: unknown mode %s\n", argv[1]);
    return 2;
}
