/* http.c - libmicrohttpd glue: request heads and bodies into the service layer, its replies out, connection limits, start/stop. */
#include "http.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../service/stream.h"
#include "../service/wire.h"
#include "assets.h"
#include "conn.h"
#include "hooks.h"
#include "listen.h"
#include "log.h"

/* RECEIVING: reading the head or body; DECIDED: the answer is known and
 * is queued on MHD's final call for the request (after the body, if any,
 * under TLS); LINGER: the answer is written, the rest of the body is read
 * and dropped, then the connection closes; QUEUED: on the pool, connection
 * suspended; DONE: the pool has finished; ANSWERED: queued; CUT: the
 * lingering's bounds were passed and the connection closed.
 *
 * Lingering (docs/operating.md, "Early answers"): a client that sends its whole body
 * before it reads gets a reset instead of an answer if the server closes
 * while the body is still coming. So an answer decided before the body is
 * in is written at once (libmicrohttpd 0.9.75 cannot queue one mid-body),
 * the rest of the body is dropped up to --linger-bytes within --linger-ms,
 * and the connection closes after it (RFC 9112 section 9.6). */
typedef enum { REQ_RECEIVING, REQ_DECIDED, REQ_LINGER, REQ_QUEUED, REQ_DONE, REQ_ANSWERED, REQ_CUT } req_state;

/* Bytes of libmicrohttpd's per-connection memory kept beyond --conn-buffer
 * for the reply's headers: a request head that fills --conn-buffer still
 * gets its answer (a head just under the buffer's size got none: the
 * headers had taken the room for the reply's). */
#define IKD_HTTP_REPLY_ROOM 2048

/* One request's context (MHD's per-request pointer). */
typedef struct ikd_http_req {
    ikd_call call; /* first member: the service hands it back */
    ikd_http *h;
    struct MHD_Connection *conn;
    req_state state;
    unsigned long reply_bytes;
    unsigned long long discarded; /* REQ_DECIDED: body bytes dropped after the answer was decided */
    unsigned long long t_decided; /* when the answer was decided (ikd_clock_ns) */
    int peer_gone;                /* the client had closed its side before a pooled answer was ready */
    char method[16];
    char path[256];
} ikd_http_req;

/* ---- replies ----------------------------------------------------------- */

/* Queue response `r` with the call's status and headers (r is released). */
static enum MHD_Result queue_response(ikd_http_req *rq, struct MHD_Response *r)
{
    ikd_header hdr[IKD_CALL_MAX_HEADERS];
    size_t n = ikd_call_headers(&rq->call, atomic_load(&rq->h->draining), hdr);
    for (size_t i = 0; i < n; i++) MHD_add_response_header(r, hdr[i].name, hdr[i].value);
    enum MHD_Result ret = MHD_queue_response(rq->conn, (unsigned int)rq->call.status, r);
    MHD_destroy_response(r);
    rq->state = REQ_ANSWERED;
    return ret;
}

/* Queue the call's reply. */
static enum MHD_Result queue_now(ikd_http_req *rq)
{
    ikd_call *c = &rq->call;
    size_t len;
    char *data = ikd_buf_release(&c->reply, &len);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, data ? data : "", data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    rq->reply_bytes = len;
    return queue_response(rq, r); /* counted in on_completed, once it is known to be sent */
}

/* A streamed reply (a clip's frames as they are solved): chunked, read from
 * the call's stream; the connection parks while the worker has nothing new
 * and the worker wakes it. */
static void stream_park(void *ctx) { MHD_suspend_connection(ctx); }
static void stream_wake(void *ctx) { MHD_resume_connection(ctx); }

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    ikd_http_req *rq = cls;
    (void)pos;
    long n = ikd_stream_read(rq->call.stream, buf, max, stream_park, rq->conn);
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : (ssize_t)n;
}

/* The response is gone (sent, or the client went away): the worker stops
 * and the transport's reference goes. */
static void stream_done(void *cls)
{
    ikd_stream *st = cls;
    ikd_stream_detach(st);
    ikd_stream_release(st);
}

static enum MHD_Result queue_stream(ikd_http_req *rq)
{
    ikd_call *c = &rq->call;
    ikd_stream *st = c->stream;
    ikd_stream_attach(st, stream_wake, rq->conn);
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_reader, rq, NULL);
    if (!r) {
        stream_done(st);
        c->stream = NULL;
        return MHD_NO;
    }
    return queue_response(rq, r);
}

