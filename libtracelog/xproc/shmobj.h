/*
 * Named shared-memory objects that another user could have squatted: made
 * with O_EXCL and mode 0600 whatever the umask; opened only after fstat()
 * shows a regular file of the expected owner, mode and size. Every name is
 * a /dev/shm name ("/tracelog...."). The system calls used to open are
 * async-signal-safe (open, fstat, mmap, close: no lock, no allocation).
 */
#ifndef TRACELOG_XPROC_SHMOBJ_H
#define TRACELOG_XPROC_SHMOBJ_H

#include <stdint.h>
#include <sys/types.h>

#define TL_SHM_NAME_MAX 64 /* bytes, with the NUL */

/*
 * Creates name (O_EXCL, mode 0600) of `size` bytes, owned by owner_uid and
 * owner_gid when they differ from ours (root creating for another user).
 * *fd gets the descriptor (close-on-exec). 0 or an errno (EEXIST if taken).
 */
int tl_shmobj_create(const char *name, uint64_t size, uint32_t owner_uid, uint32_t owner_gid, int *fd);

/*
 * Opens name read-write after checking it is a regular file owned by
 * owner_uid with mode 0600 and exactly `size` bytes (0: any size, returned
 * in *size_out when not NULL). 0, ENOENT, EACCES, or ENOTSUP when the object
 * is not what it should be.
 */
int tl_shmobj_open(const char *name, uint32_t owner_uid, uint64_t size, int *fd, uint64_t *size_out);

/*
 * An object that must appear complete under its name is built under a
 * private name first: tl_shmobj_create_staged creates `tmp` (name + ".new." +
 * our pid; one left by a dead process of ours with our pid is replaced) as
 * tl_shmobj_create does, but ours: its owner cannot open it, let alone cut
 * it under our stores, while we build it (a controller's stores into a map
 * its traced process had cut to 0 bytes killed it with SIGBUS).
 * tl_shmobj_publish gives the built object (fd, closed in any case) to its
 * owner, then links it in as `name` (EEXIST if someone was first) when
 * `built` is 0, and removes `tmp` in any case. Map it again to use it, as any
 * object the owner may change. Returns `built` if not 0, else 0 or an errno.
 */
int tl_shmobj_create_staged(const char *name, uint64_t size, char tmp[TL_SHM_NAME_MAX], int *fd);
int tl_shmobj_publish(const char *tmp, const char *name, int fd, uint32_t owner_uid, uint32_t owner_gid, int built);
/* Removes the name (the memory stays while it is mapped). 0 or an errno. */
int tl_shmobj_unlink(const char *name);

#endif
