/* stream.h - a reply written while it is produced: a worker pushes bytes, the transport reads them as they come. */
#ifndef IKD_STREAM_H
#define IKD_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "../codec/buf.h"

/* Unread bytes at which a stream parks its producer (IKD_STREAM_HIGH) and
 * below which the reader resumes it (IKD_STREAM_LOW): a client that reads
 * slowly or not at all holds at most IKD_STREAM_HIGH bytes plus one frame
 * here (besides what the kernel's socket buffers take), and no worker. */
#define IKD_STREAM_HIGH (256 * 1024)
#define IKD_STREAM_LOW (64 * 1024)

/* One streamed reply, shared by its producer (a job on the worker pool)
 * and the transport (libmicrohttpd's connection): each holds a reference;
 * the last release frees it. The transport parks itself when it has read
 * everything so far and is woken when more comes. The producer parks when
 * IKD_STREAM_HIGH bytes wait unread: it returns its worker to the pool, and
 * the reader calls its resume hook once fewer than IKD_STREAM_LOW wait
 * (the producer then goes on from where it stopped), or its abandon hook
 * when the transport detaches meanwhile. Once the transport detaches (the
 * client is gone) a running producer sees `cancel` and stops. */
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
    size_t high;               /* unread bytes that park the producer; 0: never parks */
    int producer_parked;
    void (*resume)(void *ctx); /* the producer's hooks (ikd_stream_producer) */
    void (*abandon)(void *ctx);
    void *producer_ctx;
} ikd_stream;

/* A stream with two references (producer and transport); NULL out of memory. */
ikd_stream *ikd_stream_new(void);
/* Charge the bytes pushed and not read yet to *held (a service's memory
 * budget count) until they are read or the stream is freed. Call before
 * the first push. */
void ikd_stream_account(ikd_stream *s, atomic_size_t *held);
/* The producer parks at IKD_STREAM_HIGH unread bytes: resume(ctx) is
 * called (by the reader's thread) to run it again, abandon(ctx) when the
 * transport detaches while it is parked (the producer then ends the
 * stream and releases its reference). Without this call the producer
 * never parks. Call before the first push. */
void ikd_stream_producer(ikd_stream *s, void (*resume)(void *ctx), void (*abandon)(void *ctx), void *ctx);
/* The producer: append n bytes (done = 1: the last of them) and wake a
 * parked transport. 0; -1 out of memory (the stream then ends); 1 when
 * the producer is now parked: it must stop until resume or abandon. */
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
