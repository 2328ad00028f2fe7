/* listen.c - binding the listening socket and reading the TLS certificate and key. */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../codec/buf.h"
#include "config.h"

/* Write "SCHEME://HOST:PORT" of the bound socket `fd`. */
static void bound_url(int fd, const char *scheme, char *url, size_t urllen)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char addr[INET6_ADDRSTRLEN] = "?";
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof addr);
        snprintf(url, urllen, "%s://[%s]:%d", scheme, addr, ntohs(s6->sin6_port));
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof addr);
        snprintf(url, urllen, "%s://%s:%d", scheme, addr, ntohs(s4->sin_port));
    }
}

int ikd_listen_bind(const char *listen_at, const char *scheme, char *url, size_t urllen, char *errbuf, size_t errlen)
{
    char host[256], portstr[16];
    int port;
    ikd_config_split_listen(listen_at, host, sizeof host, &port);
    snprintf(portstr, sizeof portstr, "%d", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai != 0) {
        snprintf(errbuf, errlen, "listen %s: %s", listen_at, gai_strerror(gai));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        /* non-blocking: several I/O threads wait on it, and one that loses the race
         * for a new connection must not block in accept() */
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(errbuf, errlen, "listen %s: %s", listen_at, strerror(err));
        return -1;
    }
    bound_url(fd, scheme, url, urllen);
    return fd;
}

char *ikd_listen_read_file(const char *path, char *errbuf, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    ikd_buf b;
    ikd_buf_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) ikd_buf_append(&b, chunk, n);
    fclose(f);
    if (b.failed || b.len == 0) {
        snprintf(errbuf, errlen, "%s: empty or unreadable", path);
        ikd_buf_destroy(&b);
        return NULL;
    }
    return ikd_buf_release(&b, NULL);
}
