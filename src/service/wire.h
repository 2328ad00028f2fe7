/* wire.h - every error code the API can answer with (the library's, the codec's, the service's): wire name, HTTP status, message. */
#ifndef IKD_WIRE_H
#define IKD_WIRE_H

#include "../codec/codec.h"
#include "ikd/error.h"

/* X(enum suffix, wire code, HTTP status, default message): the service's own
 * codes, numbered after the library's (ikd/error.h) and the codec's
 * (IKD_E_MALFORMED). */
#define IKD_SERVICE_ERROR_TABLE(X)                                                               \
    X(UNAUTHORIZED, "unauthorized", 401, "missing or wrong bearer token")                        \
    X(FORBIDDEN_ORIGIN, "origin_not_allowed", 403, "this Origin is not allowed (--cors-origins)") \
    X(NOT_FOUND, "not_found", 404, "no such endpoint")                                           \
    X(METHOD, "method_not_allowed", 405, "method not allowed on this endpoint")                  \
    X(TOO_LARGE, "payload_too_large", 413, "the request body is larger than the limit")          \
    X(MEDIA_TYPE, "unsupported_media_type", 415,                                                 \
      "the body must be application/json or application/msgpack")                                \
    X(OVERLOADED, "overloaded", 503, "the solve queue is full; retry later")                     \
    X(DRAINING, "shutting_down", 503, "the server is shutting down")                             \
    X(DEADLINE, "deadline_exceeded", 503, "the request waited past its deadline; retry later")          \
    X(BAD_HTTP, "malformed_request", 400, "the HTTP request is malformed")                       \
    X(HEAD_TOO_LARGE, "header_fields_too_large", 431, "the request line and headers exceed --conn-buffer") \
    X(NOT_IMPLEMENTED, "not_implemented", 501, "this HTTP feature is not supported")

enum ikd_service_code {
    IKD_E__SERVICE_FIRST = IKD_E__CODEC_END - 1,
#define IKD_X_ENUM(name, wire, http, msg) IKD_E_##name,
    IKD_SERVICE_ERROR_TABLE(IKD_X_ENUM)
#undef IKD_X_ENUM
    IKD_E__SERVICE_END
};

/* The wire code of any code ("invalid_request"; "internal_error" for an
 * unknown value), its HTTP status (500 when unknown) and its default message. */
const char *ikd_wire_code(int code);
int ikd_wire_status(int code);
const char *ikd_wire_message(int code);

#endif
