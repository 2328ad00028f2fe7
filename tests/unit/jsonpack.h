/* jsonpack.h - test helper: a jansson value written as MessagePack. */
#ifndef IKD_JSONPACK_H
#define IKD_JSONPACK_H

#include <jansson.h>
#include <msgpack.h>

void tu_pack_json(msgpack_packer *pk, json_t *v);

#endif
