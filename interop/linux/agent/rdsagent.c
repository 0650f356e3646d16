/*
 * rdsagent - a small RDS (AF_RDS / SOCK_SEQPACKET) test agent that runs inside
 * the Linux guest of the rds4j interop harness.
 *
 * It drives the kernel's RDS stack so that a Java peer on the host side can be
 * checked against it.  Every result line on stdout starts with "RDSAGENT " and
 * consists of KEY=VALUE fields, so the JUnit suite can parse it.
 *
 * Payload pattern (shared with the Java tools): message k (counted from 0 per
 * sending socket) of size s carries k as a big-endian 64-bit integer in its first
 * min(8, s) bytes (the low-order bytes of that integer when s < 8), and every
 * byte at offset i >= 8 is (k + i) mod 251.
 *
 * Build: gcc -static -O2 -o rdsagent rdsagent.c   (no libraries beyond libc)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif
#define RDS_INFO_COUNTERS 10000
#define RDS_INFO_CONNECTIONS 10001
#define RDS_INFO_SEND_MESSAGES 10003
#define RDS_INFO_RETRANS_MESSAGES 10004
#define RDS_INFO_TCP_SOCKETS 10007
#define RDS_TCP_PORT 16385

#define RDS_MAX_MSG 1048576
/* Receive buffer: one byte more than the largest legal message, so MSG_TRUNC
 * can only mean the peer sent something oversized. */
#define RX_BUF (RDS_MAX_MSG + 1)
/* Upper bound for per-source sequence bitmaps (dup/reorder detection). */
#define MAX_TRACKED_K (1u << 24)
#define MAX_DETAIL_LINES 20

static const size_t default_sizes[] = {0, 1, 100, 4096, 65536, 1048576};

/* ------------------------------------------------------------------ utils */

static void out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("RDSAGENT ", stdout);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    /* stdout is a file or serial line; results must survive a kill. */
    fflush(stdout);
}

static void die(const char *fmt, ...)
{
    va_list ap;
    char buf[512];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    out("ERROR %s", buf);
    exit(2);
}

static void *rds_info(int fd, int opt, socklen_t *len, unsigned *each);

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static const char *errname(int e)
{
    switch (e) {
    case 0: return "OK";
    case EMSGSIZE: return "EMSGSIZE";
    case ENOBUFS: return "ENOBUFS";
    case EAGAIN: return "EAGAIN";
    case EINTR: return "EINTR";
    case ENOTCONN: return "ENOTCONN";
    case EINVAL: return "EINVAL";
    case EADDRINUSE: return "EADDRINUSE";
    case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
    case ECONNREFUSED: return "ECONNREFUSED";
    case ENOMEM: return "ENOMEM";
    case EPIPE: return "EPIPE";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    default: return "E?";
    }
}

/* "a.b.c.d:port" -> sockaddr_in.  Port may be omitted when allow_noport. */
static struct sockaddr_in parse_addr(const char *s, int allow_noport)
{
    struct sockaddr_in sin;
    char host[64];
    const char *colon = strrchr(s, ':');
    long port = 0;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    if (colon) {
        size_t n = (size_t)(colon - s);
        if (n >= sizeof host)
            die("bad address %s", s);
        memcpy(host, s, n);
        host[n] = 0;
        char *end;
        port = strtol(colon + 1, &end, 10);
        if (*end || port < 0 || port > 65535)
            die("bad port in %s", s);
    } else {
        if (!allow_noport)
            die("address %s needs :PORT", s);
        snprintf(host, sizeof host, "%s", s);
    }
    if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
        die("bad IPv4 address %s", s);
    sin.sin_port = htons((uint16_t)port);
    return sin;
}

static const char *fmt_addr(const struct sockaddr_in *sin, char *buf, size_t n)
{
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof ip);
    snprintf(buf, n, "%s:%u", ip, ntohs(sin->sin_port));
    return buf;
}

static unsigned long parse_ulong(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || !*s)
        die("bad %s: %s", what, s);
    return v;
}

/* Applies SO_SNDBUF/SO_RCVBUF.  The kernel doubles the value and RDS budgets
 * half of the result, so the requested value is the payload budget - as long as
 * net.core.[wr]mem_max is at least that large (the guest init raises both). */
static void set_bufs(int fd, int snd, int rcv)
{
    if (snd > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof snd) < 0)
        die("SO_SNDBUF %d: %s", snd, strerror(errno));
    if (rcv > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv) < 0)
        die("SO_RCVBUF %d: %s", rcv, strerror(errno));
}

static int rds_socket(const struct sockaddr_in *bind_to, int snd, int rcv)
{
    int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
    if (fd < 0)
        die("socket(AF_RDS): %s (rds module loaded?)", strerror(errno));
    set_bufs(fd, snd, rcv);
    if (bind(fd, (const struct sockaddr *)bind_to, sizeof *bind_to) < 0) {
        char b[64];
        die("bind %s: %s", fmt_addr(bind_to, b, sizeof b), strerror(errno));
    }
    return fd;
}

/* ------------------------------------------------------- payload pattern */

static void fill_pattern(unsigned char *p, size_t s, uint64_t k)
{
    unsigned char be[8];
    for (int j = 0; j < 8; j++)
        be[j] = (unsigned char)(k >> (56 - 8 * j));
    size_t head = s < 8 ? s : 8;
    /* Short messages keep the low-order end of the big-endian integer. */
    memcpy(p, be + (8 - head), head);
    unsigned km = (unsigned)(k % 251u);
    for (size_t i = 8; i < s; i++)
        p[i] = (unsigned char)((km + i % 251u) % 251u);
}

/* Reconstructs k from a message, taking the bytes a short message does not
 * carry from 'expect' (the next k this source should send). */
