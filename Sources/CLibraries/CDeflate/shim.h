#pragma once
// libdeflate's types only. No library is linked (the module map has no `link`): RemoteSinkKit's
// gzip compressor opens libdeflate.so.0 with dlopen(3) when a sink starts
// (Sources/Sinks/RemoteSinkKit/Libraries/DeflateLibrary.swift), and the sink falls back to zlib
// when it is missing. Every call goes through a pointer that dlsym(3) resolved.
#include <libdeflate.h>

// The types of the entry points, taken from libdeflate.h's own prototypes so that a pointer's
// type can never disagree with the header. __typeof__ does not evaluate its operand: no reference
// to the symbol is emitted.
typedef __typeof__(&libdeflate_alloc_compressor) hg_libdeflate_alloc_compressor_fn;
typedef __typeof__(&libdeflate_gzip_compress) hg_libdeflate_gzip_compress_fn;
typedef __typeof__(&libdeflate_gzip_compress_bound) hg_libdeflate_gzip_compress_bound_fn;
typedef __typeof__(&libdeflate_free_compressor) hg_libdeflate_free_compressor_fn;
