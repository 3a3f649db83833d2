/*
  rheap_shim.h: the narrow C interface between the C++ shim (ha_rheap.cc) and the Rust engine.

  The shim's `ha_rheap` class forwards every handler virtual to the Rust function of the same
  name with an `rheap_` prefix, so `git grep write_row` finds both sides. Functions return 0 or a
  HA_ERR_* / errno code, as the handler methods they serve do. The Rust side catches every panic
  at this boundary and maps it to HA_ERR_INTERNAL_ERROR.

  This header is plain C: bindgen reads it, and it includes no server header.
*/
#ifndef RHEAP_SHIM_H
#define RHEAP_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The Rust state of one handler object; created and freed by Rust. */
typedef struct rheap_handler rheap_handler;

/** What the engine needs of a table definition (from TABLE_SHARE and the creating thread). */
typedef struct rheap_table_def {
  /** Bytes of one row in the server's record format (TABLE_SHARE::reclength). */
  uint32_t reclength;
  /** MAX_ROWS as given, 0 when not given. */
  uint64_t max_rows;
  /** MIN_ROWS as given, 0 when not given. */
  uint64_t min_rows;
  /** max_heap_table_size of the thread that creates the table. */
  uint64_t max_table_size;
  /** AUTO_INCREMENT= of CREATE TABLE, 0 when not given. */
  uint64_t auto_increment;
  /** Non-zero for the server's internal temporary tables: private to one handler, never shared by name. */
  uint8_t internal;
} rheap_table_def;

/** What handler::info() reports (the fields of ha_statistics the engine knows). */
typedef struct rheap_stats {
  uint64_t records;
  uint64_t deleted;
  uint64_t data_file_length;
  uint64_t index_file_length;
  uint64_t max_data_file_length;
  uint64_t delete_length;
  uint64_t auto_increment_value;
  uint64_t mean_rec_length;
  int64_t create_time;
} rheap_stats;

/* ---- Implemented in Rust (engine/src/ffi) ------------------------------------------------ */

/** Plugin init: 0 on success. */
int rheap_plugin_init(void);
/** Plugin deinit: 0 when the engine can be unloaded. */
int rheap_plugin_deinit(void);
/** hton->drop_table: 0 dropped, -1 no such table, else an error code. */
int rheap_drop_table(const char *name);

/** A new handler state, or NULL when out of memory. */
rheap_handler *rheap_handler_new(void);
void rheap_handler_free(rheap_handler *h);
uint64_t rheap_table_flags(void);
uint32_t rheap_ref_length(void);

/** Opens (creating if missing, as MEMORY does after a restart) the table `name`.
    On success `*thr_lock` is the table's THR_LOCK (NULL for internal tables) and
    `*implicit_emptied` is set when the table was created empty by this open. */
int rheap_open(rheap_handler *h, const char *name, const rheap_table_def *def,
               void **thr_lock, uint8_t *implicit_emptied);
int rheap_close(rheap_handler *h);
int rheap_create(rheap_handler *h, const char *name, const rheap_table_def *def);
int rheap_delete_table(const char *name);
int rheap_rename_table(const char *from, const char *to);

int rheap_write_row(rheap_handler *h, const unsigned char *buf);
int rheap_update_row(rheap_handler *h, const unsigned char *old_data, const unsigned char *new_data);
int rheap_delete_row(rheap_handler *h, const unsigned char *buf);
int rheap_delete_all_rows(rheap_handler *h);
int rheap_truncate(rheap_handler *h);

int rheap_rnd_init(rheap_handler *h, uint8_t scan);
int rheap_rnd_next(rheap_handler *h, unsigned char *buf);
int rheap_rnd_end(rheap_handler *h);
int rheap_rnd_pos(rheap_handler *h, unsigned char *buf, const unsigned char *pos);
/** Writes the current row's position into `ref` (rheap_ref_length() bytes). */
void rheap_position(rheap_handler *h, unsigned char *ref);

int rheap_info(rheap_handler *h, uint32_t flag, rheap_stats *out);
uint64_t rheap_records(rheap_handler *h);

/* ---- Implemented in the C++ shim, called from Rust ----------------------------------------- */

/** A new initialised THR_LOCK, or NULL when out of memory. */
void *rheap_thr_lock_new(void);
/** Deletes a THR_LOCK made by rheap_thr_lock_new. */
void rheap_thr_lock_free(void *lock);
/** Writes a line to the server's error log (level: 0 error, 1 warning, 2 note). */
void rheap_log(int level, const char *msg);

#ifdef __cplusplus
}
#endif

#endif /* RHEAP_SHIM_H */
