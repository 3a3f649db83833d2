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

/** The Rust state of one handler object. It lives inside the C++ handler object, in
    RHEAP_HANDLER_SIZE bytes aligned to RHEAP_HANDLER_ALIGN (the engine checks at compile time
    that its state fits), so a handler costs no allocation besides the server's own. */
typedef struct rheap_handler rheap_handler;
#define RHEAP_HANDLER_SIZE 352
#define RHEAP_HANDLER_ALIGN 8

/** Bytes of a row position (handler::ref_length). */
#define RHEAP_REF_LENGTH 8

/** The smallest VARCHAR, in bytes of room, that an internal temporary table's definition
    describes (rheap_table_def.vars): the ones whose room packing rows can save. */
#define RHEAP_PACKED_MIN_ROOM 256

/** One segment of a key: a column, or a prefix of one (from KEY_PART_INFO and its Field). */
typedef struct rheap_key_seg {
  /** The column's CHARSET_INFO (my_charset_bin for ENUM and SET), as HEAP takes it. */
  const void *charset;
  /** Offset of the value in the record, and its bytes in the key format (KEY_PART_INFO). */
  uint32_t start;
  uint32_t length;
  /** Offset of the byte with the NULL bit; `null_bit` is 0 for NOT NULL columns. */
  uint32_t null_pos;
  /** BIT columns: offset of the byte holding the bits that do not fill a byte. */
  uint32_t bit_pos;
  /** The charset's most bytes per character. */
  uint32_t mbmaxlen;
  /** Field::key_type() (enum ha_base_keytype). */
  uint8_t key_type;
  uint8_t null_bit;
  /** VARCHAR: bytes of the length prefix in the record (1 or 2), else 0. */
  uint8_t length_bytes;
  /** BIT columns: first bit and number of the odd bits. */
  uint8_t bit_start;
  uint8_t bit_length;
  /** Non-zero when `charset` is my_charset_bin. */
  uint8_t binary_charset;
  /** Non-zero for a DESC key part (KEY_PART_INFO::key_part_flag has HA_REVERSE_SORT). */
  uint8_t reverse;
  /** A BLOB/TEXT part (of a unique constraint, which covers the whole value): bytes of the
      BLOB's length in the record (1 to 4); 0 for every other part. */
  uint8_t blob_length_bytes;
} rheap_key_seg;

/** One index (from KEY). */
typedef struct rheap_key_def {
  const rheap_key_seg *segs;
  uint32_t nsegs;
  /** KEY::key_length: bytes of the whole key in the key format. */
  uint32_t key_length;
  /** Non-zero for USING BTREE, zero for HASH (the default). */
  uint8_t btree;
  /** HA_NOSAME: UNIQUE or PRIMARY. */
  uint8_t unique;
  /** HA_NULL_ARE_EQUAL: NULLs are duplicates of each other. */
  uint8_t null_are_equal;
  /** A unique constraint (TABLE_SHARE::uniques): what Aria would keep as a MARIA_UNIQUEDEF,
      with its duplicate error (HA_ERR_FOUND_DUPP_UNIQUE) and dup_ref. */
  uint8_t constraint;
} rheap_key_def;

/** A variable-length field of the record: a VARCHAR (length, then room for its most bytes) or
    a BLOB (length, then a pointer to the bytes). */
typedef struct rheap_var_field {
  /** Offset of the field's length bytes in the record. */
  uint32_t offset;
  /** Bytes of the length: 1 or 2 for a VARCHAR, 1 to 4 for a BLOB. */
  uint8_t len_bytes;
  /** Non-zero for a BLOB (TEXT, JSON, GEOMETRY). */
  uint8_t blob;
  /** A VARCHAR's room for bytes after its length. */
  uint32_t max;
} rheap_var_field;

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
  /** tmp_memory_table_size of that thread (internal tables' BLOBs count against it too). */
  uint64_t tmp_memory_table_size;
  /** AUTO_INCREMENT= of CREATE TABLE, 0 when not given. */
  uint64_t auto_increment;
  /** Non-zero for the server's internal temporary tables: private to one handler, never shared by name. */
  uint8_t internal;
  /** Non-zero for any temporary table (internal, or CREATE TEMPORARY TABLE). */
  uint8_t tmp_table;
  /** The indexes, in the server's key order; valid during the call only. */
  const rheap_key_def *keys;
  uint32_t nkeys;
  /** The key led by the AUTO_INCREMENT column, or -1. */
  int32_t auto_key;
  /** Field::key_type() of the AUTO_INCREMENT column. */
  uint8_t auto_key_type;
  /** Non-zero for an ENGINE=MEMORY table rheap serves (rheap_takeover=ALL). */
  uint8_t for_memory;
  /** The record's variable-length fields, in record order; valid during the call only. */
  const rheap_var_field *vars;
  uint32_t nvars;
  /** What decides that the table is full (RHEAP_LIMIT_BY_*): rheap_table_size_limit of the
      server when the table is created. */
  uint8_t limit_by;
  /** The connection that creates or opens the table (thd_get_thread_id): not part of the
      definition, only shown in information_schema.RHEAP_TABLES. */
  uint64_t connection;
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
  /** The key of the last duplicate-key error (handler::errkey). */
  int32_t errkey;
  /** Non-zero when `rec_per_key` holds fresh statistics for the handler's TABLE. */
  uint8_t key_stats_updated;
} rheap_stats;

