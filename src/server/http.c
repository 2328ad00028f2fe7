/* http.c - libmicrohttpd glue: routing, body limits, suspend/resume around pool solves, replies. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../codec/buf.h"
#include "api.h"

typedef enum { REQ_RECEIVING, REQ_QUEUED, REQ_DONE } req_state;

/* One request's context (MHD's per-request pointer). */
typedef struct ikd_http_req {
    ikd_pool_job job; /* first member: the pool hands this back */
    ikd_http *h;
    struct MHD_Connection *conn;
    const ikd_route *route;
    req_state state;
    int too_large;
    int status;
    ikd_buf body;
    ikd_buf reply;
} ikd_http_req;

static enum MHD_Result send_buf(struct MHD_Connection *conn, int status, ikd_buf *b, const char *allow,
                                int retry_after, int close)
{
    size_t len;
    char *data = ikd_buf_release(b, &len);
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data ? data : "", data ? MHD_RESPMEM_MUST_FREE
                                                                                          : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    if (allow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    if (retry_after) MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (close) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned int)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, ikd_code code, const char *field, const char *msg,
                                  const char *allow, int close)
{
    ikd_buf b;
    ikd_buf_init(&b);
    int status = ikd_api_error(&b, code, field, msg ? "%s" : NULL, msg);
    return send_buf(conn, status, &b, allow, status == 503, close);
}