static uint64_t decode_k(const unsigned char *p, size_t s, uint64_t expect)
{
    size_t head = s < 8 ? s : 8;
    uint64_t k = expect;
    if (head == 0)
        return k;
    uint64_t mask = head == 8 ? ~0ull : ((1ull << (8 * head)) - 1);
    uint64_t low = 0;
    for (size_t j = 0; j < head; j++)
        low = (low << 8) | p[j];
    return (k & ~mask) | low;
}

/* Returns the offset of the first byte >= 8 that violates the pattern, or -1. */
static long check_tail(const unsigned char *p, size_t s, uint64_t k)
{
    unsigned km = (unsigned)(k % 251u);
    for (size_t i = 8; i < s; i++)
        if (p[i] != (unsigned char)((km + i % 251u) % 251u))
            return (long)i;
    return -1;
}

/* --------------------------------------------------- per-source tracking */

struct source {
    uint32_t addr;
    uint16_t port;
    uint64_t next;      /* lowest k not seen yet in order */
    uint64_t max_seen;  /* highest k seen + 1 */
    uint64_t unique;
    unsigned char *seen;   /* bitmap, MAX_TRACKED_K bits, allocated lazily */
};

static struct source *sources;
static size_t nsources;

static struct source *source_for(const struct sockaddr_in *from)
{
    for (size_t i = 0; i < nsources; i++)
        if (sources[i].addr == from->sin_addr.s_addr && sources[i].port == from->sin_port)
            return &sources[i];
    sources = realloc(sources, (nsources + 1) * sizeof *sources);
    if (!sources)
        die("out of memory");
    struct source *s = &sources[nsources++];
    memset(s, 0, sizeof *s);
    s->addr = from->sin_addr.s_addr;
    s->port = from->sin_port;
    s->seen = calloc(MAX_TRACKED_K / 8, 1);
    if (!s->seen)
        die("out of memory");
    return s;
}

struct rx_stats {
    uint64_t ok, lost, dup, reordered, corrupt, bytes, trunc;
    unsigned detail;
};

/* Classifies one received message.  Returns 1 if it was good. */
static int account(struct rx_stats *st, const struct sockaddr_in *from,
                   const unsigned char *buf, size_t len, int truncated,
                   long want_size)
{
    struct source *src = source_for(from);
    uint64_t k = decode_k(buf, len, src->next);
    char fb[64];
    st->bytes += len;
    if (truncated || len > RDS_MAX_MSG) {
        st->trunc++;
        st->corrupt++;
        if (st->detail++ < MAX_DETAIL_LINES)
            out("RECV bad kind=truncated from=%s len=%zu", fmt_addr(from, fb, sizeof fb), len);
        return 0;
    }
    long bad = check_tail(buf, len, k);
    if (bad >= 0 || k >= MAX_TRACKED_K || (want_size >= 0 && (size_t)want_size != len)) {
        st->corrupt++;
        if (st->detail++ < MAX_DETAIL_LINES)
            out("RECV bad kind=corrupt from=%s k=%" PRIu64 " len=%zu want_len=%ld offset=%ld",
                fmt_addr(from, fb, sizeof fb), k, len, want_size, bad);
        return 0;
    }
    if (src->seen[k / 8] & (1u << (k % 8))) {
        st->dup++;
        if (st->detail++ < MAX_DETAIL_LINES)
            out("RECV bad kind=duplicate from=%s k=%" PRIu64, fmt_addr(from, fb, sizeof fb), k);
        return 0;
    }
    src->seen[k / 8] |= (unsigned char)(1u << (k % 8));
    src->unique++;
    int good = 1;
    if (k < src->max_seen) {
        /* Arrived after a higher k: counted once as reordered. */
        st->reordered++;
        good = 0;
        if (st->detail++ < MAX_DETAIL_LINES)
            out("RECV bad kind=reordered from=%s k=%" PRIu64 " after=%" PRIu64,
                fmt_addr(from, fb, sizeof fb), k, src->max_seen - 1);
    } else {
        if (k > src->max_seen && st->detail++ < MAX_DETAIL_LINES)
            out("RECV gap from=%s k=%" PRIu64 " expected=%" PRIu64,
                fmt_addr(from, fb, sizeof fb), k, src->max_seen);
        src->max_seen = k + 1;
    }
    while (src->next < MAX_TRACKED_K && (src->seen[src->next / 8] & (1u << (src->next % 8))))
        src->next++;
    if (good)
        st->ok++;
    return good;
}

/* Lost = holes below the highest k seen, per source. */
static void finish_lost(struct rx_stats *st)
{
    st->lost = 0;
    for (size_t i = 0; i < nsources; i++)
        st->lost += sources[i].max_seen - sources[i].unique;
}

/* ------------------------------------------------------------- watchdog */

static volatile sig_atomic_t alarmed;
static void on_alarm(int sig)
{
    (void)sig;
    alarmed = 1;
}

/* SIGALRM without SA_RESTART: a blocked send/recv returns EINTR, so every mode
 * can end with its summary line instead of hanging (e.g. a 6.1 kernel waiting
 * for a probe pong that never comes). */
static void arm_alarm(unsigned seconds)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    alarm(seconds);
}

