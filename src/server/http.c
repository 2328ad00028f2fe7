/* http.c - libmicrohttpd glue: request heads and bodies into the service layer, its replies out, connection limits, start/stop. */
#include "http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "listen.h"
#include "log.h"

/* RECEIVING: reading the head or body; DECIDED: the answer is known from the
 * head but is queued only on MHD's final call (a response queued in the
 * first call makes libmicrohttpd close the connection); QUEUED: on the pool,
 * connection suspended; DONE: the pool has finished; ANSWERED: queued. */
typedef enum { REQ_RECEIVING, REQ_DECIDED, REQ_QUEUED, REQ_DONE, REQ_ANSWERED } req_state;

/* One request's context (MHD's per-request pointer). */
typedef struct ikd_http_req {
    ikd_call call; /* first member: the service hands it back */
    ikd_http *h;
    struct MHD_Connection *conn;
    req_state state;
    unsigned long reply_bytes;
    char method[16];
    char path[256];
} ikd_http_req;

/* ---- replies ----------------------------------------------------------- */

/* Queue the call's reply (counted in the metrics). */
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
    ikd_header hdr[IKD_CALL_MAX_HEADERS];
    size_t n = ikd_call_headers(c, atomic_load(&rq->h->draining), hdr);
    for (size_t i = 0; i < n; i++) MHD_add_response_header(r, hdr[i].name, hdr[i].value);
    enum MHD_Result ret = MHD_queue_response(rq->conn, (unsigned int)c->status, r);
    MHD_destroy_response(r);
    rq->reply_bytes = len;
    rq->state = REQ_ANSWERED;
    ikd_metrics_request(&rq->h->metrics, ikd_call_route_slot(c), c->status);
    return ret;
}

/* Answer: at once when a body is on its way (it will not be read: the
 * connection closes after), else on MHD's final call for this request so
 * that the connection stays open for the next one. */
static enum MHD_Result respond(ikd_http_req *rq)
{
    if (rq->state == REQ_RECEIVING && !rq->call.has_body) {
        rq->state = REQ_DECIDED;
        return MHD_YES;
    }
    if (rq->state == REQ_RECEIVING) rq->call.close = 1;
    return queue_now(rq);
}

/* ---- service hooks ----------------------------------------------------- */

static void hook_solved(void *ctx, ikd_solver solver, ikd_status status, double seconds)
{
    ikd_metrics_solve(&((ikd_http *)ctx)->metrics, solver, status, seconds);
}

static void hook_rejected(void *ctx, ikd_reject_reason why) { ikd_metrics_reject(&((ikd_http *)ctx)->metrics, why); }

static int hook_submit(void *ctx, ikd_task *task) { return ikd_pool_submit(&((ikd_http *)ctx)->pool, task); }

static size_t hook_idle(void *ctx)
{
    ikd_http *h = ctx;
    size_t queued, running;
    ikd_pool_load(&h->pool, &queued, &running);
    return (size_t)h->nworkers > queued + running ? (size_t)h->nworkers - queued - running : 0;
}

static int hook_ready(void *ctx)
{
    ikd_http *h = ctx;
    return atomic_load(&h->ready) && !atomic_load(&h->draining);
}

static void hook_metrics(void *ctx, ikd_buf *out)
{
    ikd_http *h = ctx;
    const char *names[IKD_METRICS_ROUTES];
    for (int i = 0; i < IKD_ROUTE__COUNT; i++) names[i] = ikd_route_all()[i].path;
    names[IKD_ROUTE__COUNT] = "unmatched";
    ikd_metrics_gauges g;
    ikd_pool_load(&h->pool, &g.queue_depth, &g.running);
    g.queue_capacity = (size_t)h->cfg->queue;
    g.workers = (size_t)h->nworkers;
    g.in_flight = ikd_http_active(h);
    g.draining = atomic_load(&h->draining);
    ikd_metrics_render(&h->metrics, names, IKD_METRICS_ROUTES, &g, out);
}

/* A pooled call has its reply: hand the connection back to MHD (rq is not
 * touched after). */
static void hook_finished(ikd_call *call)
{
    ikd_http_req *rq = (ikd_http_req *)call;
    rq->state = REQ_DONE;
    MHD_resume_connection(rq->conn);
}