/* 1 when a body of this request will not be lingered over: the client
 * waits for 100 Continue before sending it, or it is longer than
 * --linger-bytes. */
static int answer_at_once(ikd_http_req *rq)
{
    const char *expect = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
    const char *length = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (expect && strcasecmp(expect, "100-continue") == 0) return 1;
    if (rq->call.unframed) return 1;
    return length && strtoull(length, NULL, 10) > (unsigned long long)rq->h->cfg->linger_bytes;
}

/* The answer is known while a body is (or may be) on its way: written now
 * (else, under TLS, queued after the body), then the body is dropped. */
static enum MHD_Result linger_begin(ikd_http_req *rq)
{
    rq->call.close = 1;
    rq->t_decided = ikd_clock_ns();
    int sent = 0;
    rq->reply_bytes = ikd_conn_send_raw(rq->conn, &rq->call, ikd_conn_reason(rq->call.status), &sent);
    rq->state = sent ? REQ_LINGER : REQ_DECIDED;
    return MHD_YES;
}

/* An answer decided from the head: queued on MHD's final call for this
 * request when there is no body; with one, lingering (above). */
static enum MHD_Result respond(ikd_http_req *rq)
{
    if (!rq->call.has_body) {
        rq->state = REQ_DECIDED;
        return MHD_YES;
    }
    if (answer_at_once(rq)) {
        rq->call.close = 1;
        return queue_now(rq);
    }
    return linger_begin(rq);
}

/* Drop this piece of the body: MHD_YES while within the lingering's
 * bounds, else MHD_NO (the connection is cut; REQ_DECIDED writes its
 * answer on the socket first, as far as it can). */
static enum MHD_Result linger(ikd_http_req *rq, size_t *upload_data_size)
{
    rq->discarded += *upload_data_size;
    *upload_data_size = 0;
    const ikd_config *cfg = rq->h->cfg;
    if (rq->discarded <= (unsigned long long)cfg->linger_bytes &&
        ikd_clock_ns() - rq->t_decided <= (unsigned long long)cfg->linger_ms * 1000000ull)
        return MHD_YES;
    if (rq->state == REQ_DECIDED) {
        int sent = 0;
        rq->reply_bytes = ikd_conn_send_raw(rq->conn, &rq->call, ikd_conn_reason(rq->call.status), &sent);
    }
    rq->state = REQ_CUT;
    return MHD_NO;
}

/* ---- service hooks (the others: hooks.c) ------------------------------- */

/* A pooled call has its reply: hand the connection back to MHD (rq is not
 * touched after). */
static void hook_finished(ikd_call *call)
{
    ikd_http_req *rq = (ikd_http_req *)call;
    rq->state = REQ_DONE;
    MHD_resume_connection(rq->conn);
}

/* ---- request handling -------------------------------------------------- */