/* SIGTERM/SIGINT end echo/stall loops cleanly (the harness kills agents). */
static volatile sig_atomic_t stopping;
static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}
static void arm_stop(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

/* ----------------------------------------------------------------- modes */

static int mode_echo(int argc, char **argv)
{
    if (argc < 1)
        die("usage: echo ADDR:PORT");
    struct sockaddr_in me = parse_addr(argv[0], 0);
    int fd = rds_socket(&me, 4 * RDS_MAX_MSG, 4 * RDS_MAX_MSG);
    unsigned char *buf = malloc(RX_BUF);
    char a[64], b[64];
    uint64_t n = 0, errors = 0;
    arm_stop();
    out("ECHO ready addr=%s", fmt_addr(&me, a, sizeof a));
    while (!stopping) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t r = recvfrom(fd, buf, RX_BUF, 0, (struct sockaddr *)&from, &fl);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            die("recvfrom: %s", strerror(errno));
        }
        n++;
        ssize_t w = sendto(fd, buf, (size_t)r, 0, (struct sockaddr *)&from, sizeof from);
        int e = w < 0 ? errno : 0;
        if (w < 0)
            errors++;
        out("ECHO n=%" PRIu64 " from=%s len=%zd rc=%s", n, fmt_addr(&from, b, sizeof b), r, errname(e));
    }
    out("ECHO done msgs=%" PRIu64 " errors=%" PRIu64, n, errors);
    return 0;
}

/*
 * Closing an RDS socket discards every message it still has queued or unacknowledged (the kernel's semantics), and a
 * path that is down, say while the kernel waits to reconnect to a peer with a larger address, can hold messages for a
 * second or more. So a sender waits, bounded, until the kernel's own send and retransmit tables hold nothing from its
 * port. Returns the number of messages still held when it gave up (0 = drained).
 */
/* The kernel's tables of messages it still holds: queued (not yet sent), and sent but unacknowledged. */
static const int HELD_TABLES[] = {RDS_INFO_SEND_MESSAGES, RDS_INFO_RETRANS_MESSAGES};

static unsigned held_messages(int fd, uint16_t port_be)
{
    unsigned held = 0;
    for (int t = 0; t < 2; t++) {
        socklen_t len;
        unsigned each;
        unsigned char *buf = rds_info(fd, HELD_TABLES[t], &len, &each);
        /* struct rds_info_message: u64 seq, u32 len, be32 laddr, be32 faddr, be16 lport, be16 fport, u8, u8 */
        for (socklen_t off = 0; each >= 24 && off + each <= len; off += each) {
            uint16_t lport;
            memcpy(&lport, buf + off + 20, 2);
            if (lport == port_be)
                held++;
        }
        free(buf);
    }
    return held;
}

static unsigned wait_drained(int fd, unsigned timeout_s)
{
    struct sockaddr_in me;
    socklen_t l = sizeof me;
    if (getsockname(fd, (struct sockaddr *)&me, &l) < 0)
        return 0;
    uint64_t deadline = now_us() + (uint64_t)timeout_s * 1000000u;
    unsigned held;
    while ((held = held_messages(fd, me.sin_port)) != 0 && now_us() < deadline)
        usleep(10000);
    return held;
}

/* Sends one pattern message k of size s, blocking.  Returns 0 or errno. */
static int send_one(int fd, const struct sockaddr_in *to, unsigned char *buf, size_t s, uint64_t k)
{
    fill_pattern(buf, s, k);
    for (;;) {
        ssize_t w = sendto(fd, buf, s, 0, (const struct sockaddr *)to, sizeof *to);
        if (w >= 0)
            return 0;
        if (errno == EINTR && !alarmed)
            continue;
        return errno;
    }
}

static size_t parse_sizes(const char *list, size_t *sizes, size_t max)
{
    size_t n = 0;
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
        sizes[n++] = parse_ulong(t, "size");
    free(copy);
    return n;
}

/* send ADDR:PORT DEST:PORT COUNT SIZE [TIMEOUT_S] */
static int mode_send(int argc, char **argv)
{
    if (argc < 4)
        die("usage: send ADDR:PORT DEST:PORT COUNT SIZE|MIN-MAX [TIMEOUT_S]");
    struct sockaddr_in me = parse_addr(argv[0], 0), to = parse_addr(argv[1], 0);
    uint64_t count = parse_ulong(argv[2], "count");
    /* SIZE, or MIN-MAX for mixed sizes: message k then has a size spread over the range by a fixed hash of k. */
    size_t min_size, size;
    char *dash = strchr(argv[3], '-');
    if (dash) {
        *dash = 0;
        min_size = parse_ulong(argv[3], "size");
        size = parse_ulong(dash + 1, "size");
        if (size < min_size)
            die("size range %zu-%zu is empty", min_size, size);
    } else {
        min_size = size = parse_ulong(argv[3], "size");
    }
    unsigned timeout = argc > 4 ? (unsigned)parse_ulong(argv[4], "timeout") : 120;
    /* Budget must hold at least one message; more lets the kernel pipeline. */
    size_t budget = size * 4 < 256 * 1024 ? 256 * 1024 : size * 4;
    int fd = rds_socket(&me, (int)budget, 0);
    unsigned char *buf = malloc(size ? size : 1);
    char a[64], b[64];
    uint64_t sent = 0, errors = 0, k = 0;
    int last_err = 0;
    out("SEND start from=%s to=%s count=%" PRIu64 " size=%zu-%zu",
        fmt_addr(&me, a, sizeof a), fmt_addr(&to, b, sizeof b), count, min_size, size);
    arm_alarm(timeout);
    uint64_t t0 = now_us();
    for (uint64_t i = 0; i < count && !alarmed; i++) {
        size_t sk = min_size + (size_t)((k * 2654435761u) % (size - min_size + 1));
        int e = send_one(fd, &to, buf, sk, k);
        if (e == 0) {
            sent++;
            k++;   /* k only advances on success so a receiver sees no gap */
        } else {
            errors++;
            if (errors <= MAX_DETAIL_LINES)
                out("SEND error k=%" PRIu64 " errno=%s", k, errname(e));
            last_err = e;
        }
    }
    uint64_t dt = now_us() - t0;
    out("SEND done sent=%" PRIu64 " errors=%" PRIu64 " timeout=%d last_errno=%s us=%" PRIu64,
        sent, errors, alarmed ? 1 : 0, errname(last_err), dt);
    unsigned held = wait_drained(fd, 30);
    if (held)
        out("SEND warning held=%u messages still queued at close: they are discarded", held);
    close(fd);
    return (errors || sent != count) ? 1 : 0;
}

