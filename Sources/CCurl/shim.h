#pragma once
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic: Swift cannot call them, so each argument
// type gets a typed wrapper.
static inline CURLcode hg_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode hg_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode hg_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*hg_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode hg_curl_setopt_callback(CURL *handle, CURLoption option, hg_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode hg_curl_response_code(CURL *handle, long *code) {
    return curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, code);
}

typedef int (*hg_curl_progress_callback)(void *context, curl_off_t download_total, curl_off_t downloaded,
                                         curl_off_t upload_total, curl_off_t uploaded);

static inline CURLcode hg_curl_setopt_progress(CURL *handle, hg_curl_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
