#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H

#include <zlib.h>

/// `deflateInit2` is a macro: a raw deflate stream (no zlib header or trailer, as permessage-deflate sends) with a
/// window of 2^`window_bits` bytes.
static inline int CZlib_deflateInitRaw(z_stream *stream, int level, int window_bits, int memory_level) {
    return deflateInit2(stream, level, Z_DEFLATED, -window_bits, memory_level, Z_DEFAULT_STRATEGY);
}

/// `inflateInit2` is a macro: a raw inflate stream that accepts any window up to 32 KiB.
static inline int CZlib_inflateInitRaw(z_stream *stream) {
    return inflateInit2(stream, -15);
}

#endif
