/* baseline.c - the HTTP ceiling for the load test: a minimal libmicrohttpd POST handler configured like ikd.
 *
 * It reads the request body and answers a fixed small JSON reply, with the
 * same threading mode, I/O thread count and connection settings as ikd, so
 * that ikd's request rate can be reported as a fraction of what the HTTP stack
 * alone does on this machine in the same run. Usage:
 *   baseline [--listen HOST:PORT] [--io-threads N]     (port 0 = any free port)
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char reply[] = "{\"ok\":true}";

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)cls;
    (void)url;
    (void)method;
    (void)version;
    (void)upload_data;
    if (!*con_cls) { /* first call: headers only; answer on the final call to keep the connection alive */
        *con_cls = conn;
        return MHD_YES;
    }
    if (*upload_data_size) { /* read and drop the body */
        *upload_data_size = 0;
        return MHD_YES;
    }
    struct MHD_Response *r =
        MHD_create_response_from_buffer(sizeof reply - 1, (void *)reply, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

int main(int argc, char **argv)
{
    int port = 0;
    unsigned int io_threads = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--listen")) {
            const char *c = strrchr(argv[i + 1], ':');
            port = c ? atoi(c + 1) : atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--io-threads")) {
            io_threads = (unsigned int)atoi(argv[i + 1]);
        }
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC, 0, NULL, NULL,
        on_request, NULL, MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_THREAD_POOL_SIZE, io_threads,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_LIMIT, 1024u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)8192, /* ikd's --conn-buffer default */ MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "baseline: cannot start\n");
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("baseline listening on http://127.0.0.1:%u\n", info ? info->port : 0);
    fflush(stdout);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
    return 0;
}
