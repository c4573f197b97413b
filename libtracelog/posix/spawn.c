/*
 * posix_spawn with Trace Inherit (<trace.h> routes the calls here): a
 * child spawned while the process has a running inherited stream gets,
 * in its environment, the stream's shared buffer (TRACELOG_STREAM) and
 * the parent's named event-name map (TRACELOG_NAMES); the library joins
 * both at load in the child (posix/remote.c). Design note:
 * docs/design/cross-process.md, section 6.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "posix/internal.h"
#include "posix/names.h"

#undef posix_spawn
#undef posix_spawnp

extern char **environ;

typedef int (*spawn_fn)(pid_t *restrict, const char *restrict, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *restrict, char *const[], char *const[]);

/* Whether env entry e sets the variable of `assignment` ("NAME=..."). */
static int same_variable(const char *e, const char *assignment)
{
    size_t key = (size_t)(strchr(assignment, '=') - assignment) + 1;
    return strncmp(e, assignment, key) == 0;
}

/*
 * envp with TRACELOG_STREAM naming our inherited stream and, when our names
 * are shared, TRACELOG_NAMES (earlier values of both left out): one
 * malloc'd block, or NULL.
 */
static char **inherited_env(char *const envp[], const char *name, uint64_t id)
{
    char vars[2][160];
    int nvars = 1;
    snprintf(vars[0], sizeof vars[0], "%s=%s:%016llx", TL_XPROC_ENV, name, (unsigned long long)id);
    nvars += tl_posix_names_env(vars[1], sizeof vars[1]) == 0;
    size_t n = 0;
    while (envp && envp[n])
        n++;
    char **out = malloc((n + 3) * sizeof *out + sizeof vars);
    if (!out)
        return NULL;
    char *text = (char *)(out + n + 3);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!same_variable(envp[i], vars[0]) && !same_variable(envp[i], "TRACELOG_NAMES="))
            out[k++] = envp[i];
    for (int v = 0; v < nvars; v++) {
        memcpy(text, vars[v], sizeof vars[v]);
        out[k++] = text;
        text += sizeof vars[v];
    }
    out[k] = NULL;
    return out;
}

static int spawn(spawn_fn fn, pid_t *restrict pid, const char *restrict path,
                 const posix_spawn_file_actions_t *file_actions, const posix_spawnattr_t *restrict attrp,
                 char *const argv[], char *const envp[])
{
    char name[TL_SHM_NAME_MAX];
    uint64_t id;
    if (!tl_posix_inherited_buffer(name, &id))
        return fn(pid, path, file_actions, attrp, argv, envp);
    char **env = inherited_env(envp ? envp : environ, name, id);
    if (!env)
        return ENOMEM;
    int e = fn(pid, path, file_actions, attrp, argv, env);
    free(env);
    return e;
}

int tracelog_posix_spawn(pid_t *restrict pid, const char *restrict path,
                         const posix_spawn_file_actions_t *file_actions, const posix_spawnattr_t *restrict attrp,
                         char *const argv[], char *const envp[])
{
    return spawn(posix_spawn, pid, path, file_actions, attrp, argv, envp);
}

int tracelog_posix_spawnp(pid_t *restrict pid, const char *restrict file,
                          const posix_spawn_file_actions_t *file_actions, const posix_spawnattr_t *restrict attrp,
                          char *const argv[], char *const envp[])
{
    return spawn(posix_spawnp, pid, file, file_actions, attrp, argv, envp);
}