/*
 * send-nb ADDR:PORT DEST:PORT COUNT SIZE [TIMEOUT_S] - like send, but non-blocking (MSG_DONTWAIT): ENOBUFS (the
 * destination port is congested) and EAGAIN (the send buffer is full) are counted and the same message is tried
 * again after a short pause, as an application of the kernel's RDS would.
 */
static int mode_send_nb(int argc, char **argv)
{
    if (argc < 4)
        die("usage: send-nb ADDR:PORT DEST:PORT COUNT SIZE [TIMEOUT_S]");
    struct sockaddr_in me = parse_addr(argv[0], 0), to = parse_addr(argv[1], 0);
    uint64_t count = parse_ulong(argv[2], "count");
    size_t size = parse_ulong(argv[3], "size");
    unsigned timeout = argc > 4 ? (unsigned)parse_ulong(argv[4], "timeout") : 120;
    size_t budget = size * 4 < 256 * 1024 ? 256 * 1024 : size * 4;
    int fd = rds_socket(&me, (int)budget, 0);
    unsigned char *buf = malloc(size ? size : 1);
    char a[64], b[64];
    uint64_t k = 0, enobufs = 0, eagain = 0, other = 0;
    out("SEND-NB start from=%s to=%s count=%" PRIu64 " size=%zu",
        fmt_addr(&me, a, sizeof a), fmt_addr(&to, b, sizeof b), count, size);
    arm_alarm(timeout);
    while (k < count && !alarmed) {
        fill_pattern(buf, size, k);
        ssize_t w = sendto(fd, buf, size, MSG_DONTWAIT, (const struct sockaddr *)&to, sizeof to);
        if (w >= 0) {
            k++;
            continue;
        }
        if (errno == ENOBUFS)
            enobufs++;
        else if (errno == EAGAIN)
            eagain++;
        else if (errno != EINTR) {
            other++;
            out("SEND-NB error k=%" PRIu64 " errno=%s", k, errname(errno));
            break;
        }
        usleep(1000);
    }
    out("SEND-NB done sent=%" PRIu64 " enobufs=%" PRIu64 " eagain=%" PRIu64 " errors=%" PRIu64 " timeout=%d",
        k, enobufs, eagain, other, alarmed ? 1 : 0);
    unsigned held = wait_drained(fd, 30);
    if (held)
        out("SEND-NB warning held=%u messages still queued at close: they are discarded", held);
    close(fd);
    return (other || k != count) ? 1 : 0;
}

/* recv ADDR:PORT COUNT [TIMEOUT_S] */
static int mode_recv(int argc, char **argv)
{
    if (argc < 2)
        die("usage: recv ADDR:PORT COUNT [TIMEOUT_S]");
    struct sockaddr_in me = parse_addr(argv[0], 0);
    uint64_t count = parse_ulong(argv[1], "count");
    unsigned timeout = argc > 2 ? (unsigned)parse_ulong(argv[2], "timeout") : 60;
    int fd = rds_socket(&me, 0, 4 * RDS_MAX_MSG);
    unsigned char *buf = malloc(RX_BUF);
    struct rx_stats st;
    uint64_t got = 0, t_first = 0, t_last = 0;
    char a[64];
    memset(&st, 0, sizeof st);
    out("RECV ready addr=%s count=%" PRIu64 " timeout=%u", fmt_addr(&me, a, sizeof a), count, timeout);
    arm_alarm(timeout);
    arm_stop();
    while (got < count && !alarmed && !stopping) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        struct iovec iov = { buf, RX_BUF };
        struct msghdr mh = { .msg_name = &from, .msg_namelen = fl, .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t r = recvmsg(fd, &mh, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            die("recvmsg: %s", strerror(errno));
        }
        got++;
        t_last = now_us();
        if (got == 1)
            t_first = t_last;
        account(&st, &from, buf, (size_t)r, (mh.msg_flags & MSG_TRUNC) != 0, -1);
    }
    finish_lost(&st);
    uint64_t missing = count > got ? count - got : 0;
    uint64_t bad = st.lost + st.dup + st.reordered + st.corrupt;
    /* us: from the first message to the last, for throughput (the wait for the first is not counted) */
    out("RECV done ok=%" PRIu64 " bad=%" PRIu64 " received=%" PRIu64 " missing=%" PRIu64
        " lost=%" PRIu64 " duplicate=%" PRIu64 " reordered=%" PRIu64 " corrupt=%" PRIu64
        " bytes=%" PRIu64 " sources=%zu timeout=%d us=%" PRIu64,
        st.ok, bad, got, missing, st.lost, st.dup, st.reordered, st.corrupt, st.bytes, nsources,
        alarmed ? 1 : 0, t_last - t_first);
    return (bad || missing) ? 1 : 0;
}

