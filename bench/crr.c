/*
 * A connect-per-request loop in plain C, the reference bench/net.sh puts
 * beside `net.crr` (netperf's TCP_CRR is not in Debian's main archive).
 * One transaction is what net.crr does on the wire: connect, send a
 * request, read the whole response, wait for the server's close (it
 * closes first, so that TIME_WAIT stays on its side) and close.
 *
 *   crr server ADDR PORT HEADER REQ RESP   one thread: accept, read
 *                                          HEADER + REQ bytes, write RESP
 *                                          bytes, close; until killed
 *   crr client ADDR PORT HEADER REQ RESP SECONDS
 *                                          one thread: transactions for
 *                                          SECONDS, then prints
 *                                          `transactions N seconds S`
 *
 * HEADER is the bytes net.crr sends before its request (its protocol's
 * 16-byte connection header), so that both move the same bytes.
 * Build: cc -O2 -o crr bench/crr.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Reads exactly n bytes; 0 on success. */
static int read_all(int fd, char *buf, size_t n) {
    while (n > 0) {
        ssize_t got = read(fd, buf, n);
        if (got <= 0)
            return -1;
        buf += got;
        n -= (size_t)got;
    }
    return 0;
}

static int write_all(int fd, const char *buf, size_t n) {
    while (n > 0) {
        ssize_t put = write(fd, buf, n);
        if (put <= 0)
            return -1;
        buf += put;
        n -= (size_t)put;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 7 || (strcmp(argv[1], "server") && strcmp(argv[1], "client")) ||
        (!strcmp(argv[1], "client") && argc < 8)) {
        fprintf(stderr, "usage: crr server ADDR PORT HEADER REQ RESP | "
                        "crr client ADDR PORT HEADER REQ RESP SECONDS\n");
        return 2;
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[3]))};
    if (inet_pton(AF_INET, argv[2], &addr.sin_addr) != 1) {
        fprintf(stderr, "crr: %s is not an IPv4 address\n", argv[2]);
        return 2;
    }
    size_t in = (size_t)atol(argv[4]) + (size_t)atol(argv[5]);
    size_t out = (size_t)atol(argv[6]);
    char *buf = calloc(1, (in > out ? in : out) + 1);
    int one = 1;
    if (!buf)
        return 1;
    if (!strcmp(argv[1], "server")) {
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) || listen(lfd, 1024)) {
            perror("crr: bind/listen");
            return 1;
        }
        for (;;) {
            int fd = accept(lfd, NULL, NULL);
            if (fd < 0)
                continue;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            if (read_all(fd, buf, in) == 0)
                write_all(fd, buf, out);
            close(fd);
        }
    }
    /* The client: the request is the header and the request bytes. */
    size_t req = in;
    size_t resp = out;
    double seconds = atof(argv[7]);
    double start = now(), end = start + seconds, t = start;
    unsigned long done = 0;
    while (t < end) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) || write_all(fd, buf, req) ||
            read_all(fd, buf, resp)) {
            perror("crr: transaction");
            close(fd);
            return 1;
        }
        /* The server closes first, as net.crr's does: wait for its end. */
        char end_byte;
        (void)read(fd, &end_byte, 1);
        close(fd);
        done++;
        t = now();
    }
    printf("transactions %lu seconds %.6f\n", done, t - start);
    return 0;
}