/* Per connection (libmicrohttpd's socket context): the client's address as
 * text for the access log, formatted once, and whether a request has begun
 * on it (a drain waits for accepted connections whose first request has not
 * begun yet, as for requests). */
typedef struct conn_ctx {
    int begun;
    char client[INET6_ADDRSTRLEN];
} conn_ctx;

static conn_ctx *conn_context(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* ---- request handling -------------------------------------------------- */

/* Copy a string, cut to fit `size` bytes with its NUL. */
static void copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

static enum MHD_Result on_first_call(ikd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                                     void **con_cls)
{
    conn_ctx *cc = conn_context(conn);
    if (cc && !cc->begun) {
        cc->begun = 1;
        atomic_fetch_sub(&h->fresh, 1);
    }
    ikd_http_req *rq = malloc(sizeof *rq);
    if (!rq) return MHD_NO;
    *con_cls = rq;
    atomic_fetch_add(&h->active, 1);
    ikd_call_init(&rq->call, &h->service, ikd_clock_ns());
    rq->h = h;
    rq->conn = conn;
    rq->state = REQ_RECEIVING;
    rq->reply_bytes = 0;
    copy_str(rq->method, sizeof rq->method, method);
    copy_str(rq->path, sizeof rq->path, url);
    ikd_head head = {method,
                          url,
                          header(conn, MHD_HTTP_HEADER_CONTENT_TYPE),
                          header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH),
                          header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING),
                          header(conn, MHD_HTTP_HEADER_ACCEPT),
                          header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
                          header(conn, "Origin"),
                          header(conn, "X-Request-Id"),
                          header(conn, "Access-Control-Request-Method")};
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
    if (rq->state == REQ_ANSWERED || rq->state == REQ_DECIDED) { /* discard any body that follows */
        if (*upload_data_size == 0 && rq->state == REQ_DECIDED) return queue_now(rq);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        ikd_call_body(&rq->call, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->state == REQ_DONE) return queue_now(rq);
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
    if (ikd_log_enabled(IKD_LOG_INFO)) {
        const conn_ctx *cc = conn_context(conn);
        const char *client = cc ? cc->client : "";
        const ikd_call *c = &rq->call;
        unsigned long long now = ikd_clock_ns();
        ikd_access a = {rq->method, rq->path, c->request_id,
                        c->outcome.solved ? ikd_solver_name(c->outcome.solver) : NULL, client[0] ? client : NULL,
                        rq->state == REQ_ANSWERED ? c->status : 0, rq->reply_bytes,
                        (double)(now - c->t_start) / 1e6,
                        c->t_worker ? (double)(c->t_worker - c->t_start) / 1e6 : 0.0};
        if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && rq->state != REQ_ANSWERED) a.status = 499; /* client went away */
        ikd_log_access(&a);
    }
    ikd_call_destroy(&rq->call);
    free(rq);
    *con_cls = NULL;
    atomic_fetch_sub(&h->active, 1);
}

/* ---- the connection limit ----------------------------------------------
 * --max-connections is enforced here, not with libmicrohttpd's own limit:
 * that one is split evenly over the I/O threads, and in libmicrohttpd 0.9.75
 * (epoll, thread pool) a thread that reaches its share stops noticing its
 * closed connections until their timeout, so one burst of connections (a load
 * test started twice) left the server refusing everyone for 30 s. libmicrohttpd
 * gets a limit no thread can reach; this policy closes a connection over ours
 * at once. */

/* The client's address as text (empty when unknown), for the access log. */
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

/* Counts open connections and those with no request begun yet, and keeps
 * each one's conn_ctx (NULL when out of memory: the log line then has no
 * client, and the connection does not hold a drain). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    ikd_http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&h->connections, 1);
        conn_ctx *cc = malloc(sizeof *cc);
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

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    ikd_http *h = cls;
    (void)addr;
    (void)addrlen;
    if (atomic_load(&h->connections) < h->cfg->max_connections) return MHD_YES;
    ikd_metrics_reject(&h->metrics, IKD_REJECT_CONNECTIONS);
    return MHD_NO;
}

/* ---- start and stop ---------------------------------------------------- */