/* sizes-send ADDR:PORT DEST:PORT [SIZES] [TIMEOUT_S] - message k has size sizes[k]. */
static int mode_sizes_send(int argc, char **argv)
{
    if (argc < 2)
        die("usage: sizes-send ADDR:PORT DEST:PORT [S1,S2,...] [TIMEOUT_S]");
    struct sockaddr_in me = parse_addr(argv[0], 0), to = parse_addr(argv[1], 0);
    size_t sizes[64], n;
    if (argc > 2) {
        n = parse_sizes(argv[2], sizes, 64);
    } else {
        n = sizeof default_sizes / sizeof default_sizes[0];
        memcpy(sizes, default_sizes, sizeof default_sizes);
    }
    unsigned timeout = argc > 3 ? (unsigned)parse_ulong(argv[3], "timeout") : 120;
    size_t max = 0;
    for (size_t i = 0; i < n; i++)
        if (sizes[i] > max)
            max = sizes[i];
    /* Twice the largest message so a 1 MiB one never waits on the budget; an
     * oversized one (> 1 MiB) still gets EMSGSIZE from the 1 MiB hard limit. */
    size_t budget = 2 * (max > RDS_MAX_MSG ? RDS_MAX_MSG : max);
    if (budget < 256 * 1024)
        budget = 256 * 1024;
    int fd = rds_socket(&me, (int)budget, 0);
    unsigned char *buf = malloc(max ? max : 1);
    char a[64], b[64];
    uint64_t sent = 0, errors = 0, k = 0;
    out("SIZES send-start from=%s to=%s n=%zu", fmt_addr(&me, a, sizeof a), fmt_addr(&to, b, sizeof b), n);
    arm_alarm(timeout);
    for (size_t i = 0; i < n && !alarmed; i++) {
        int e = send_one(fd, &to, buf, sizes[i], k);
        out("SIZES tx k=%" PRIu64 " size=%zu rc=%s", k, sizes[i], errname(e));
        if (e == 0) {
            sent++;
            k++;
        } else {
            errors++;
        }
    }
    out("SIZES send-done sent=%" PRIu64 " errors=%" PRIu64 " timeout=%d", sent, errors, alarmed ? 1 : 0);
    unsigned held = wait_drained(fd, 30);
    if (held)
        out("SIZES warning held=%u messages still queued at close: they are discarded", held);
    close(fd);
    return errors ? 1 : 0;
}

/* sizes-recv ADDR:PORT [SIZES] [TIMEOUT_S] - expects exactly the list, in order. */
static int mode_sizes_recv(int argc, char **argv)
{
    if (argc < 1)
        die("usage: sizes-recv ADDR:PORT [S1,S2,...] [TIMEOUT_S]");
    struct sockaddr_in me = parse_addr(argv[0], 0);
    size_t sizes[64], n;
    if (argc > 1) {
        n = parse_sizes(argv[1], sizes, 64);
    } else {
        n = sizeof default_sizes / sizeof default_sizes[0];
        memcpy(sizes, default_sizes, sizeof default_sizes);
    }
    unsigned timeout = argc > 2 ? (unsigned)parse_ulong(argv[2], "timeout") : 60;
    int fd = rds_socket(&me, 0, 4 * RDS_MAX_MSG);
    unsigned char *buf = malloc(RX_BUF);
    struct rx_stats st;
    size_t got = 0;
    char a[64], f[64];
    memset(&st, 0, sizeof st);
    out("SIZES recv-ready addr=%s n=%zu timeout=%u", fmt_addr(&me, a, sizeof a), n, timeout);
    arm_alarm(timeout);
    arm_stop();
    while (got < n && !alarmed && !stopping) {
        struct sockaddr_in from;
        struct iovec iov = { buf, RX_BUF };
        struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t r = recvmsg(fd, &mh, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            die("recvmsg: %s", strerror(errno));
        }
        struct source *src = source_for(&from);
        /* The expected size is the one belonging to this message's own k. */
        uint64_t k = decode_k(buf, (size_t)r, src->next);
        long want = k < n ? (long)sizes[k] : -2;
        int ok = account(&st, &from, buf, (size_t)r, (mh.msg_flags & MSG_TRUNC) != 0, want);
        out("SIZES rx k=%" PRIu64 " size=%zd from=%s ok=%d", k, r, fmt_addr(&from, f, sizeof f), ok);
        got++;
    }
    finish_lost(&st);
    uint64_t bad = st.lost + st.dup + st.reordered + st.corrupt;
    uint64_t missing = n > got ? n - got : 0;
    out("RECV done ok=%" PRIu64 " bad=%" PRIu64 " received=%zu missing=%" PRIu64 " lost=%" PRIu64
        " duplicate=%" PRIu64 " reordered=%" PRIu64 " corrupt=%" PRIu64 " bytes=%" PRIu64 " timeout=%d",
        st.ok, bad, got, missing, st.lost, st.dup, st.reordered, st.corrupt, st.bytes, alarmed ? 1 : 0);
    return (bad || missing) ? 1 : 0;
}

/* Source address the kernel would route from, found with a connected UDP socket
 * (no packet is sent). */
static struct in_addr route_source(const struct sockaddr_in *dst)
{
    struct sockaddr_in d = *dst, me;
    socklen_t ml = sizeof me;
    d.sin_port = htons(1);
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    if (u < 0 || connect(u, (struct sockaddr *)&d, sizeof d) < 0 ||
        getsockname(u, (struct sockaddr *)&me, &ml) < 0)
        die("cannot find a source address for the ping: %s", strerror(errno));
    close(u);
    return me.sin_addr;
}

