/* failalloc.c - an LD_PRELOAD shim for the hostile suite: malloc, calloc and realloc fail (NULL, ENOMEM) for
 * any request above $IKD_FAIL_ABOVE bytes, as they do when the address space or a cgroup limit runs out. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

static size_t limit(void)
{
    static size_t above;
    if (!above) {
        const char *v = getenv("IKD_FAIL_ABOVE");
        above = v ? strtoull(v, NULL, 10) : (size_t)-1;
        if (!above) above = (size_t)-1;
    }
    return above;
}

void *malloc(size_t n)
{
    static void *(*real)(size_t);
    if (!real) real = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    if (n > limit()) {
        errno = ENOMEM;
        return NULL;
    }
    return real(n);
}

void *realloc(void *p, size_t n)
{
    static void *(*real)(void *, size_t);
    if (!real) real = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    if (n > limit()) {
        errno = ENOMEM;
        return NULL;
    }
    return real(p, n);
}
