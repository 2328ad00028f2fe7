/* filewarn.c - the warnings an imported file gives (a quirk read past, a part not represented), kept up to a bound and counted. */
#include "filewarn.h"

#include <stdio.h>

void ikd_file_warn(ikd_file_warnings *ws, const char *code, const char *field, const char *message)
{
    if (ws->count < IKD_FILE_WARN_MAX) {
        ikd_file_warning *w = &ws->w[ws->count];
        snprintf(w->code, sizeof w->code, "%s", code);
        snprintf(w->message, sizeof w->message, "%s", message);
        snprintf(w->field, sizeof w->field, "%s", field);
    }
    ws->count++;
}