/** A bound of a range, as key_range (handler.h): a key in key format and its search flag. */
typedef struct rheap_key_range {
  const unsigned char *key;
  uint32_t length;
  uint64_t keypart_map;
  /** enum ha_rkey_function. */
  int32_t flag;
} rheap_key_range;

/* ---- Implemented in Rust (engine/src/ffi, over core/) ------------------------------------------------ */

/** Plugin init: 0 on success. */
int rheap_plugin_init(void);
/** Plugin deinit: 0 when the engine can be unloaded. */
int rheap_plugin_deinit(void);
/** hton->drop_table: 0 dropped, -1 no such table, else an error code. */
int rheap_drop_table(const char *name);

/** Makes a new handler state in `h`: RHEAP_HANDLER_SIZE bytes aligned to RHEAP_HANDLER_ALIGN,
    not holding one already. */
void rheap_handler_init(rheap_handler *h);
/** Ends the handler state in `h` (made by rheap_handler_init), once; the bytes are then free. */
void rheap_handler_drop(rheap_handler *h);
/** Whose tables a handler serves: RHEAP's own; MEMORY's (taken over: no BLOBs there); or
    MEMORY's holding BLOBs (information_schema tables the server meant for Aria). */
#define RHEAP_KIND_RHEAP 0
#define RHEAP_KIND_MEMORY 1
#define RHEAP_KIND_MEMORY_BLOBS 2
/** A statement's internal table with BLOB/TEXT columns that rheap serves in place of Aria, under
    its own handlerton (rheap_serves_aria_table): Aria's key limits and unique constraints; it
    moves to Aria when it passes its limit. */
#define RHEAP_KIND_ARIA 3
/** handler::table_flags() of a handler of `kind` (RHEAP_KIND_*). */
uint64_t rheap_table_flags(uint8_t kind);

/** Opens (creating if missing, as MEMORY does after a restart) the table `name`.
    On success `*thr_lock` is the table's THR_LOCK (NULL for internal tables) and
    `*implicit_emptied` is set when the table was created empty by this open. */
int rheap_open(rheap_handler *h, const char *name, const rheap_table_def *def,
               void **thr_lock, uint8_t *implicit_emptied);
int rheap_close(rheap_handler *h);
/** Keeps the BLOB bytes of the row last read where they are while the handler lives: a table
    that moves to Aria reads every row while the server's record may point at them. */
int rheap_hold_row_blobs(rheap_handler *h);
int rheap_create(rheap_handler *h, const char *name, const rheap_table_def *def);
int rheap_delete_table(const char *name);
int rheap_rename_table(const char *from, const char *to);

int rheap_write_row(rheap_handler *h, const unsigned char *buf);
int rheap_update_row(rheap_handler *h, const unsigned char *old_data, const unsigned char *new_data);
int rheap_delete_row(rheap_handler *h, const unsigned char *buf);
int rheap_delete_all_rows(rheap_handler *h);

int rheap_rnd_init(rheap_handler *h, uint8_t scan);
int rheap_rnd_next(rheap_handler *h, unsigned char *buf);
int rheap_rnd_pos(rheap_handler *h, unsigned char *buf, const unsigned char *pos);
/** Writes the current row's position into `ref` (RHEAP_REF_LENGTH bytes). */
void rheap_position(rheap_handler *h, unsigned char *ref);
/** Writes into `dup_ref` (RHEAP_REF_LENGTH bytes) the position of the row a unique constraint
    last refused a write or update for (Aria's dup_ref). */
void rheap_dup_position(rheap_handler *h, unsigned char *dup_ref);
/** Counts an internal table in Aria's place that moved to Aria (Rheap_aria_tables_moved). */
void rheap_note_moved_to_aria(void);

