/* conn.c - per-connection bookkeeping of the HTTP front end: counts, client addresses, the accept policy, head facts. */
#include "conn.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Per connection (libmicrohttpd's socket context): the client's address as
 * text, and whether a request has begun on it (a drain waits for accepted
 * connections whose first request has not begun yet, as for requests). */
typedef struct conn_ctx {
    int begun;
    char client[INET6_ADDRSTRLEN];
} conn_ctx;

static conn_ctx *conn_context(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The client's address as text (empty when unknown). */
static void client_address(struct MHD_Connection *conn, char *out, size_t len)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    out[0] = '\0';
    if (!ci || !ci->client_addr) return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET) inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)len);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)len);
}

void ikd_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                     enum MHD_ConnectionNotificationCode toe)
{
    ikd_http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&h->connections, 1);
        atomic_fetch_add(&h->started, 1);
        conn_ctx *cc = malloc(sizeof *cc); /* NULL: no client in the log, and no hold on a drain */
        if (cc) {
            cc->begun = 0;
            client_address(conn, cc->client, sizeof cc->client);
            atomic_fetch_add(&h->fresh, 1);
        }
        *socket_context = cc;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        atomic_fetch_sub(&h->connections, 1);
        conn_ctx *cc = *socket_context;
        if (cc && !cc->begun) atomic_fetch_sub(&h->fresh, 1);
        free(cc);
        *socket_context = NULL;
    }
}

enum MHD_Result ikd_conn_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    ikd_http *h = cls;
    (void)addr;
    (void)addrlen;
    if (atomic_load(&h->connections) < h->cfg->max_connections) return MHD_YES;
    ikd_metrics_reject(&h->metrics, IKD_REJECT_CONNECTIONS);
    return MHD_NO;
}

void ikd_conn_begin(ikd_http *h, struct MHD_Connection *conn)
{
    conn_ctx *cc = conn_context(conn);
    if (cc && !cc->begun) {
        cc->begun = 1;
        atomic_fetch_sub(&h->fresh, 1);
    }
}

const char *ikd_conn_client(struct MHD_Connection *conn)
{
    const conn_ctx *cc = conn_context(conn);
    return cc ? cc->client : "";
}

/* The framing facts gathered over the head's values. */
typedef struct head_scan {
    size_t bytes;
    int bad_byte, lengths, length_conflict;
    const char *length;
} head_scan;

static enum MHD_Result scan_value(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                  const char *value, size_t value_size)
{
    head_scan *hs = cls;
    hs->bytes += key_size + (value ? value_size : 0) + 4; /* "key: value\r\n", or "k=v&" in a query */
    if (kind != MHD_HEADER_KIND || !value) return MHD_YES;
    if (strlen(value) != value_size || memchr(value, '\r', value_size) || strlen(key) != key_size) hs->bad_byte = 1;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (hs->lengths++ && strcmp(hs->length, value) != 0) hs->length_conflict = 1;
        hs->length = value;
    }
    return MHD_YES;
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

void ikd_conn_head(struct MHD_Connection *conn, const char *method, const char *url, ikd_head *head)
{
    *head = (ikd_head){method,
                       url,
                       header(conn, MHD_HTTP_HEADER_CONTENT_TYPE),
                       header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH),
                       header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING),
                       header(conn, MHD_HTTP_HEADER_ACCEPT),
                       header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
                       header(conn, "Origin"),
                       header(conn, "X-Request-Id"),
                       header(conn, "Access-Control-Request-Method"),
                       0,
                       0,
                       0,
                       {NULL}};
    head_scan hs = {strlen(method) + strlen(url) + 12, 0, 0, 0, NULL}; /* "METHOD URL HTTP/1.1\r\n" and "\r\n" */
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND | MHD_GET_ARGUMENT_KIND, scan_value, &hs);
    head->head_bytes = hs.bytes;
    for (int i = 0; i < IKD_IMPORT__ARGS; i++)
        head->args[i] = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, ikd_import_arg_names[i]);
    head->bad_byte = hs.bad_byte;
    head->length_conflict = hs.length_conflict;
}

int ikd_conn_peer_closed(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *fi = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    char c;
    return fi && recv(fi->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

size_t ikd_conn_send_raw(struct MHD_Connection *conn, const ikd_call *c, const char *reason, int *whole)
{
    *whole = 0;
    const union MHD_ConnectionInfo *fi = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *tls = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!fi || (tls && tls->tls_session)) return 0;
    ikd_buf out;
    ikd_buf_init(&out);
    char line[128];
    snprintf(line, sizeof line, "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\n", c->status, reason, c->reply.len);
    ikd_buf_puts(&out, line);
    ikd_header hdr[IKD_CALL_MAX_HEADERS];
    size_t n = ikd_call_headers(c, 1, hdr);
    for (size_t i = 0; i < n; i++) {
        ikd_buf_puts(&out, hdr[i].name);
        ikd_buf_puts(&out, ": ");
        ikd_buf_puts(&out, hdr[i].value);
        ikd_buf_puts(&out, "\r\n");
    }
    ikd_buf_puts(&out, "\r\n");
    ikd_buf_append(&out, c->reply.data ? c->reply.data : "", c->reply.len);
    size_t sent = 0;
    if (!out.failed && send(fi->connect_fd, out.data, out.len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)out.len)
        sent = c->reply.len, *whole = 1;
    ikd_buf_destroy(&out);
    return sent;
}

const char *ikd_conn_reason(int status)
{
    static const struct {
        int status;
        const char *reason;
    } reasons[] = {{400, "Bad Request"},        {401, "Unauthorized"},          {403, "Forbidden"},
                   {404, "Not Found"},          {405, "Method Not Allowed"},    {409, "Conflict"},
                   {413, "Payload Too Large"},  {415, "Unsupported Media Type"}, {431, "Request Header Fields Too Large"},
                   {500, "Internal Server Error"}, {501, "Not Implemented"},    {503, "Service Unavailable"}};
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (reasons[i].status == status) return reasons[i].reason;
    return "Error";
}