static void *worker_init(void *arg, int index)
{
    ikd_http *h = arg;
    (void)index;
    ikd_api_scratch *s = malloc(sizeof *s);
    if (!s || ikd_api_scratch_init(s, (size_t)h->cfg->max_joints) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

static void worker_destroy(void *data)
{
    ikd_api_scratch_destroy(data);
    free(data);
}

static long online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n;
}

static int start_service(ikd_http *h, const ikd_config *cfg)
{
    ikd_service_settings set = {{(size_t)cfg->max_joints, (int)cfg->max_iterations, (size_t)cfg->max_batch, NULL},
                                cfg->max_body,
                                cfg->deadline_ms,
                                cfg->debug_delay_ms,
                                cfg->cors_origins,
                                cfg->api_token};
    ikd_service_hooks hooks = {h,         hook_solved, hook_rejected, hook_submit, hook_idle,
                               hook_ready, hook_metrics, hook_finished};
    if (ikd_service_init(&h->service, &set, &hooks) != 0) return -1;
    h->service_started = 1;
    return 0;
}

static struct MHD_Daemon *start_daemon(ikd_http *h, const ikd_config *cfg, int tls, long io_threads)
{
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    if (tls) flags |= MHD_USE_TLS;
    struct MHD_OptionItem ops[] = {
        {MHD_OPTION_LISTEN_SOCKET, h->listen_fd, NULL},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)io_threads, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)cfg->conn_timeout, NULL},
        /* libmicrohttpd zeroes this buffer for every request on a keep-alive
         * connection; its default 32 KiB showed in profiles (docs/performance.md) */
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)cfg->conn_buffer, NULL},
        /* beyond any one thread's reach: accept_policy enforces --max-connections */
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)((cfg->max_connections + 64) * io_threads), NULL},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, h},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)cfg->max_connections_per_ip, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, h},
        {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, h->tls_cert},
        {tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, h->tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    return MHD_start_daemon(flags, 0, accept_policy, h, on_request, h, MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
}

int ikd_http_start(ikd_http *h, const ikd_config *cfg, char *errbuf, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->cfg = cfg;
    h->listen_fd = h->quiesced_fd = -1;
    atomic_init(&h->active, 0);
    atomic_init(&h->connections, 0);
    atomic_init(&h->fresh, 0);
    atomic_init(&h->draining, 0);
    atomic_init(&h->ready, 0);
    ikd_metrics_init(&h->metrics);
    int tls = cfg->tls_cert[0] != '\0';
    if (start_service(h, cfg) != 0) {
        snprintf(errbuf, errlen, "out of memory");
        goto fail;
    }
    if (tls) {
        if (!(h->tls_cert = ikd_listen_read_file(cfg->tls_cert, errbuf, errlen))) goto fail;
        if (!(h->tls_key = ikd_listen_read_file(cfg->tls_key, errbuf, errlen))) goto fail;
    }
    h->listen_fd = ikd_listen_bind(cfg->listen, tls ? "https" : "http", h->url, sizeof h->url, errbuf, errlen);
    if (h->listen_fd < 0) goto fail;
    h->nworkers = (int)(cfg->workers ? cfg->workers : online_cpus());
    if (ikd_pool_init(&h->pool, h->nworkers, (size_t)cfg->queue, worker_init, worker_destroy, h) != 0) {
        snprintf(errbuf, errlen, "cannot start %d workers", h->nworkers);
        goto fail;
    }
    h->pool_started = 1;
    h->daemon = start_daemon(h, cfg, tls, cfg->io_threads ? cfg->io_threads : online_cpus());
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
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int c = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
        if (c < 0) break; /* EAGAIN: empty (the socket is non-blocking) */
        MHD_add_connection(h->daemon, c, (struct sockaddr *)&ss, sl);
    }
    shutdown(fd, SHUT_RD);
    h->quiesced_fd = fd;
    h->listen_fd = -1;
}

void ikd_http_abort(ikd_http *h) { ikd_service_stop(&h->service); }

long ikd_http_active(ikd_http *h) { return atomic_load(&h->active); }

long ikd_http_busy(ikd_http *h) { return atomic_load(&h->active) + atomic_load(&h->fresh); }

void ikd_http_stop(ikd_http *h)
{
    if (h->pool_started) ikd_pool_destroy(&h->pool); /* runs queued jobs; each resumes its connection */
    h->pool_started = 0;
    if (h->daemon) MHD_stop_daemon(h->daemon);
    h->daemon = NULL;
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