/** Fills `out`; when the key statistics are due, also `rec_per_key[k]` for each key (0: leave
    the key's statistics alone), `nkeys` entries. */
int rheap_info(rheap_handler *h, uint32_t flag, rheap_stats *out, uint64_t *rec_per_key,
               uint32_t nkeys);

/** handler::index_flags for a HASH (btree == 0) or BTREE key. */
uint64_t rheap_index_flags(uint8_t btree);
int rheap_index_read_map(rheap_handler *h, unsigned char *buf, uint32_t index,
                         const unsigned char *key, uint64_t keypart_map, int32_t find_flag);
int rheap_index_read_last_map(rheap_handler *h, unsigned char *buf, uint32_t index,
                              const unsigned char *key, uint64_t keypart_map);
int rheap_index_next(rheap_handler *h, unsigned char *buf);
int rheap_index_prev(rheap_handler *h, unsigned char *buf);
int rheap_index_first(rheap_handler *h, unsigned char *buf, uint32_t index);
int rheap_index_last(rheap_handler *h, unsigned char *buf, uint32_t index);
/** Rows expected between two bounds (either may be NULL); UINT64_MAX for HA_POS_ERROR. */
uint64_t rheap_records_in_range(rheap_handler *h, uint32_t index, const rheap_key_range *min_key,
                                const rheap_key_range *max_key);
/** find_unique_row: 0 found (row copied into `record`), 1 not found, -1 error. */
int rheap_find_unique_row(rheap_handler *h, unsigned char *record, uint32_t index);
int rheap_remember_rnd_pos(rheap_handler *h);
int rheap_restart_rnd_next(rheap_handler *h, unsigned char *buf);
/** 0, or HA_ERR_RECORD_CHANGED when the table changed under a HANDLER scan. */
int rheap_can_continue_handler_scan(rheap_handler *h, uint8_t index_scan);
/** handler::extra for the operations HEAP acts on (enum ha_extra_function). */
int rheap_extra(rheap_handler *h, int32_t operation);
/** handler::reset: forgets the cursor. */
int rheap_reset(rheap_handler *h);
int rheap_disable_indexes(rheap_handler *h);
int rheap_enable_indexes(rheap_handler *h);
int rheap_indexes_are_disabled(rheap_handler *h);
int rheap_reset_auto_increment(rheap_handler *h, uint64_t value);
/** The next AUTO_INCREMENT value (handler::get_auto_increment's first value). */
uint64_t rheap_next_auto_increment(rheap_handler *h);
uint64_t rheap_records(rheap_handler *h);

/* Taking over MEMORY's tables (the shim's replacement of heap_hton->create asks these). */
/** rheap_takeover's values; the shim's TYPELIB names them in this order. */
/** One row of information_schema.RHEAP_TABLES: a live table now. Its strings are valid
    during the call that passes it and are not NUL-terminated. */
typedef struct rheap_live_table {
  /** TABLE, TEMPORARY, INTERNAL or KEPT. */
  const char *kind;
  uint32_t kind_len;
  /** The table's path: ./schema/name (in the server's file-name encoding) when `named`, the
      server's path of a TEMPORARY or internal table otherwise. */
  const char *path;
  uint32_t path_len;
  uint8_t named;
  /** Who may see it: RHEAP_AUDIENCE_*. */
  uint8_t audience;
  /** The connection that owns it; 0 for none. */
  uint64_t connection;
  uint64_t rows;
  uint64_t data_bytes;
  uint64_t index_bytes;
  uint64_t blocks;
  /** Its memory limit. */
  uint64_t max_bytes;
} rheap_live_table;

/** Who may see a row of information_schema.RHEAP_TABLES, as the server's own views decide
    (rheap_core::catalog::live::Audience). */
/** A user with some privilege on the table, as information_schema.TABLES shows it. */
#define RHEAP_AUDIENCE_PRIVILEGED 0
/** The user of the owning connection, and users with PROCESS, as PROCESSLIST shows it. */
#define RHEAP_AUDIENCE_OWNER 1
/** Users with PROCESS only (a table no connection owns). */
#define RHEAP_AUDIENCE_PROCESS 2

/** Calls `store(ctx, row)` once per live table, stopping at its first non-zero answer, which
    it returns; 0 when every row was stored, HA_ERR_OUT_OF_MEM when the list could not be
    copied. */
int rheap_live_tables(int (*store)(void *ctx, const rheap_live_table *row), void *ctx);

