/*
 * A TCP proxy that holds every chunk going from the client to the server
 * for a set time before passing it on: a known one-way delay where the
 * kernel has no netem (bench/net.sh delay). The answer comes back at once,
 * so each request/response pays the delay once, as with `tc qdisc ...
 * netem delay` on one side's link.
 *
 *   delay_proxy LISTEN_ADDR LISTEN_PORT SERVER_ADDR SERVER_PORT DELAY_FILE
 *
 * DELAY_FILE holds the delay in microseconds; it is read at each new
 * connection, so a setup command changes it between the rounds of `sledge
 * ab` (a missing or empty file is 0). The same proxy carries both sides,
 * so what it costs beyond the delay is the same on both.
 *
 * Each connection gets two threads: client->server sleeps until each
 * chunk's arrival time plus the delay (absolute CLOCK_MONOTONIC sleeps,
 * timer slack 1 ns), server->client forwards at once. Built by
 * bench/net.sh with `cc -O2 -pthread`.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_in server;
static const char *delay_file;

struct pipe_end {
	int from, to;
	long delay_us;
};

static long read_delay(void)
{
	FILE *f = fopen(delay_file, "r");
	long us = 0;
	if (f) {
		if (fscanf(f, "%ld", &us) != 1)
			us = 0;
		fclose(f);
	}
	return us < 0 ? 0 : us;
}

static int write_all(int fd, const char *buf, ssize_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		n -= w;
	}
	return 0;
}

static void *forward(void *arg)
{
	struct pipe_end *p = arg;
	char buf[65536];
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (;;) {
		ssize_t n = read(p->from, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (p->delay_us > 0) {
			struct timespec due;
			clock_gettime(CLOCK_MONOTONIC, &due);
			due.tv_nsec += p->delay_us * 1000L;
			due.tv_sec += due.tv_nsec / 1000000000L;
			due.tv_nsec %= 1000000000L;
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
				;
		}
		if (write_all(p->to, buf, n))
			break;
	}
	shutdown(p->to, SHUT_WR);
	shutdown(p->from, SHUT_RD);
	return NULL;
}

static void *connection(void *arg)
{
	int client = (int)(long)arg;
	int one = 1;
	int to_server = socket(AF_INET, SOCK_STREAM, 0);
	if (to_server < 0 || connect(to_server, (struct sockaddr *)&server, sizeof server)) {
		close(client);
		if (to_server >= 0)
			close(to_server);
		return NULL;
	}
	setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(to_server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	struct pipe_end up = { client, to_server, read_delay() };
	struct pipe_end down = { to_server, client, 0 };
	pthread_t t;
	if (pthread_create(&t, NULL, forward, &up) == 0) {
		forward(&down);
		pthread_join(t, NULL);
	}
	close(client);
	close(to_server);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s LISTEN_ADDR LISTEN_PORT SERVER_ADDR SERVER_PORT DELAY_FILE\n", argv[0]);
		return 2;
	}
	struct sockaddr_in listen_at = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[2])) };
	server.sin_family = AF_INET;
	server.sin_port = htons(atoi(argv[4]));
	if (inet_pton(AF_INET, argv[1], &listen_at.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[3], &server.sin_addr) != 1) {
		fprintf(stderr, "bad address\n");
		return 2;
	}
	delay_file = argv[5];
	int one = 1;
	int l = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(l, (struct sockaddr *)&listen_at, sizeof listen_at) || listen(l, 64)) {
		perror("listen");
		return 1;
	}
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			continue;
		pthread_t t;
		if (pthread_create(&t, NULL, connection, (void *)(long)c) == 0)
			pthread_detach(t);
		else
			close(c);
	}
}
