/*
 * sledge's small fork/exec program: the two UnixBench loops whose cost is
 * the size of the process itself, run from a small C program as UnixBench
 * runs them, rather than from sledge's much larger binary.
 *
 *   sledge-forkexec execl START_NS DURATION_NS COUNT
 *     Counts itself, reads CLOCK_MONOTONIC, and either replaces itself with
 *     a new image of the same program (argv[0]) carrying the count, or,
 *     once DURATION_NS have passed since START_NS, reports. What UnixBench's
 *     execl program does; each exec costs the start-up of a small
 *     dynamically linked C program.
 *
 *   sledge-forkexec spawn DURATION_NS
 *     Forks a child that calls exit(0) and waits for it, until DURATION_NS
 *     have passed, then reports. What UnixBench's spawn program does; each
 *     fork copies this small process's address space.
 *
 * The report is the copy protocol's result line, "sledge-copy result COUNT
 * SECONDS", on stdout. build.rs compiles this file; sledge embeds the
 * executable and writes it into the case's scratch directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec;
}

static int report(unsigned long long count, unsigned long long elapsed)
{
    printf("sledge-copy result %llu %.9f\n", count, (double)elapsed / 1e9);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int execl_loop(char *self, char *start_text, char *duration_text, char *count_text)
{
    unsigned long long start = strtoull(start_text, NULL, 10);
    unsigned long long duration = strtoull(duration_text, NULL, 10);
    unsigned long long count = strtoull(count_text, NULL, 10) + 1;
    unsigned long long elapsed = now_ns() - start;
    char next[24];

    if (elapsed >= duration)
        return report(count, elapsed);
    snprintf(next, sizeof next, "%llu", count);
    execl(self, self, "execl", start_text, duration_text, next, (char *)NULL);
    fprintf(stderr, "error: execl: exec of %s failed at iteration %llu: ", self, count);
    perror(NULL);
    return 1;
}

static int spawn_loop(char *duration_text)
{
    unsigned long long duration = strtoull(duration_text, NULL, 10);
    unsigned long long start = now_ns(), elapsed, count = 0;
    pid_t child;
    int status;

    do {
        child = fork();
        if (child == 0)
            exit(0);
        if (child < 0) {
            fprintf(stderr, "error: spawn: fork failed at iteration %llu: ", count);
            perror(NULL);
            return 1;
        }
        if (waitpid(child, &status, 0) != child || status != 0) {
            fprintf(stderr, "error: spawn: bad wait status 0x%x\n", status);
            return 1;
        }
        count++;
        elapsed = now_ns() - start;
    } while (elapsed < duration);
    return report(count, elapsed);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "execl") == 0)
        return execl_loop(argv[0], argv[2], argv[3], argv[4]);
    if (argc == 3 && strcmp(argv[1], "spawn") == 0)
        return spawn_loop(argv[2]);
    fprintf(stderr, "usage: %s execl START_NS DURATION_NS COUNT | spawn DURATION_NS\n", argv[0]);
    return 2;
}
