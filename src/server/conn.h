/* conn.h - per-connection bookkeeping of the HTTP front end: counts, client addresses, the accept policy, head facts. */
#ifndef IKD_CONN_H
#define IKD_CONN_H

#include <microhttpd.h>
#include <stddef.h>
#include <sys/socket.h>

#include "http.h"

/* libmicrohttpd's connection notification (cls: the ikd_http): counts open
 * connections and those with no request begun yet, and keeps each one's
 * client address as text for the access log (formatted once). */
void ikd_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                     enum MHD_ConnectionNotificationCode toe);

/* libmicrohttpd's accept policy (cls: the ikd_http): --max-connections,
 * enforced here rather than with libmicrohttpd's own limit, which 0.9.75
 * splits over the I/O threads: a thread that reached its share stopped
 * noticing its closed connections until their timeout, so one burst of
 * connections left the server refusing everyone for 30 s. libmicrohttpd
 * gets a limit no thread can reach; this closes a connection over ours at
 * once (counted as ikd_rejections_total{reason="connection_limit"}). */
enum MHD_Result ikd_conn_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen);

/* A request begins on `conn`: it no longer holds a drain as a connection. */
void ikd_conn_begin(ikd_http *h, struct MHD_Connection *conn);

/* The client's address as text, "" when unknown. */
const char *ikd_conn_client(struct MHD_Connection *conn);

/* The request head as the service reads it: the headers it uses, and the
 * framing facts libmicrohttpd does not check (head size, a bare CR in a
 * header, conflicting Content-Lengths). libmicrohttpd 0.9.75 cuts a header
 * value at a NUL byte before ikd sees it, so a NUL cannot be noticed. */
void ikd_conn_head(struct MHD_Connection *conn, const char *method, const char *url, ikd_head *head);

/* 1 when the client has closed its sending side (end of stream waiting on
 * the socket): it most likely went away while its request was solved. */
int ikd_conn_peer_closed(struct MHD_Connection *conn);

/* Write the call's reply (status, headers with Connection: close, body)
 * on the socket itself, for an answer libmicrohttpd cannot queue (in the
 * middle of a body). Plain HTTP only: under TLS nothing is written. Returns
 * the body bytes written; *sent is 1 when the whole reply went out (0:
 * nothing did). */
size_t ikd_conn_send_raw(struct MHD_Connection *conn, const ikd_call *c, const char *reason, int *sent);
/* The reason phrase of the statuses an early answer can have. */
const char *ikd_conn_reason(int status);

#endif