/* ping DEST [COUNT] [SRC] [TIMEOUT_S_PER_PING] */
static int mode_ping(int argc, char **argv)
{
    if (argc < 1)
        die("usage: ping DEST [COUNT] [SRC] [TIMEOUT_S]");
    struct sockaddr_in dst = parse_addr(argv[0], 1);
    dst.sin_port = 0;   /* port 0 = the peer's RDS ping responder */
    unsigned count = argc > 1 ? (unsigned)parse_ulong(argv[1], "count") : 3;
    struct sockaddr_in me;
    memset(&me, 0, sizeof me);
    me.sin_family = AF_INET;
    me.sin_addr = argc > 2 ? parse_addr(argv[2], 1).sin_addr : route_source(&dst);
    unsigned per = argc > 3 ? (unsigned)parse_ulong(argv[3], "timeout") : 5;
    int fd = rds_socket(&me, 0, 0);
    struct sockaddr_in bound;
    socklen_t bl = sizeof bound;
    getsockname(fd, (struct sockaddr *)&bound, &bl);
    char a[64], b[64];
    unsigned replies = 0;
    out("PING start from=%s to=%s count=%u", fmt_addr(&bound, a, sizeof a), fmt_addr(&dst, b, sizeof b), count);
    /* The whole run is bounded; a sendto blocked in the kernel's path
     * selection is interrupted by the alarm. */
    arm_alarm(per * count + 5);
    for (unsigned i = 0; i < count && !alarmed; i++) {
        uint64_t t0 = now_us();
        if (sendto(fd, "", 0, 0, (struct sockaddr *)&dst, sizeof dst) < 0) {
            out("PING seq=%u error=%s", i, errname(errno));
            continue;
        }
        int answered = 0;
        while (!alarmed) {
            int left_ms = (int)((int64_t)per * 1000 - (int64_t)(now_us() - t0) / 1000);
            if (left_ms <= 0)
                break;
            struct pollfd pfd = { fd, POLLIN, 0 };
            int pr = poll(&pfd, 1, left_ms);
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr <= 0)
                break;
            struct sockaddr_in from;
            socklen_t fl = sizeof from;
            char tmp[16];
            ssize_t r = recvfrom(fd, tmp, sizeof tmp, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
            if (r < 0)
                continue;
            uint64_t rtt = now_us() - t0;
            out("PING seq=%u rtt_us=%" PRIu64 " from=%s len=%zd", i, rtt, fmt_addr(&from, b, sizeof b), r);
            answered = 1;
            replies++;
            break;
        }
        if (!answered)
            out("PING seq=%u timeout=1", i);
        if (i + 1 < count)
            usleep(100000);
    }
    out("PING done sent=%u replies=%u", count, replies);
    return replies == count ? 0 : 1;
}

/* stall ADDR:PORT SECONDS [RCVBUF] - bound but not reading, then drain. */
static int mode_stall(int argc, char **argv)
{
    if (argc < 2)
        die("usage: stall ADDR:PORT SECONDS [RCVBUF_BYTES]");
    struct sockaddr_in me = parse_addr(argv[0], 0);
    unsigned secs = (unsigned)parse_ulong(argv[1], "seconds");
    /* Default: leave the kernel default (budget 106496) so congestion is easy to reach. */
    int rcv = argc > 2 ? (int)parse_ulong(argv[2], "rcvbuf") : 0;
    int fd = rds_socket(&me, 0, rcv);
    unsigned char *buf = malloc(RX_BUF);
    struct rx_stats st;
    char a[64];
    memset(&st, 0, sizeof st);
    arm_stop();
    out("STALL ready addr=%s seconds=%u", fmt_addr(&me, a, sizeof a), secs);
    uint64_t end = now_us() + (uint64_t)secs * 1000000u;
    while (!stopping && now_us() < end)
        usleep(50000);
    out("STALL draining");
    uint64_t n = 0;
    /* Drain until the queue has been empty for five seconds (bounded by idle time). The last messages of a stalled
     * port come only after the kernel has cleared its congestion bit and the peer has heard of it, a round trip and
     * a wake-up later, which a machine shared with other work can stretch past a second. */
    for (;;) {
        struct pollfd pfd = { fd, POLLIN, 0 };
        int pr = poll(&pfd, 1, 5000);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            break;
        struct sockaddr_in from;
        struct iovec iov = { buf, RX_BUF };
        struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t r = recvmsg(fd, &mh, MSG_DONTWAIT);
        if (r < 0)
            continue;
        n++;
        account(&st, &from, buf, (size_t)r, (mh.msg_flags & MSG_TRUNC) != 0, -1);
    }
    finish_lost(&st);
    uint64_t bad = st.lost + st.dup + st.reordered + st.corrupt;
    out("STALL done received=%" PRIu64 " ok=%" PRIu64 " bad=%" PRIu64 " lost=%" PRIu64
        " duplicate=%" PRIu64 " reordered=%" PRIu64 " corrupt=%" PRIu64 " bytes=%" PRIu64,
        n, st.ok, bad, st.lost, st.dup, st.reordered, st.corrupt, st.bytes);
    return bad ? 1 : 0;
}

/* Fetches an RDS_INFO_* table; the kernel answers ENOSPC with the needed size. */
static void *rds_info(int fd, int opt, socklen_t *len, unsigned *each)
{
    socklen_t l = 4096;
    for (int tries = 0; tries < 8; tries++) {
        void *buf = malloc(l);
        socklen_t got = l;
        int r = getsockopt(fd, SOL_RDS, opt, buf, &got);
        if (r >= 0) {
            *each = (unsigned)r;   /* success returns the size of one item */
            *len = got;
            return buf;
        }
        free(buf);
        if (errno != ENOSPC)
            die("getsockopt(SOL_RDS, %d): %s", opt, strerror(errno));
        l = got > l ? got : l * 2;
    }
    die("getsockopt(SOL_RDS, %d): buffer never large enough", opt);
    return NULL;
}

/* counters - one line per kernel RDS counter (core + TCP transport). */
static int mode_counters(void)
{
    int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
    if (fd < 0)
        die("socket(AF_RDS): %s", strerror(errno));
    socklen_t len;
    unsigned each;
    unsigned char *buf = rds_info(fd, RDS_INFO_COUNTERS, &len, &each);
    /* Each item: char name[32]; uint64_t value (host order). */
    if (each != 40)
        die("unexpected counter item size %u", each);
    for (socklen_t off = 0; off + 40 <= len; off += 40) {
        char name[33];
        uint64_t v;
        memcpy(name, buf + off, 32);
        name[32] = 0;
        memcpy(&v, buf + off + 32, 8);
        out("COUNTER %s=%" PRIu64, name, v);
    }
    out("COUNTERS done n=%u", (unsigned)(len / 40));
    return 0;
}

