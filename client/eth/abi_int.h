/* Private to client/eth/abi*.c: what the type parser (abi_type.c), the encoder/decoder (abi.c)
 * and the builder (abi_builder.c) share. Not for other modules: use eth/abi.h. */
#ifndef BBVFL_ETH_ABI_INT_H
#define BBVFL_ETH_ABI_INT_H

#include <stddef.h>

#include "eth/abi.h"

#define ABI_MAX_DEPTH 32
#define ABI_MAX_STATIC_HEAD ((size_t)1 << 24) /* bytes; larger static types are refused */

/* Bytes the type takes in the head of its enclosing tuple (32 for a dynamic type). Bounded by
 * the parser (ABI_MAX_STATIC_HEAD), so it cannot overflow for a type bbvfl_abi_type_parse made. */
size_t bbvfl_abi_head_size(const bbvfl_abi_type *t);

#endif
