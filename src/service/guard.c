/* guard.c - the CORS origin list and the constant-time bearer token check. */
#include "guard.h"

#include <string.h>
#include <strings.h>

void ikd_guard_init(ikd_guard *g, const char *cors_origins, const char *token)
{
    memset(g, 0, sizeof *g);
    size_t tl = strlen(token);
    if (tl >= sizeof g->token) tl = sizeof g->token - 1;
    memcpy(g->token, token, tl);
    const char *p = cors_origins;
    while (*p) {
        size_t n = strcspn(p, ",");
        while (n && *p == ' ') p++, n--;
        size_t m = n;
        while (m && p[m - 1] == ' ') m--;
        if (m == 1 && *p == '*') g->cors_any = 1;
        else if (m && m < sizeof g->cors[0] && g->cors_count < IKD_GUARD_MAX_ORIGINS) {
            memcpy(g->cors[g->cors_count], p, m);
            g->cors[g->cors_count++][m] = '\0';
        }
        p += n;
        if (*p == ',') p++;
    }
}

int ikd_guard_cors(const ikd_guard *g) { return g->cors_any || g->cors_count > 0; }

int ikd_guard_origin_allowed(const ikd_guard *g, const char *origin)
{
    if (!origin) return 0;
    if (g->cors_any) return 1;
    for (int i = 0; i < g->cors_count; i++)
        if (strcmp(g->cors[i], origin) == 0) return 1;
    return 0;
}

int ikd_guard_token_ok(const ikd_guard *g, const char *header)
{
    if (!g->token[0]) return 1;
    if (!header || strncasecmp(header, "Bearer ", 7) != 0) return 0;
    const char *got = header + 7;
    size_t gl = strlen(got), tl = strlen(g->token);
    unsigned diff = gl != tl;
    for (size_t i = 0; i < tl; i++) diff |= (unsigned)(g->token[i] ^ (i < gl ? got[i] : 0));
    return diff == 0;
}
