#ifndef HEALTHGATE_CZLIB_SHIM_H
#define HEALTHGATE_CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2 is a macro over deflateInit2_ (it passes the library version and the stream
// size), which Swift cannot import; this wrapper makes it callable.
static inline int shim_deflateInit2(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}

// inflateInit2 is a macro too (used by tests to check a gzip round trip).
static inline int shim_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
#endif
