/* harness.h - helpers of the end-to-end suites: the real daemon on a free loopback port and a raw HTTP client. */
#ifndef IKD_HARNESS_H
#define IKD_HARNESS_H

#include <stddef.h>
#include <check.h>
#include <sys/types.h>

typedef struct daemon_proc {
    pid_t pid;
    int port;
} daemon_proc;

typedef struct reply {
    int status;
    char headers[4096];
    char *body;
    size_t body_len;
} reply;

/* What the test is doing, named in read_reply's failure messages. */
extern const char *harness_phase;

/* A valid two-bone solve body. */
extern const char *const SOLVE;

const char *ikd_bin(void);
const char *fixtures_dir(void);
/* Start ikd with --listen 127.0.0.1:0 plus `args` (NULL-terminated); its stderr
 * goes to /dev/null unless IKD_TEST_VERBOSE is set. */
daemon_proc start_ikd(const char *const *args);
/* SIGTERM and wait; the exit status (or -1 if not a normal exit). */
int stop_ikd(daemon_proc *d);
int wait_ikd(daemon_proc *d); /* waitpid's status; a hang fails the test with the daemon's stacks */
int connect_to(int port);
/* connect_to with the socket's receive buffer set first (a slow reader's
 * small TCP window); rcvbuf <= 0: the default. */
int connect_with_rcvbuf(int port, int rcvbuf);
void send_all(int fd, const char *data, size_t len);
/* Read one whole reply (the server closes, or Content-Length is satisfied). */
reply read_reply(int fd);
/* One request on a new connection (Connection: close); `extra` is more header lines ("A: b\r\n"), may be NULL. */
reply request_h(int port, const char *method, const char *path, const char *ctype, const char *extra,
                const char *body);
reply request(int port, const char *method, const char *path, const char *ctype, const char *body);
/* The reply is a JSON error with this status, code and field. */
void assert_error(const reply *r, int status, const char *code, const char *field);
/* A good solve is answered correctly. */
void assert_alive(int port);
/* The server closes `fd` within `ms` milliseconds without sending a byte. */
void assert_closed_unanswered(int fd, int ms);
/* The raw text of POST /v1/solve with the SOLVE body, keep-alive or
 * Connection: close; returns its length. */
int solve_text(char *buf, size_t size, int close);

/* A batch body of `items` copies of {"solver": solver, "chain": {"joints":
 * [[0,0,0], [0,1,0], ... (`joints` of them)]}, <rest>} (rest: the target
 * and any options, as JSON members). malloc'd: free it. */
char *straight_chain_batch(size_t items, int joints, const char *solver, const char *rest);

/* Run a libcheck suite; the process exit status. */
int run_suite(Suite *s);

/* 1 when the reply has header `name` with exactly `value` (value NULL: any). */
int has_header(const reply *r, const char *name, const char *value);

#endif
