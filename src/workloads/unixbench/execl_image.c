/*
 * The program unixbench.execl executes over and over: sledge's own small C
 * program, doing what UnixBench's execl program does, so that each exec
 * costs what it costs UnixBench (a small dynamically linked C program)
 * rather than what starting sledge's much larger binary costs.
 *
 * Usage: sledge-execl-image START_NS DURATION_NS COUNT
 *
 * Counts itself, reads CLOCK_MONOTONIC, and either replaces itself with a
 * new image of the same program (argv[0]) carrying the count, or, once
 * DURATION_NS have passed since START_NS, prints the count and the elapsed
 * seconds in the copy protocol's result line and exits.
 *
 * build.rs compiles it; sledge embeds the executable and writes it into the
 * case's scratch directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct timespec now;
    unsigned long long start, duration, count, elapsed;
    char count_text[24];

    if (argc != 4) {
        fprintf(stderr, "usage: %s START_NS DURATION_NS COUNT\n", argv[0]);
        return 2;
    }
    start = strtoull(argv[1], NULL, 10);
    duration = strtoull(argv[2], NULL, 10);
    count = strtoull(argv[3], NULL, 10) + 1;

    clock_gettime(CLOCK_MONOTONIC, &now);
    elapsed = (unsigned long long)now.tv_sec * 1000000000ULL
        + (unsigned long long)now.tv_nsec - start;
    if (elapsed >= duration) {
        printf("sledge-copy result %llu %.9f\n", count, (double)elapsed / 1e9);
        return 0;
    }
    snprintf(count_text, sizeof count_text, "%llu", count);
    execl(argv[0], argv[0], argv[1], argv[2], count_text, (char *)NULL);
    fprintf(stderr, "error: execl: exec of %s failed at iteration %llu\n", argv[0], count);
    perror("execl");
    return 1;
}