/* Copy a string, cut to fit `size` bytes with its NUL. */
static void copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static enum MHD_Result on_first_call(ikd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                                     void **con_cls)
{
    ikd_conn_begin(h, conn);
    ikd_http_req *rq = malloc(sizeof *rq);
    if (!rq) return MHD_NO;
    *con_cls = rq;
    atomic_fetch_add(&h->active, 1);
    ikd_call_init(&rq->call, &h->service, ikd_clock_ns());
    rq->h = h;
    rq->conn = conn;
    rq->state = REQ_RECEIVING;
    rq->reply_bytes = 0;
    rq->discarded = 0;
    rq->peer_gone = 0;
    copy_str(rq->method, sizeof rq->method, method);
    copy_str(rq->path, sizeof rq->path, url);
    ikd_head head;
    ikd_conn_head(conn, method, url, &head);
    if (ikd_call_head(&rq->call, &head) == IKD_CALL_ANSWER) return respond(rq);
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    ikd_http *h = cls;
    (void)version;
    ikd_http_req *rq = *con_cls;
    if (!rq) return on_first_call(h, conn, url, method, con_cls);
    if (rq->state == REQ_CUT) return MHD_NO;
    if (rq->state == REQ_LINGER) { /* the answer is out: drop the body, then close */
        if (*upload_data_size == 0) return MHD_NO;
        return linger(rq, upload_data_size);
    }
    if (rq->state == REQ_DECIDED) { /* the answer waits for the body's end */
        if (*upload_data_size == 0) return queue_now(rq);
        return linger(rq, upload_data_size);
    }
    if (rq->state == REQ_ANSWERED) { /* answered at once: drop whatever comes */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        ikd_call_body(&rq->call, upload_data, *upload_data_size);
        *upload_data_size = 0;
        if (!ikd_call_refused(&rq->call)) return MHD_YES;
        /* past its limit or the memory budget (a chunked body): the 413 or
         * 503 now, then the rest of the body is dropped (lingering) */
        ikd_call_body_end(&rq->call);
        return linger_begin(rq);
    }
    if (rq->state == REQ_DONE) {
        rq->peer_gone = ikd_conn_peer_closed(conn);
        return rq->call.stream ? queue_stream(rq) : queue_now(rq);
    }
    if (rq->state == REQ_QUEUED) return MHD_YES; /* spurious call while suspended */
    if (ikd_call_body_end(&rq->call) == IKD_CALL_ANSWER) return queue_now(rq);
    /* suspend first: the job may finish (and resume) before submit returns */
    rq->state = REQ_QUEUED;
    MHD_suspend_connection(conn);
    ikd_call_submit(&rq->call);
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    ikd_http *h = cls;
    ikd_http_req *rq = *con_cls;
    if (!rq) return;
    if (rq->call.stream) { /* the transport's end of a streamed reply */
        rq->reply_bytes = (unsigned long)ikd_stream_sent(rq->call.stream);
        stream_done(rq->call.stream);
        rq->call.stream = NULL;
    }
    /* what was sent: the status when the whole reply went out to a client
     * still there, else 499 (the client went away before its answer was
     * ready, or libmicrohttpd could not send the reply) */
    int sent = (rq->state == REQ_ANSWERED && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && !rq->peer_gone) ||
               ((rq->state == REQ_CUT || rq->state == REQ_LINGER) && rq->reply_bytes > 0);
    int status = sent ? rq->call.status : 499;
    ikd_metrics_request(&h->metrics, ikd_call_route_slot(&rq->call), status);
    if (ikd_log_enabled(IKD_LOG_INFO)) {
        const char *client = ikd_conn_client(conn);
        const ikd_call *c = &rq->call;
        unsigned long long now = ikd_clock_ns();
        ikd_access a = {.method = rq->method,
                        .path = rq->path,
                        .request_id = c->request_id,
                        .solver = c->outcome.solved ? ikd_solver_name(c->outcome.solver) : NULL,
                        .client = client[0] ? client : NULL,
                        .error = c->outcome.error ? ikd_wire_code(c->outcome.error) : NULL,
                        .status = status,
                        .bytes = sent ? rq->reply_bytes : 0,
                        .duration_ms = (double)(now - c->t_start) / 1e6,
                        .queue_ms = c->t_worker ? (double)(c->t_worker - c->t_start) / 1e6 : 0.0};
        ikd_log_access(&a);
    }
    ikd_call_destroy(&rq->call);
    free(rq);
    *con_cls = NULL;
    atomic_fetch_sub(&h->active, 1);
}

/* ---- start and stop ---------------------------------------------------- */

