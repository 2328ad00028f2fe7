/* filewarn.h - the warnings an imported file gives (a quirk read past, a part not represented), kept up to a bound and counted. */
#ifndef IKD_FILEWARN_H
#define IKD_FILEWARN_H

#include <stddef.h>

#define IKD_FILE_WARN_MAX 16 /* warnings kept (more are counted) */

typedef struct ikd_file_warning {
    char code[32];      /* e.g. "frame_count", "joint_fixed", "scale_animated" */
    char message[160];
    char field[128];    /* where in the file: "line 12", "robot.joint[j]", "animations[0].channels[2]" */
} ikd_file_warning;

typedef struct ikd_file_warnings {
    ikd_file_warning w[IKD_FILE_WARN_MAX];
    size_t count;       /* all of them, also those not kept */
} ikd_file_warnings;

/* One more warning (kept while there is room; counted either way). */
void ikd_file_warn(ikd_file_warnings *ws, const char *code, const char *field, const char *message);
/* The warnings kept. */
static inline size_t ikd_file_warnings_kept(const ikd_file_warnings *ws)
{
    return ws->count < IKD_FILE_WARN_MAX ? ws->count : IKD_FILE_WARN_MAX;
}

#endif
