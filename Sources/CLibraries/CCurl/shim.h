#pragma once
// libcurl's types and constants only. No library is linked (the module map has no `link`):
// the http-repository sink opens libcurl.so.4 with dlopen(3) when it starts
// (plugins/HTTPRepository/Sources/CurlLibrary.swift), so a gateway without that sink never maps
// libcurl or the TLS libraries it pulls in. Calling a curl_* function by name from Swift would
// fail to link, which is intended: every call goes through a pointer that dlsym(3) resolved.
#include <curl/curl.h>

// The types of the entry points resolved with dlsym, taken from curl.h's own prototypes so that
// the pointer's type can never disagree with the header. __typeof__ does not evaluate its operand:
// no reference to the symbol is emitted.
typedef __typeof__(&curl_global_init) hg_curl_global_init_fn;
typedef __typeof__(&curl_global_cleanup) hg_curl_global_cleanup_fn;
typedef __typeof__(&curl_easy_init) hg_curl_easy_init_fn;
typedef __typeof__(&curl_easy_cleanup) hg_curl_easy_cleanup_fn;
typedef __typeof__(&curl_easy_perform) hg_curl_easy_perform_fn;
typedef __typeof__(&curl_easy_strerror) hg_curl_easy_strerror_fn;
typedef __typeof__(&curl_slist_append) hg_curl_slist_append_fn;
typedef __typeof__(&curl_slist_free_all) hg_curl_slist_free_all_fn;

// curl_easy_setopt and curl_easy_getinfo are variadic: Swift cannot call them, so each argument
// type gets a typed wrapper. Each takes the address dlsym returned for the function as C's
// generic function pointer, `void (*)(void)` (LinuxSystem's VariadicEntryPoint), and converts it
// back to the variadic type to call it (a function pointer converted to another function pointer
// type and back is the same pointer, C11 6.3.2.3p8), so the arguments are passed as the C
// calling convention for `...` requires.
typedef CURLcode (*hg_curl_easy_setopt_fn)(CURL *handle, CURLoption option, ...);
typedef CURLcode (*hg_curl_easy_getinfo_fn)(CURL *handle, CURLINFO info, ...);

static inline CURLcode hg_curl_setopt_long(void (*setopt)(void), CURL *handle, CURLoption option, long value) {
    return ((hg_curl_easy_setopt_fn)setopt)(handle, option, value);
}

static inline CURLcode hg_curl_setopt_string(void (*setopt)(void), CURL *handle, CURLoption option, const char *value) {
    return ((hg_curl_easy_setopt_fn)setopt)(handle, option, value);
}

static inline CURLcode hg_curl_setopt_pointer(void (*setopt)(void), CURL *handle, CURLoption option, void *value) {
    return ((hg_curl_easy_setopt_fn)setopt)(handle, option, value);
}

typedef size_t (*hg_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode hg_curl_setopt_callback(void (*setopt)(void), CURL *handle, CURLoption option,
                                               hg_curl_data_callback callback) {
    return ((hg_curl_easy_setopt_fn)setopt)(handle, option, callback);
}

typedef int (*hg_curl_progress_callback)(void *context, curl_off_t download_total, curl_off_t downloaded,
                                         curl_off_t upload_total, curl_off_t uploaded);

static inline CURLcode hg_curl_setopt_progress(void (*setopt)(void), CURL *handle, hg_curl_progress_callback callback) {
    return ((hg_curl_easy_setopt_fn)setopt)(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

static inline CURLcode hg_curl_response_code(void (*getinfo)(void), CURL *handle, long *code) {
    return ((hg_curl_easy_getinfo_fn)getinfo)(handle, CURLINFO_RESPONSE_CODE, code);
}
