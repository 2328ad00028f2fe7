/* task.h - a unit of work for a worker pool: what the service hands over, what the pool runs. */
#ifndef IKD_TASK_H
#define IKD_TASK_H

/* The pool hands a task back to run on a worker; `worker_data` is that
 * worker's private data (for the service: an ikd_api_scratch). Embed it as
 * the first member of a larger struct to carry state. */
typedef struct ikd_task ikd_task;
struct ikd_task {
    void (*run)(ikd_task *task, void *worker_data);
    ikd_task *next; /* the pool's, while the task waits in its list of resumed tasks */
};

#endif
