#pragma once
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift cannot import; these wrappers make SQLite copy the bytes.
static inline int shim_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text, length, SQLITE_TRANSIENT);
}

static inline int shim_bind_blob_transient(sqlite3_stmt *stmt, int index, const void *bytes, int length) {
    if (length == 0) return sqlite3_bind_zeroblob(stmt, index, 0);
    return sqlite3_bind_blob(stmt, index, bytes, length, SQLITE_TRANSIENT);
}