static void solve_job(ikd_pool_job *job, void *worker_data)
{
    ikd_http_req *rq = (ikd_http_req *)job;
    long delay = rq->h->cfg->debug_delay_ms;
    if (delay > 0) {
        struct timespec ts = {delay / 1000, (delay % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    rq->status = ikd_api_solve(worker_data, rq->body.data ? rq->body.data : "", rq->body.len, &rq->reply);
    rq->state = REQ_DONE;
    MHD_resume_connection(rq->conn); /* the connection thread takes over; rq is not touched after this */
}

static enum MHD_Result on_first_call(ikd_http *h, struct MHD_Connection *conn, const char *url, const char *method,
                                     void **con_cls)
{
    const ikd_route *route = ikd_api_route(url);
    if (atomic_load(&h->draining)) return send_error(conn, IKD_E_DRAINING, NULL, NULL, NULL, 1);
    if (!route) return send_error(conn, IKD_E_NOT_FOUND, "", "no such endpoint (see openapi.yaml)", NULL, 0);
    if (!ikd_api_method_allowed(route, method)) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s takes %s", route->path, route->allow);
        return send_error(conn, IKD_E_METHOD, "", msg, route->allow, 0);
    }
    if (!route->has_body) {
        ikd_buf b;
        ikd_buf_init(&b);
        int status = ikd_api_healthz(&b);
        return send_buf(conn, status, &b, NULL, 0, 0);
    }
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!ikd_api_json_content_type(ct))
        return send_error(conn, IKD_E_MEDIA_TYPE, "", "the body must be application/json", NULL, 1);
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    unsigned long long declared = 0;
    if (cl) {
        char *end;
        errno = 0;
        declared = strtoull(cl, &end, 10);
        if (errno || end == cl || (unsigned long long)h->cfg->max_body < declared) {
            char msg[96];
            snprintf(msg, sizeof msg, "the body is larger than %ld bytes", h->cfg->max_body);
            return send_error(conn, IKD_E_TOO_LARGE, "", msg, NULL, 1);
        }
    }
    ikd_http_req *rq = calloc(1, sizeof *rq);
    if (!rq) return MHD_NO;
    rq->job.run = solve_job;
    rq->h = h;
    rq->conn = conn;
    rq->route = route;
    ikd_buf_init(&rq->body);
    ikd_buf_init(&rq->reply);
    if (declared) ikd_buf_reserve(&rq->body, (size_t)declared);
    *con_cls = rq;
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    ikd_http *h = cls;
    (void)version;
    if (!*con_cls) {
        atomic_fetch_add(&h->active, 1);
        *con_cls = h; /* marks "counted"; replaced by a request context when there is a body */
        enum MHD_Result r = on_first_call(h, conn, url, method, con_cls);
        return r;
    }
    if (*con_cls == h) { /* a reply was queued already: discard any body that follows */
        *upload_data_size = 0;
        return MHD_YES;
    }
    ikd_http_req *rq = *con_cls;
    if (*upload_data_size > 0) {
        if (!rq->too_large) {
            if (rq->body.len + *upload_data_size > (size_t)h->cfg->max_body) {
                rq->too_large = 1;
                ikd_buf_destroy(&rq->body);
            } else {
                ikd_buf_append(&rq->body, upload_data, *upload_data_size);
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (rq->state == REQ_DONE) return send_buf(conn, rq->status, &rq->reply, NULL, rq->status == 503, 0);
    if (rq->state == REQ_QUEUED) return MHD_YES; /* spurious call while suspended */
    if (rq->too_large) {
        char msg[96];
        snprintf(msg, sizeof msg, "the body is larger than %ld bytes", h->cfg->max_body);
        return send_error(conn, IKD_E_TOO_LARGE, "", msg, NULL, 1);
    }
    if (rq->body.failed) return send_error(conn, IKD_E_NOMEM, "", NULL, NULL, 1);
    rq->state = REQ_QUEUED;
    MHD_suspend_connection(conn);
    int rc = ikd_pool_submit(&h->pool, &rq->job);
    if (rc != 0) {
        rq->status = ikd_api_error(&rq->reply, rc == -1 ? IKD_E_OVERLOADED : IKD_E_DRAINING, "", NULL);
        rq->state = REQ_DONE;
        MHD_resume_connection(conn);
    }
    return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    ikd_http *h = cls;
    (void)conn;
    (void)toe;
    if (!*con_cls) return;
    if (*con_cls != h) {
        ikd_http_req *rq = *con_cls;
        ikd_buf_destroy(&rq->body);
        ikd_buf_destroy(&rq->reply);
        free(rq);
    }
    *con_cls = NULL;
    atomic_fetch_sub(&h->active, 1);
}

static int bind_listen(ikd_http *h, char *errbuf, size_t errlen)
{
    char host[256], portstr[16];
    int port;
    ikd_config_split_listen(h->cfg->listen, host, sizeof host, &port);
    snprintf(portstr, sizeof portstr, "%d", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host, portstr, &hints, &res);
    if (gai != 0) {
        snprintf(errbuf, errlen, "listen %s: %s", h->cfg->listen, gai_strerror(gai));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) { err = errno; continue; }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(errbuf, errlen, "listen %s: %s", h->cfg->listen, strerror(err));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    char addr[INET6_ADDRSTRLEN] = "?";
    int bound_port = 0;
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof addr);
        bound_port = ntohs(s6->sin6_port);
        snprintf(h->url, sizeof h->url, "http://[%s]:%d", addr, bound_port);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof addr);
        bound_port = ntohs(s4->sin_port);
        snprintf(h->url, sizeof h->url, "http://%s:%d", addr, bound_port);
    }
    h->listen_fd = fd;
    return 0;
}

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

int ikd_http_start(ikd_http *h, const ikd_config *cfg, char *errbuf, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->cfg = cfg;
    h->listen_fd = -1;
    atomic_init(&h->active, 0);
    atomic_init(&h->draining, 0);
    if (bind_listen(h, errbuf, errlen) != 0) return -1;
    long workers = cfg->workers;
    if (workers == 0) {
        workers = sysconf(_SC_NPROCESSORS_ONLN);
        if (workers < 1) workers = 1;
    }
    if (ikd_pool_init(&h->pool, (int)workers, (size_t)cfg->queue, worker_init, worker_destroy, h) != 0) {
        snprintf(errbuf, errlen, "cannot start %ld workers", workers);
        goto fail;
    }
    h->pool_started = 1;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    h->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
                                 MHD_OPTION_LISTEN_SOCKET, h->listen_fd,
                                 MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)cfg->io_threads,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->conn_timeout,
                                 MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                                 MHD_OPTION_LISTENING_ADDRESS_REUSE, 1,
                                 MHD_OPTION_END);
    if (!h->daemon) {
        snprintf(errbuf, errlen, "cannot start the HTTP daemon");
        goto fail;
    }
    return 0;
fail:
    if (h->pool_started) ikd_pool_destroy(&h->pool);
    h->pool_started = 0;
    if (h->listen_fd >= 0) close(h->listen_fd);
    h->listen_fd = -1;
    return -1;
}

void ikd_http_drain(ikd_http *h)
{
    atomic_store(&h->draining, 1);
    if (h->daemon && h->listen_fd >= 0) {
        MHD_socket fd = MHD_quiesce_daemon(h->daemon);
        if (fd != MHD_INVALID_SOCKET) close(fd);
        h->listen_fd = -1;
    }
}

long ikd_http_active(ikd_http *h) { return atomic_load(&h->active); }

void ikd_http_stop(ikd_http *h)
{
    if (h->pool_started) ikd_pool_destroy(&h->pool); /* runs queued solves; each resumes its connection */
    h->pool_started = 0;
    if (h->daemon) MHD_stop_daemon(h->daemon);
    h->daemon = NULL;
    if (h->listen_fd >= 0) close(h->listen_fd);
    h->listen_fd = -1;
}