/** rheap_table_size_limit: a table is full when its real bytes would pass its limit
    (ACTUAL), or where MEMORY's would (HEAP). The names are in this order in the shim. */
#define RHEAP_LIMIT_BY_ACTUAL 0
#define RHEAP_LIMIT_BY_HEAP 1

#define RHEAP_TAKEOVER_OFF 0
#define RHEAP_TAKEOVER_INTERNAL 1
#define RHEAP_TAKEOVER_ALL 2
/** What the server says of a table share when it asks an engine for a handler: the facts
    from which rheap decides what the table is (rheap_core::takeover). */
typedef struct rheap_share_facts {
  /** Non-zero for an INTERNAL_TMP_TABLE share. */
  uint8_t internal_tmp;
  /** Its database, not NUL-terminated ("" for none); valid during the call only. */
  const char *db;
  size_t db_length;
  /** TABLE_SHARE::blob_fields. */
  uint32_t blob_fields;
  /** TABLE_SHARE::max_rows (0 until the server finalizes an internal table's share). */
  uint64_t max_rows;
  /** The table's path (TABLE_SHARE::normalized_path), NUL-terminated. */
  const char *path;
  /** Non-zero when its table name is "(temporary)", the one Create_tmp_table gives. */
  uint8_t made_by_create_tmp_table;
} rheap_share_facts;
/** Non-zero when rheap serves the MEMORY table of this share: `mode` is rheap_takeover
    (RHEAP_TAKEOVER_*), `facts` what the server says of the share, or NULL when it has none at
    hand (a rename or drop: rheap then passes on what it does not hold). */
uint8_t rheap_serves(uint32_t mode, const rheap_share_facts *facts);
/** Non-zero when rheap serves the MEMORY table `name` that a handler made without a share is
    creating (the partition engine makes those). */
uint8_t rheap_serves_created(uint32_t mode, const char *name);
/** Non-zero when rheap serves, as one of MEMORY's tables, the table of this share that the
    server builds in Aria: an information_schema table with BLOB/TEXT columns. `mode` is
    rheap_takeover, `schema_tables` rheap_takeover_information_schema, `structure_only` marks
    a statement that reads only the table's definition (SHOW CREATE TABLE, CREATE TABLE ...
    LIKE, GRANT), and `disk_asked` a session that asks for on-disk temporary tables
    (big_tables, tmp_memory_table_size = 0). */
uint8_t rheap_serves_schema_table(uint32_t mode, const rheap_share_facts *facts,
                                  uint8_t schema_tables, uint8_t structure_only,
                                  uint8_t disk_asked);
/** Non-zero when rheap serves, under its own name and with Aria's behaviour, a statement's
    internal table with BLOB/TEXT columns that the server builds in Aria (GROUP BY, DISTINCT,
    UNION, derived tables, COUNT(DISTINCT), window functions over such columns). `mode` is
    rheap_takeover, `enabled` rheap_takeover_blob_tables, `disk_asked` as for
    rheap_serves_schema_table, `fulltext` a statement with MATCH ... AGAINST. */
uint8_t rheap_serves_aria_table(uint32_t mode, const rheap_share_facts *facts, uint8_t enabled,
                                uint8_t disk_asked, uint8_t fulltext);
/** HEAP's table `from` was dropped (`to` NULL) or renamed to `to` (rheap_serves keeps a
    name HEAP holds HEAP's when the server creates it again, as TRUNCATE does). */
int rheap_heap_table_moved(const char *from, const char *to);
/** Non-zero when rheap holds the named table. */
uint8_t rheap_has_table(const char *name);
/** How many ENGINE=MEMORY tables rheap holds (while any, the plugin keeps itself loaded). */
uint64_t rheap_memory_tables(void);
/** The most status variables the shim has room for (rheap_status_count() must not exceed it). */
#define RHEAP_STATUS_MAX 32
/** How many status variables the engine has (core/src/status.rs, the only list of them). */
uint32_t rheap_status_count(void);
/** The name of status variable `i` ("Rheap_..."), NULL out of range; it lives as long as the
    library. */
const char *rheap_status_name(uint32_t i);
/** The value of status counter `i` (core/src/status.rs order; 0 out of range). */
uint64_t rheap_status_value(uint32_t i);
/** rheap_block_cache_size changed (and at init): bytes the block cache may keep. */
void rheap_set_block_cache_size(uint64_t bytes);
/** rheap_max_memory changed (and at init): bytes all tables may hold together; 0 none. */
void rheap_set_max_memory(uint64_t bytes);
/** Test builds only (feature `failpoints`; the shim calls it only when compiled with
    RHEAP_FAILPOINTS): block allocation fails after `n` more blocks; negative: never. */
