/*
 * A bulk TCP stream in plain C, the floor bench/net.sh puts beside
 * `net.stream` and iperf3: the least a program can do to move the bytes,
 * so that a gap between sledge and iperf3 can be told to be either's own
 * cost or the network's.
 *
 *   stream server ADDR PORT MSG             accepts connections; a thread
 *                                           per connection reads MSG bytes
 *                                           at a time and discards them
 *                                           until the client closes; until
 *                                           killed
 *   stream client ADDR PORT MSG STREAMS SECONDS
 *                                           STREAMS connections, a thread
 *                                           each writing MSG bytes at a
 *                                           time for SECONDS (blocking, no
 *                                           TCP_NODELAY, default buffers:
 *                                           iperf3's default test), then
 *                                           prints `gbit_per_sec G`; a
 *                                           failed send (the server gone)
 *                                           is an error and exit status 1
 *
 * The rate is what net.stream reports: the bytes written over the
 * writers' time (every byte written is received: TCP loses none).
 * Build: cc -O2 -pthread -o stream bench/stream.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
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

static size_t msg;
static double deadline;

static void *sink(void *arg) {
    int fd = (int)(long)arg;
    char *buf = malloc(msg);
    while (buf) {
        ssize_t n = read(fd, buf, msg);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    free(buf);
    close(fd);
    return NULL;
}

struct writer {
    int fd, failed;
    double bytes, seconds;
};

static void *source(void *arg) {
    struct writer *w = arg;
    char *buf = malloc(msg);
    if (!buf)
        return NULL;
    memset(buf, 0xa5, msg);
    double start = now();
    while (now() < deadline) {
        /* MSG_NOSIGNAL: a server gone ends the stream with an error, not
           a silent SIGPIPE. */
        ssize_t n = send(w->fd, buf, msg, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            perror("stream client: send");
            w->failed = 1;
            break;
        }
        w->bytes += n;
    }
    w->seconds = now() - start;
    shutdown(w->fd, SHUT_WR);
    /* Waits for the server's close, so that every byte was read. */
    while (read(w->fd, buf, msg) > 0) {
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: stream server ADDR PORT MSG | stream client ADDR PORT MSG STREAMS SECONDS\n");
        return 2;
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[3]))};
    if (inet_pton(AF_INET, argv[2], &addr.sin_addr) != 1) {
        fprintf(stderr, "stream: %s is not an IPv4 address\n", argv[2]);
        return 2;
    }
    msg = strtoul(argv[4], NULL, 10);
    if (msg == 0) {
        fprintf(stderr, "stream: MSG must be a positive number of bytes\n");
        return 2;
    }
    if (strcmp(argv[1], "server") == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(l, (struct sockaddr *)&addr, sizeof addr) || listen(l, 64)) {
            perror("stream server");
            return 1;
        }
        for (;;) {
            int fd = accept(l, NULL, NULL);
            if (fd < 0)
                continue;
            pthread_t t;
            if (pthread_create(&t, NULL, sink, (void *)(long)fd) != 0)
                close(fd);
            else
                pthread_detach(t);
        }
    }
    if (strcmp(argv[1], "client") != 0 || argc < 7) {
        fprintf(stderr, "stream: the first word is server or client (client takes STREAMS SECONDS)\n");
        return 2;
    }
    int streams = atoi(argv[5]);
    if (streams < 1 || streams > 64) {
        fprintf(stderr, "stream: STREAMS must be 1 to 64\n");
        return 2;
    }
    struct writer w[64] = {{0}};
    pthread_t t[64];
    for (int i = 0; i < streams; i++) {
        w[i].fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(w[i].fd, (struct sockaddr *)&addr, sizeof addr)) {
            perror("stream client");
            return 1;
        }
    }
    deadline = now() + atof(argv[6]);
    for (int i = 0; i < streams; i++)
        if (pthread_create(&t[i], NULL, source, &w[i]) != 0) {
            fprintf(stderr, "stream client: cannot start a writer thread\n");
            return 1;
        }
    double bits_per_sec = 0;
    for (int i = 0; i < streams; i++) {
        pthread_join(t[i], NULL);
        if (w[i].failed)
            return 1;
        if (w[i].seconds > 0)
            bits_per_sec += w[i].bytes * 8 / w[i].seconds;
    }
    printf("gbit_per_sec %.4f\n", bits_per_sec / 1e9);
    return 0;
}
