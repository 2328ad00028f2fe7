/* listen.h - the listening socket (bound before the HTTP daemon starts) and the TLS files it serves with. */
#ifndef IKD_LISTEN_H
#define IKD_LISTEN_H

#include <stddef.h>

/* Bind and listen on `listen` (HOST:PORT, [v6]:PORT; port 0 = any free
 * port), non-blocking. Returns the socket and writes "SCHEME://HOST:PORT"
 * actually bound into url; -1 with a message in errbuf. */
int ikd_listen_bind(const char *listen, const char *scheme, char *url, size_t urllen, char *errbuf, size_t errlen);

/* A whole file as a NUL-terminated string (free() it); NULL with a message
 * in errbuf when it cannot be read or is empty. */
char *ikd_listen_read_file(const char *path, char *errbuf, size_t errlen);

#endif
