/* jsonpack.c - test helper: a jansson value written as MessagePack (the same document in the other encoding). */
#include "jsonpack.h"

#include <string.h>

void tu_pack_json(msgpack_packer *pk, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *x;
        msgpack_pack_map(pk, json_object_size(v));
        json_object_foreach(v, k, x) {
            msgpack_pack_str(pk, strlen(k));
            msgpack_pack_str_body(pk, k, strlen(k));
            tu_pack_json(pk, x);
        }
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        msgpack_pack_array(pk, json_array_size(v));
        json_array_foreach(v, i, x) tu_pack_json(pk, x);
        break;
    }
    case JSON_STRING:
        msgpack_pack_str(pk, json_string_length(v));
        msgpack_pack_str_body(pk, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER: msgpack_pack_int64(pk, json_integer_value(v)); break;
    case JSON_REAL: msgpack_pack_double(pk, json_real_value(v)); break;
    case JSON_TRUE: msgpack_pack_true(pk); break;
    case JSON_FALSE: msgpack_pack_false(pk); break;
    default: msgpack_pack_nil(pk); break;
    }
}