static struct MHD_Daemon *start_daemon(ikd_http *h, const ikd_config *cfg, int tls, long io_threads)
{
    /* poll(), not epoll: with epoll, MHD_quiesce_daemon (the drain) races each
     * I/O thread to take the listener out of its epoll set and libmicrohttpd
     * 0.9.75 aborts the loser; throughput is the same (docs/performance.md) */
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    if (tls) flags |= MHD_USE_TLS;
    struct MHD_OptionItem ops[] = {
        {MHD_OPTION_LISTEN_SOCKET, h->listen_fd, NULL},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)io_threads, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)cfg->conn_timeout, NULL},
        /* libmicrohttpd zeroes this buffer for every request on a keep-alive
         * connection; its default 32 KiB showed in profiles (docs/performance.md) */
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)(cfg->conn_buffer + IKD_HTTP_REPLY_ROOM), NULL},
        {MHD_OPTION_CONNECTION_MEMORY_INCREMENT, (intptr_t)IKD_HTTP_REPLY_ROOM, NULL},
        /* beyond any one thread's reach: accept_policy enforces --max-connections */
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)((cfg->max_connections + 64) * io_threads), NULL},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)ikd_conn_notify, h},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)cfg->max_connections_per_ip, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, h},
        {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, h->tls_cert},
        {tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, h->tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    return MHD_start_daemon(flags, 0, ikd_conn_accept, h, on_request, h, MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
}

int ikd_http_start(ikd_http *h, const ikd_config *cfg, char *errbuf, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->cfg = cfg;
    h->listen_fd = h->quiesced_fd = -1;
    atomic_init(&h->active, 0);
    atomic_init(&h->connections, 0);
    atomic_init(&h->fresh, 0);
    atomic_init(&h->started, 0);
    h->handed = 0;
    atomic_init(&h->draining, 0);
    atomic_init(&h->ready, 0);
    ikd_metrics_init(&h->metrics);
    int tls = cfg->tls_cert[0] != '\0';
    if (ikd_hooks_service_start(h, cfg, hook_finished) != 0) {
        snprintf(errbuf, errlen, "out of memory");
        goto fail;
    }
    if (tls) {
        if (!(h->tls_cert = ikd_listen_read_file(cfg->tls_cert, errbuf, errlen))) goto fail;
        if (!(h->tls_key = ikd_listen_read_file(cfg->tls_key, errbuf, errlen))) goto fail;
    }
    h->listen_fd = ikd_listen_bind(cfg->listen, tls ? "https" : "http", h->url, sizeof h->url, errbuf, errlen);
    if (h->listen_fd < 0) goto fail;
    h->nworkers = (int)(cfg->workers ? cfg->workers : ikd_hooks_online_cpus());
    if (ikd_pool_init(&h->pool, h->nworkers, (size_t)cfg->queue, ikd_hooks_worker_init, ikd_hooks_worker_destroy, h) != 0) {
        snprintf(errbuf, errlen, "cannot start %d workers", h->nworkers);
        goto fail;
    }
    h->pool_started = 1;
    h->daemon = start_daemon(h, cfg, tls, cfg->io_threads ? cfg->io_threads : ikd_hooks_online_cpus());
    if (!h->daemon) {
        snprintf(errbuf, errlen, "cannot start the HTTP daemon%s", tls ? " (check the TLS certificate and key)" : "");
        goto fail;
    }
    atomic_store(&h->ready, 1);
    return 0;
fail:
    ikd_http_stop(h);
    return -1;
}

void ikd_http_drain(ikd_http *h)
{
    atomic_store(&h->draining, 1);
    atomic_store(&h->ready, 0);
}

void ikd_http_close_listener(ikd_http *h)
{
    if (!h->daemon || h->listen_fd < 0) return;
    MHD_socket fd = MHD_quiesce_daemon(h->daemon);
    if (fd == MHD_INVALID_SOCKET) return;
    /* Connections whose handshake the kernel completed wait in the backlog:
     * hand each to libmicrohttpd, so that every connect() that succeeded gets
     * its answer, then stop listening (new handshakes are refused; shutdown
     * on a listening socket would reset what is still queued, so it comes
     * after the backlog is empty). The descriptor stays open until
     * libmicrohttpd is stopped, as its documentation requires. */
    long handed = 0, base = atomic_load(&h->started);
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int c = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
        if (c < 0) break; /* EAGAIN: empty (the socket is non-blocking) */
        handed += MHD_add_connection(h->daemon, c, (struct sockaddr *)&ss, sl) == MHD_YES;
    }
    /* libmicrohttpd takes added connections in on its own threads: until it
     * has, they count as busy (ikd_http_busy) */
    h->handed = base + handed;
    shutdown(fd, SHUT_RD);
    h->quiesced_fd = fd;
    h->listen_fd = -1;
}

void ikd_http_abort(ikd_http *h) { ikd_service_stop(&h->service); }

long ikd_http_active(ikd_http *h) { return atomic_load(&h->active); }

long ikd_http_busy(ikd_http *h)
{
    long waiting = h->handed - atomic_load(&h->started); /* handed over, not yet taken in */
    return atomic_load(&h->active) + atomic_load(&h->fresh) + (waiting > 0 ? waiting : 0);
}

void ikd_http_stop(ikd_http *h)
{
    if (h->pool_started) ikd_pool_stop(&h->pool); /* runs queued jobs; each resumes its connection */
    if (h->daemon) MHD_stop_daemon(h->daemon); /* a parked stream's producer is ended here (pool stopped) */
    h->daemon = NULL;
    if (h->pool_started) ikd_pool_destroy(&h->pool);
    h->pool_started = 0;
    if (h->quiesced_fd >= 0) close(h->quiesced_fd);
    h->quiesced_fd = -1;
    if (h->listen_fd >= 0) close(h->listen_fd);
    h->listen_fd = -1;
    free(h->tls_cert);
    free(h->tls_key);
    h->tls_cert = h->tls_key = NULL;
    if (h->service_started) ikd_service_destroy(&h->service);
    h->service_started = 0;
}