/* conns - RDS connections, the TCP sockets under them, and the messages the kernel still holds. */
static int mode_conns(void)
{
    int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
    if (fd < 0)
        die("socket(AF_RDS): %s", strerror(errno));
    socklen_t len;
    unsigned each;
    unsigned char *buf = rds_info(fd, RDS_INFO_CONNECTIONS, &len, &each);
    /* rds_info_connection: u64 next_tx, u64 next_rx, be32 laddr, be32 faddr,
     * char transport[16], u8 flags, u8 tos (packed). */
    for (socklen_t off = 0; each >= 42 && off + each <= len; off += each) {
        uint64_t tx, rx;
        char l[INET_ADDRSTRLEN], f[INET_ADDRSTRLEN], tr[17];
        memcpy(&tx, buf + off, 8);
        memcpy(&rx, buf + off + 8, 8);
        inet_ntop(AF_INET, buf + off + 16, l, sizeof l);
        inet_ntop(AF_INET, buf + off + 20, f, sizeof f);
        memcpy(tr, buf + off + 24, 16);
        tr[16] = 0;
        out("CONN local=%s peer=%s transport=%s next_tx=%" PRIu64 " next_rx=%" PRIu64 " flags=0x%02x",
            l, f, tr, tx, rx, buf[off + 40]);
    }
    free(buf);
    buf = rds_info(fd, RDS_INFO_TCP_SOCKETS, &len, &each);
    /* rds_info_tcp_socket: be32 laddr, be16 lport, be32 faddr, be16 fport,
     * u64 hdr_rem, u64 data_rem, u32 sent_nxt, expected_una, seen_una (packed). */
    for (socklen_t off = 0; each >= 40 && off + each <= len; off += each) {
        char l[INET_ADDRSTRLEN], f[INET_ADDRSTRLEN];
        uint16_t lp, fp;
        inet_ntop(AF_INET, buf + off, l, sizeof l);
        memcpy(&lp, buf + off + 4, 2);
        inet_ntop(AF_INET, buf + off + 6, f, sizeof f);
        memcpy(&fp, buf + off + 10, 2);
        out("TCPSOCK local=%s:%u peer=%s:%u", l, ntohs(lp), f, ntohs(fp));
    }
    free(buf);
    /* Messages the kernel still holds: queued (not yet sent) and sent but unacknowledged. A few lines at most; a
     * stuck path shows here as messages that stay. */
    static const char *names[] = {"QUEUED", "UNACKED"};
    for (int t = 0; t < 2; t++) {
        buf = rds_info(fd, HELD_TABLES[t], &len, &each);
        unsigned n = 0;
        /* struct rds_info_message: u64 seq, u32 len, be32 laddr, be32 faddr, be16 lport, be16 fport, u8, u8 */
        for (socklen_t off = 0; each >= 24 && off + each <= len; off += each, n++) {
            if (n >= 5)
                continue;
            uint64_t seq;
            uint32_t mlen;
            uint16_t lp, fp;
            memcpy(&seq, buf + off, 8);
            memcpy(&mlen, buf + off + 8, 4);
            memcpy(&lp, buf + off + 20, 2);
            memcpy(&fp, buf + off + 22, 2);
            out("%s seq=%" PRIu64 " len=%u port %u -> %u", names[t], seq, mlen, ntohs(lp), ntohs(fp));
        }
        out("%s total=%u", names[t], n);
        free(buf);
    }
    close(fd);
    out("CONNS done");
    return 0;
}

/* dmesg - the kernel log through syslog(2), so no busybox applet is needed. */
static int mode_dmesg(void)
{
    int n = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
    if (n <= 0)
        n = 1 << 20;
    char *buf = malloc((size_t)n + 1);
    int r = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, n);
    if (r < 0)
        die("klogctl: %s", strerror(errno));
    fwrite(buf, 1, (size_t)r, stdout);
    if (r > 0 && buf[r - 1] != '\n')
        fputc('\n', stdout);
    fflush(stdout);
    return 0;
}

/* ---------------------------------------------- abort RDS TCP connections */

/* Sends one netlink request and returns the reply length (bounded by poll). */
static ssize_t nl_xfer(int nl, const void *req, size_t len, char *rbuf, size_t rlen)
{
    struct sockaddr_nl kern = { .nl_family = AF_NETLINK };
    if (sendto(nl, req, len, 0, (struct sockaddr *)&kern, sizeof kern) < 0)
        return -1;
    struct pollfd pfd = { nl, POLLIN, 0 };
    if (poll(&pfd, 1, 2000) <= 0)
        return -1;
    return recv(nl, rbuf, rlen, 0);
}

/* Destroys (RST) every TCP socket with port 16385 on either end, for both
 * address families: the kernel keeps accepted RDS sockets as v4-mapped IPv6.
 * This is how a test aborts the guest's RDS connections without ss(8). */
