/* stream.h - a reply written while it is produced: a worker pushes bytes, the transport reads them as they come. */
#ifndef IKD_STREAM_H
#define IKD_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "../codec/buf.h"

/* One streamed reply, shared by its producer (a worker) and the transport
 * (libmicrohttpd's connection): each holds a reference; the last release
 * frees it. The transport parks itself when it has read everything so far
 * and is woken when more comes; once it detaches (the client is gone) the
 * producer sees `cancel` and stops. */
typedef struct ikd_stream {
    pthread_mutex_t lock;
    ikd_buf buf;               /* bytes pushed and not read yet start at `off` */
    size_t off;
    unsigned long long sent;   /* bytes the transport has read in all */
    int done, parked, refs;
    atomic_int cancel;         /* the transport is gone: stop producing */
    void (*wake)(void *ctx);   /* the transport's wake-up; NULL when detached */
    void *ctx;
    atomic_size_t *held;       /* where unread bytes are charged (ikd_stream_account); NULL: nowhere */
    size_t charged;            /* bytes charged to *held now */
} ikd_stream;

/* A stream with two references (producer and transport); NULL out of memory. */
ikd_stream *ikd_stream_new(void);
/* Charge the bytes pushed and not read yet to *held (a service's memory
 * budget count) until they are read or the stream is freed. Call before
 * the first push. */
void ikd_stream_account(ikd_stream *s, atomic_size_t *held);
/* The producer: append n bytes (done = 1: the last of them) and wake a
 * parked transport. 0, or -1 out of memory (the stream then ends). */
int ikd_stream_push(ikd_stream *s, const char *data, size_t n, int done);
/* The transport: how to wake it. */
void ikd_stream_attach(ikd_stream *s, void (*wake)(void *ctx), void *ctx);
/* The transport: up to `max` bytes into dst; 0 when none are ready (then
 * park(ctx) is called under the stream's lock, so a wake cannot be missed);
 * -1 at the end. */
long ikd_stream_read(ikd_stream *s, char *dst, size_t max, void (*park)(void *ctx), void *ctx);
/* The transport is gone: no more wakes, the producer is told to stop. */
void ikd_stream_detach(ikd_stream *s);
/* Bytes the transport has read so far. */
unsigned long long ikd_stream_sent(ikd_stream *s);
void ikd_stream_release(ikd_stream *s);

#endif
