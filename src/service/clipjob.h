/* clipjob.h - a clip on the worker pool: into one reply, or streamed by a job that parks while its reader is behind. */
#ifndef IKD_CLIPJOB_H
#define IKD_CLIPJOB_H

#include "call.h"

/* A streamed clip (on a worker): every frame validated first (an error is
 * an ordinary reply), then the body freed, the call handed back with its
 * stream (hooks.finished), and the frames solved into it by a job that
 * gives its worker back whenever the stream parks it. */
void ikd_clipjob_stream(ikd_call *c);
/* A clip into one reply (on a worker): decoded, the body freed, the
 * reply's size charged before any frame is solved (413 when it could never
 * fit the budget, 503 when it does not fit now). The caller calls
 * hooks.finished. */
void ikd_clipjob_whole(ikd_call *c);

#endif
