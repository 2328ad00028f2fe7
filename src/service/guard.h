/* guard.h - who may call: the CORS origin list and the bearer token check. */
#ifndef IKD_GUARD_H
#define IKD_GUARD_H

#define IKD_GUARD_MAX_ORIGINS 32
#define IKD_GUARD_ORIGIN_MAX 256 /* longest origin kept, NUL included */
#define IKD_GUARD_TOKEN_MAX 256

typedef struct ikd_guard {
    int cors_any;   /* "*" was listed: every origin is allowed */
    int cors_count; /* origins listed (entries beyond IKD_GUARD_MAX_ORIGINS are ignored) */
    char cors[IKD_GUARD_MAX_ORIGINS][IKD_GUARD_ORIGIN_MAX];
    char token[IKD_GUARD_TOKEN_MAX]; /* "" = no token required */
} ikd_guard;

/* From --cors-origins (comma-separated, spaces trimmed; "*" = any; "" =
 * none) and --api-token ("" = none). */
void ikd_guard_init(ikd_guard *g, const char *cors_origins, const char *token);
/* 1 when CORS is on (any origin listed): replies then carry Vary: Origin. */
int ikd_guard_cors(const ikd_guard *g);
/* 1 when `origin` (may be NULL) is allowed. */
int ikd_guard_origin_allowed(const ikd_guard *g, const char *origin);
/* 1 when no token is required, or `authorization` (may be NULL) is
 * "Bearer TOKEN" with the configured token (compared in constant time). */
int ikd_guard_token_ok(const ikd_guard *g, const char *authorization);

#endif
