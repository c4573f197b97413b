/*
 * names_race SECONDS: a traced program that cuts to 0 bytes every name map
 * its controller builds for it (test_xproc_hostile). It records from a
 * thread while, in a loop, it marks its named event-name map moved and
 * unlinks it (the controller builds another under a private ".new." name
 * before its next chunk), watches /dev/shm for that staged object, and
 * truncates it again and again for 50 ms. The controller stored the new
 * map's header through a mapping the guard did not cover: it died of
 * SIGBUS (a root `ptlog attach` of a program run as nobody too).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "posix/names_map.h"

static atomic_int stop;
static trace_event_id_t id;
static char prefix[96]; /* "tracelog.<euid>.<pid>.names." */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *producer(void *arg)
{
    (void)arg;
    for (uint64_t n = 0; !atomic_load(&stop); n++) {
        posix_trace_event(id, &n, sizeof n);
        if (n % 64 == 0)
            usleep(100);
    }
    return NULL;
}

static int ours(const char *name, int staged)
{
    return strncmp(name, prefix, strlen(prefix)) == 0 && (strstr(name, ".new.") != NULL) == staged;
}

/* Our named maps: marked moved (the controller looks for another) and unlinked. */
static void retire_maps(void)
{
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!ours(e->d_name, 0))
            continue;
        char path[300];
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        int fd = open(path, O_RDWR | O_NOFOLLOW);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(tl_names)) {
            tl_names *m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED) {
                atomic_store(&m->moved, 1);
                munmap(m, sizeof *m);
            }
        }
        if (fd >= 0)
            close(fd);
        unlink(path);
    }
    if (d)
        closedir(d);
}

/* Cuts the staged object to 0 bytes for 50 ms, as soon as it may be opened (a root controller chowns it). */
static unsigned cut(const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "/dev/shm/%s", name);
    int fd = -1;
    for (int i = 0; i < 20000 && fd < 0; i++)
        fd = open(path, O_RDWR | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    for (double until = now_s() + 0.05; now_s() < until;)
        if (ftruncate(fd, 0) != 0)
            break;
    close(fd);
    return 1;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    snprintf(prefix, sizeof prefix, "tracelog.%u.%u.names.", (unsigned)geteuid(), (unsigned)getpid());
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (in < 0 || inotify_add_watch(in, "/dev/shm", IN_CREATE) < 0) {
        perror("names_race: inotify");
        return 2;
    }
    posix_trace_eventid_open("race", &id);
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    unsigned cuts = 0;
    retire_maps();
    for (double t0 = now_s(); now_s() - t0 < seconds;) {
        char buf[4096] __attribute__((aligned(8)));
        struct pollfd pf = {in, POLLIN, 0};
        if (poll(&pf, 1, 100) <= 0)
            continue;
        ssize_t n = read(in, buf, sizeof buf);
        for (char *p = buf; n > 0 && p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->len && ours(ev->name, 1))
                cuts += cut(ev->name);
        }
        retire_maps(); /* the controller builds another before its next chunk */
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    fprintf(stderr, "names_race: %u staged maps cut\n", cuts);
    return 0;
}