/* kill-tcp [PORT] - abort every RDS/TCP socket, or only the one whose far end uses TCP port PORT */
static int mode_kill_tcp(int argc, char **argv)
{
    unsigned only = argc > 0 ? (unsigned)parse_ulong(argv[0], "port") : 0;
    int nl = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG);
    if (nl < 0)
        die("netlink: %s", strerror(errno));
    static char rbuf[65536];
    struct inet_diag_sockid victims[256];
    unsigned char fams[256];
    int nv = 0, destroyed = 0, failed = 0;
    int families[2] = { AF_INET, AF_INET6 };
    for (int fi = 0; fi < 2; fi++) {
        struct {
            struct nlmsghdr nh;
            struct inet_diag_req_v2 r;
        } req;
        memset(&req, 0, sizeof req);
        req.nh.nlmsg_len = sizeof req;
        req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
        req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
        req.r.sdiag_family = (uint8_t)families[fi];
        req.r.sdiag_protocol = IPPROTO_TCP;
        req.r.idiag_states = ~0u & ~(1u << 10);   /* all but LISTEN */
        ssize_t n = nl_xfer(nl, &req, sizeof req, rbuf, sizeof rbuf);
        int done = 0;
        for (int rounds = 0; n > 0 && !done && rounds < 64; rounds++) {
            for (struct nlmsghdr *h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
                if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                    done = 1;
                    break;
                }
                struct inet_diag_msg *m = NLMSG_DATA(h);
                unsigned sport = ntohs(m->id.idiag_sport), dport = ntohs(m->id.idiag_dport);
                unsigned far = sport == RDS_TCP_PORT ? dport : sport;
                if ((sport == RDS_TCP_PORT || dport == RDS_TCP_PORT) && (only == 0 || far == only) && nv < 256) {
                    fams[nv] = m->idiag_family;
                    victims[nv++] = m->id;
                }
            }
            if (!done) {
                struct pollfd pfd = { nl, POLLIN, 0 };
                if (poll(&pfd, 1, 2000) <= 0)
                    break;
                n = recv(nl, rbuf, sizeof rbuf, 0);
            }
        }
    }
    for (int i = 0; i < nv; i++) {
        struct {
            struct nlmsghdr nh;
            struct inet_diag_req_v2 r;
        } req;
        memset(&req, 0, sizeof req);
        req.nh.nlmsg_len = sizeof req;
        req.nh.nlmsg_type = SOCK_DESTROY;
        req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        req.r.sdiag_family = fams[i];
        req.r.sdiag_protocol = IPPROTO_TCP;
        req.r.idiag_states = ~0u;
        req.r.id = victims[i];
        ssize_t n = nl_xfer(nl, &req, sizeof req, rbuf, sizeof rbuf);
        int err = -1;
        if (n >= (ssize_t)sizeof(struct nlmsghdr)) {
            struct nlmsghdr *h = (struct nlmsghdr *)rbuf;
            if (h->nlmsg_type == NLMSG_ERROR)
                err = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
        }
        char l[INET6_ADDRSTRLEN], f[INET6_ADDRSTRLEN];
        inet_ntop(fams[i], victims[i].idiag_src, l, sizeof l);
        inet_ntop(fams[i], victims[i].idiag_dst, f, sizeof f);
        out("KILLTCP local=%s:%u peer=%s:%u rc=%s", l, ntohs(victims[i].idiag_sport), f,
            ntohs(victims[i].idiag_dport), err == 0 ? "OK" : (err > 0 ? strerror(err) : "noreply"));
        if (err == 0)
            destroyed++;
        else
            failed++;
    }
    out("KILLTCP done found=%d destroyed=%d failed=%d", nv, destroyed, failed);
    return failed ? 1 : 0;
}

static void usage(void)
{
    fputs("usage: rdsagent MODE ARGS...\n"
          "  echo ADDR:PORT                              echo every message back to its source\n"
          "  send ADDR:PORT DEST:PORT COUNT SIZE|MIN-MAX [TMO]  send COUNT pattern messages\n"
          "  send-nb ADDR:PORT DEST:PORT COUNT SIZE [TMO]  the same, non-blocking: counts ENOBUFS/EAGAIN and retries\n"
          "  recv ADDR:PORT COUNT [TMO]                  receive and verify COUNT messages\n"
          "  sizes-send ADDR:PORT DEST:PORT [S,..] [TMO] send one message per size (default 0,1,100,4096,65536,1048576)\n"
          "  sizes-recv ADDR:PORT [S,..] [TMO]           receive and verify that list\n"
          "  ping DEST [COUNT] [SRC] [TMO_PER_PING]      RDS ping (0-byte message to port 0)\n"
          "  stall ADDR:PORT SECONDS [RCVBUF]            bind, do not read for SECONDS, then drain\n"
          "  counters | conns | dmesg | kill-tcp [PORT]  kernel RDS counters / connections / log / abort RDS TCP sockets\n"
          "  pattern K SIZE                              print the pattern bytes in hex (for cross-checking)\n",
          stderr);
    exit(2);
}

/* pattern K SIZE - hex dump of one pattern message, so Java tests can compare. */
static int mode_pattern(int argc, char **argv)
{
    if (argc < 2)
        usage();
    uint64_t k = strtoull(argv[0], NULL, 10);
    size_t s = parse_ulong(argv[1], "size");
    unsigned char *p = malloc(s ? s : 1);
    fill_pattern(p, s, k);
    fputs("RDSAGENT PATTERN ", stdout);
    for (size_t i = 0; i < s; i++)
        printf("%02x", p[i]);
    putchar('\n');
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    /* Line-buffered either way: results are read while the agent runs. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *m = argv[1];
    int ac = argc - 2;
    char **av = argv + 2;
    if (!strcmp(m, "echo")) return mode_echo(ac, av);
    if (!strcmp(m, "send")) return mode_send(ac, av);
    if (!strcmp(m, "send-nb")) return mode_send_nb(ac, av);
    if (!strcmp(m, "recv")) return mode_recv(ac, av);
    if (!strcmp(m, "sizes-send")) return mode_sizes_send(ac, av);
    if (!strcmp(m, "sizes-recv")) return mode_sizes_recv(ac, av);
    if (!strcmp(m, "ping")) return mode_ping(ac, av);
    if (!strcmp(m, "stall")) return mode_stall(ac, av);
    if (!strcmp(m, "counters")) return mode_counters();
    if (!strcmp(m, "conns")) return mode_conns();
    if (!strcmp(m, "dmesg")) return mode_dmesg();
    if (!strcmp(m, "kill-tcp")) return mode_kill_tcp(ac, av);
    if (!strcmp(m, "pattern")) return mode_pattern(ac, av);
    usage();
    return 2;
}