void rheap_debug_fail_alloc_after(int64_t n);
/** Test builds only (as above): the `n`th allocation of any kind from now (a block, or the
    plugin's own heap memory) fails, once; 0 or negative: none. */
void rheap_debug_fail_nth_alloc(int64_t n);

/* ---- Implemented in the C++ shim, called from Rust ----------------------------------------- */

/** A new initialised THR_LOCK, or NULL when out of memory. */
void *rheap_thr_lock_new(void);
/** Deletes a THR_LOCK made by rheap_thr_lock_new. */
void rheap_thr_lock_free(void *lock);
/** Moves `delta` bytes (back when negative) of the server's memory accounting from its global
    count to the running thread's (Memory_used, max_session_mem_used), as for memory the
    thread allocates itself. */
void rheap_move_memory_to_thread(int64_t delta);
/** Writes a line to the server's error log (level: 0 error, 1 warning, 2 note). */
void rheap_log(int level, const char *msg);
/** `size` bytes from the server's allocator (my_malloc) under rheap's performance_schema
    memory key `memory/rheap/block`, counted in the server's Memory_used; NULL when out of
    memory (aligned to 8 bytes). */
void *rheap_block_alloc(size_t size);
/** Frees a block from rheap_block_alloc (my_free). */
void rheap_block_free(void *block);
/** `size` bytes for the plugin's heap (its Rust global allocator): my_malloc under
    `memory/rheap/heap`; NULL when out of memory (aligned to 8 bytes). */
void *rheap_heap_alloc(size_t size);
/** my_realloc of what rheap_heap_alloc returned; NULL, and `ptr` kept, when out of memory. */
void *rheap_heap_realloc(void *ptr, size_t size);
/** Frees what rheap_heap_alloc or rheap_heap_realloc returned (my_free). */
void rheap_heap_free(void *ptr);

/* The collation functions of a CHARSET_INFO (m_ctype.h), for key segments' `charset`. */
/** Bytes of the first `chars` characters of `s` (cset->charpos; may exceed `len`). */
size_t rheap_cs_charpos(const void *cs, const unsigned char *s, size_t len, size_t chars);
/** Bytes of the weight image of `len` bytes of text (coll->strnxfrmlen). */
size_t rheap_cs_strnxfrmlen(const void *cs, size_t len);
/** Weights of `src` (at most `chars` characters) into all `dstlen` bytes of `dst`, padded as
    filesort pads (coll->strnxfrm with PAD_WITH_SPACE | PAD_TO_MAXLEN). */
void rheap_cs_strnxfrm(const void *cs, unsigned char *dst, size_t dstlen, size_t chars,
                       const unsigned char *src, size_t srclen);
/** Weights of `src` (at most `chars` characters) into `dst`, without padding (coll->strnxfrm
    with no flags): how many bytes it wrote. */
size_t rheap_cs_strnxfrm_unpadded(const void *cs, unsigned char *dst, size_t dstlen,
                                  size_t chars, const unsigned char *src, size_t srclen);
/** A space character (U+0020) in the collation's character set, into `dst`: its bytes, 0 when
    it does not fit (cset->wc_mb). */
size_t rheap_cs_space(const void *cs, unsigned char *dst, size_t dstlen);
/** 1 when the collation weighs on one level (levels_for_order): two strings are then equal
    exactly when their unpadded weights are (PAD SPACE: once cut of trailing spaces'). */
int rheap_cs_one_level(const void *cs);
/** 1 when the collation is PAD SPACE (not MY_CS_NOPAD): trailing spaces do not count. */
int rheap_cs_pads_with_space(const void *cs);
/** Bytes of `s` without its trailing spaces (cset->lengthsp). */
size_t rheap_cs_lengthsp(const void *cs, const unsigned char *s, size_t len);
/** The byte-to-weight table of an 8-bit collation whose weights are one table lookup per byte
    (its strnxfrm is my_strnxfrm_simple or my_strnxfrm_simple_nopad): the weights of n bytes
    are n table entries. NULL for every other collation. */
const unsigned char *rheap_cs_weight_map(const void *cs);
/** Mixes `s` into a running hash (coll->hash_sort). */
void rheap_cs_hash_sort(const void *cs, const unsigned char *s, size_t len, uint64_t *nr1,
                        uint64_t *nr2);

#ifdef __cplusplus
}
#endif

#endif /* RHEAP_SHIM_H */
