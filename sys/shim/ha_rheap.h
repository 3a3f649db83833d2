/*
  ha_rheap.h: the RHEAP handler class, the C++ side of each table the engine serves: its
  declaration, with the one-line forwards to Rust inline. ha_rheap.cc holds the methods of more
  than a line; aria_table.cc what a table in Aria's place (RHEAP_KIND_ARIA) does when it moves
  to Aria.
*/
#ifndef RHEAP_HA_RHEAP_H
#define RHEAP_HA_RHEAP_H

#include "shim.h"
#include "definition.h"
#include <new>

/* After an RHEAP_KIND_ARIA table moved to Aria (move_to_disk), Aria's handler of it serves
   every call: the first line of each method the server calls on internal tables. */
#define RHEAP_ON_DISK(call)                                                                    \
  do {                                                                                       \
    if (unlikely(disk != nullptr))                                                           \
      return disk->call;                                                                     \
  } while (0)

/** Bytes of an Aria page at the default aria_block_size: what Aria's scan costs count. */
inline constexpr double ARIA_PAGE= 8192.0;

class ha_rheap final : public handler
{
  /** The Rust state, held in this object (rheap_handler_init). */
  alignas(RHEAP_HANDLER_ALIGN) unsigned char state[RHEAP_HANDLER_SIZE];
  /** The open table is one of the server's internal temporary tables: it goes with its only
      handler. */
  bool internal_open= false;
  /** This handler's request on the table's THR_LOCK (shared tables only). */
  THR_LOCK_DATA lock_data;
  bool has_lock= false;
  /** The BTREE keys: the only ones that can be scanned in order. */
  key_map btree_keys;

  /** table_flags(), kept here: the server asks several times per statement, and the handler
      object is in cache when the engine's globals may not be. */
  const ulonglong capabilities;
  /** RHEAP_KIND_*: whose tables this handler serves. */
  const uint kind;
  /** An RHEAP_KIND_ARIA table that passed its limit: Aria's handler of the table it moved to
      (move_to_disk), which serves every call from then on; NULL before. */
  handler *disk= nullptr;

  rheap_handler *rs() { return reinterpret_cast<rheap_handler *>(state); }

public:
  /** A handler of `kind` (RHEAP_KIND_*: whose tables it serves) for `hton`. */
  ha_rheap(handlerton *hton, TABLE_SHARE *share, uint kind)
    : handler(hton, share), capabilities(flags[kind]), kind(kind)
  { rheap_handler_init(rs()); }
  ~ha_rheap() override { rheap_handler_drop(rs()); }

  /** Capabilities, as the server tests them with HA_* bits (handler.h). */
  ulonglong table_flags() const override { return capabilities; }
  /** table_flags() of each RHEAP_KIND_*, from the engine at plugin init. */
  static ulonglong flags[4];
  /** What a key can do: HASH keys only find whole keys; BTREE keys also scan in order. */
  ulong index_flags(uint inx, uint, bool) const override
  { return (ulong) rheap_index_flags(is_btree(inx)); }
  /** SHOW INDEX's Index_type. */
  const char *index_type(uint inx) override { return is_btree(inx) ? "BTREE" : "HASH"; }
  /** Keys the optimizer may use for an ordered index scan. */
  const key_map *keys_to_use_for_scanning() override { return &btree_keys; }
  uint max_supported_keys() const override { return MAX_KEY; }
  uint max_supported_key_part_length() const override
  { return kind == RHEAP_KIND_ARIA ? rheap_aria_key_length : MAX_KEY_LENGTH; }
  /** A table in Aria's place keeps Aria's key limits: they decide which GROUP BY and DISTINCT
      keys the server makes unique constraints (choose_engine, create_internal_tmp_table). */
  uint max_supported_key_length() const override
  { return kind == RHEAP_KIND_ARIA ? rheap_aria_key_length : MAX_KEY_LENGTH; }
  uint max_supported_key_parts() const override
  { return kind == RHEAP_KIND_ARIA ? rheap_aria_key_parts : MAX_REF_PARTS; }
  /** The optimizer's costs, as MEMORY states them: a row costs 1/20 of a disk read. A table
      in Aria's place states Aria's (a block record table's pages; a read per row), so that the
      server plans a statement over it as it plans one over Aria's. */
  double scan_time() override
  {
    if (kind == RHEAP_KIND_ARIA)
      return (double) stats.data_file_length / ARIA_PAGE + 2;
    return (double) (stats.records + stats.deleted) / 20.0 + 10;
  }
  double read_time(uint index, uint ranges, ha_rows rows) override
  {
    if (kind == RHEAP_KIND_ARIA)
      return handler::read_time(index, ranges, rows);
    return (double) (rows + 1) / 20.0;
  }
  double keyread_time(uint index, uint ranges, ha_rows rows) override
  {
    if (kind == RHEAP_KIND_ARIA)
      return handler::keyread_time(index, ranges, rows);
    return (double) (rows + ranges) / 20.0;
  }
  double avg_io_cost() override { return kind == RHEAP_KIND_ARIA ? 1.0 : 0.05; }
  /** Rows are fixed-length, as in MEMORY (SHOW TABLE STATUS: Row_format Fixed). */
  enum row_type get_row_type() const override { return ROW_TYPE_FIXED; }

  /** Called once per handler before any row access; creates a missing table, as MEMORY does
      after a restart (the .frm outlives the rows). Returns 0 or an error code. */
  int open(const char *name, int, uint test_if_locked) override;
  /** Ends this handler's use of the table; the table itself lives on until dropped. */
  int close() override;
  /** Closes and drops the open table. An internal temporary table goes with its only handler,
      as HEAP's does: no lookup by name (which would also ask HEAP). */
  void drop_table(const char *name) override;
  /** A second handler on the open table (DS-MRR, index merge): none for a table in Aria's
      place, which only this handler holds; the server then does without. */
  handler *clone(const char *name, MEM_ROOT *mem_root) override
  { return kind == RHEAP_KIND_ARIA ? nullptr : handler::clone(name, mem_root); }
  /** CREATE TABLE: makes the empty table `name` (a handler that is not open). */
  int create(const char *name, TABLE *form, HA_CREATE_INFO *info) override;
  /** Drops `name`: 0, or -1 when there is no such table (the server then says so). As MEMORY's
      handler, passes on to HEAP a table rheap does not hold. */
  int delete_table(const char *name) override;
  int rename_table(const char *from, const char *to) override;

  /** INSERT of one row in record format (record[0]); assigns the AUTO_INCREMENT value first,
      as every engine's write_row does. */
  int write_row(const uchar *buf) override;
  /** UPDATE of the row last read (by scan, rnd_pos or index) to `new_data`. */
  int update_row(const uchar *old_data, const uchar *new_data) override
  {
    RHEAP_ON_DISK(ha_update_tmp_row(old_data, const_cast<uchar *>(new_data)));
    return rheap_update_row(rs(), old_data, new_data);
  }
  /** DELETE of the row last read; allowed in the middle of a scan, which then goes on. */
  int delete_row(const uchar *buf) override
  {
    RHEAP_ON_DISK(ha_delete_row(buf));
    return rheap_delete_row(rs(), buf);
  }
  /** DELETE without WHERE. TRUNCATE (of temporary tables and partitions; other tables are
      recreated) is the server's handler::truncate(): this, then reset_auto_increment(0). */
  int delete_all_rows() override
  {
    RHEAP_ON_DISK(ha_delete_all_rows());
    return rheap_delete_all_rows(rs());
  }

  /** Starts a full scan (scan=true) or a series of rnd_pos calls (scan=false). */
  int rnd_init(bool scan) override;
  /** Next row of the scan into `buf`, or HA_ERR_END_OF_FILE. */
  int rnd_next(uchar *buf) override
  {
    RHEAP_ON_DISK(ha_rnd_next(buf));
    return rheap_rnd_next(rs(), buf);
  }
  /** Ends a scan (nothing to end here: rnd_init starts every scan afresh). */
  int rnd_end() override
  {
    if (unlikely(disk != nullptr) && disk->inited != NONE)
      return disk->ha_index_or_rnd_end();
    return 0;
  }
  /** Starts reads on key `idx` (nothing to start here: each read names its key). */
  int index_init(uint idx, bool sorted) override;
  int index_end() override;
  /** Reads the row at a position that position() stored. */
  int rnd_pos(uchar *buf, uchar *pos) override
  {
    RHEAP_ON_DISK(ha_rnd_pos(buf, pos));
    return rheap_rnd_pos(rs(), buf, pos);
  }
  /** Stores the position of the row last read into `ref`. */
  void position(const uchar *record) override;

  /** Reads a row by key into `buf`: the first (or last) row matching `find_flag` for the key
      prefix `keypart_map` of `key` (key format); HA_ERR_KEY_NOT_FOUND when none. */
  int index_read_map(uchar *buf, const uchar *key, key_part_map keypart_map,
                     enum ha_rkey_function find_flag) override
  {
    RHEAP_ON_DISK(ha_index_read_map(buf, key, keypart_map, find_flag));
    return rheap_index_read_map(rs(), buf, active_index, key, keypart_map, find_flag);
  }
  /** As index_read_map on key `index`, without index_init. */
  int index_read_idx_map(uchar *buf, uint index, const uchar *key, key_part_map keypart_map,
                         enum ha_rkey_function find_flag) override
  {
    RHEAP_ON_DISK(ha_index_read_idx_map(buf, index, key, keypart_map, find_flag));
    return rheap_index_read_map(rs(), buf, index, key, keypart_map, find_flag);
  }
  /** The last row with the key prefix (ORDER BY ... DESC over a BTREE key). */
  int index_read_last_map(uchar *buf, const uchar *key, key_part_map keypart_map) override
  {
    if (unlikely(disk != nullptr))
      return HA_ERR_WRONG_COMMAND;  /* not asked of internal tables */
    return rheap_index_read_last_map(rs(), buf, active_index, key, keypart_map);
  }
  /** Next row in key order (BTREE), or next row with the same key (HASH). */
  int index_next(uchar *buf) override
  {
    RHEAP_ON_DISK(ha_index_next(buf));
    return rheap_index_next(rs(), buf);
  }
  int index_prev(uchar *buf) override
  {
    RHEAP_ON_DISK(ha_index_prev(buf));
    return rheap_index_prev(rs(), buf);
  }
  /** First / last row in key order; HASH keys answer HA_ERR_WRONG_COMMAND. */
  int index_first(uchar *buf) override
  {
    RHEAP_ON_DISK(ha_index_first(buf));
    return rheap_index_first(rs(), buf, active_index);
  }
  int index_last(uchar *buf) override
  {
    RHEAP_ON_DISK(ha_index_last(buf));
    return rheap_index_last(rs(), buf, active_index);
  }
  /** Rows expected in a range: counted on BTREE keys; for HASH keys only exact whole keys are
      answered, from the key statistics. */
  ha_rows records_in_range(uint inx, const key_range *min_key, const key_range *max_key,
                           page_range *pages) override;
  /** INTERSECT / EXCEPT: finds the row whose unique HASH key equals `record`'s. */
  int find_unique_row(uchar *record, uint unique_idx) override
  {
    RHEAP_ON_DISK(find_unique_row(record, unique_idx));
    return rheap_find_unique_row(rs(), record, unique_idx);
  }
  /** Remembers the current scan row; restart_rnd_next() goes on from it. */
  int remember_rnd_pos() override
  {
    RHEAP_ON_DISK(remember_rnd_pos());
    return rheap_remember_rnd_pos(rs());
  }
  int restart_rnd_next(uchar *buf) override
  {
    RHEAP_ON_DISK(restart_rnd_next(buf));
    return rheap_restart_rnd_next(rs(), buf);
  }
  /** HANDLER ... READ NEXT: HA_ERR_RECORD_CHANGED when rows changed since the last read. */
  int can_continue_handler_scan() override
  { return rheap_can_continue_handler_scan(rs(), inited == INDEX ? 1 : inited == RND ? 2 : 0); }

  /** DISABLE KEYS (non-persistent only): indexes are emptied and no longer maintained. */
  int disable_indexes(key_map map, bool persist) override
  {
    RHEAP_ON_DISK(ha_disable_indexes(map, persist));
    return persist ? HA_ERR_WRONG_COMMAND : rheap_disable_indexes(rs());
  }
  /** ENABLE KEYS: only on an empty table (HA_ERR_CRASHED otherwise), as MEMORY. */
  int enable_indexes(key_map map, bool persist) override
  {
    RHEAP_ON_DISK(ha_enable_indexes(map, persist));
    return persist ? HA_ERR_WRONG_COMMAND : rheap_enable_indexes(rs());
  }
  int indexes_are_disabled() override
  {
    RHEAP_ON_DISK(indexes_are_disabled());
    return rheap_indexes_are_disabled(rs());
  }

  /** Table-level locking reserves every value from the next one on. */
  void get_auto_increment(ulonglong, ulonglong, ulonglong, ulonglong *first_value,
                          ulonglong *nb_reserved_values) override
  {
    *first_value= rheap_next_auto_increment(rs());
    *nb_reserved_values= ULONGLONG_MAX;
  }
  int reset_auto_increment(ulonglong value) override
  { return rheap_reset_auto_increment(rs(), value); }
  /** SHOW CREATE TABLE's AUTO_INCREMENT=, unless the statement sets one. */
  void update_create_info(HA_CREATE_INFO *create_info) override;
  /** ALTER TABLE may keep the rows only when nothing about their layout or AUTO_INCREMENT
      changes (MEMORY's rule). */
  bool check_if_incompatible_data(HA_CREATE_INFO *info, uint table_changes) override;

  /** Statistics for the optimizer and SHOW TABLE STATUS; refreshes the HASH keys'
      rec_per_key as MEMORY does. */
  int info(uint flag) override;
  /** Exact row count (HA_HAS_RECORDS). */
  ha_rows records() override;
  /** Hints; MEMORY acts on HA_EXTRA_CHANGE_KEY_TO_UNIQUE/_DUP and HA_EXTRA_RESET_STATE. */
  int extra(enum ha_extra_function operation) override
  {
    RHEAP_ON_DISK(extra(operation));
    return rheap_extra(rs(), operation);
  }
  /** End of statement: forget the cursor. */
  int reset() override
  {
    RHEAP_ON_DISK(ha_reset());
    return rheap_reset(rs());
  }
  /** No external locking: table-level locks are the THR_LOCK below. */
  int external_lock(THD *, int) override { return 0; }

  /** Table-level locks as HEAP takes them: one THR_LOCK per shared table. */
  THR_LOCK_DATA **store_lock(THD *, THR_LOCK_DATA **to, enum thr_lock_type lock_type) override;

private:
  /** The table moved to Aria (move_to_disk): the engine's table is closed. */
  bool moved= false;
  /** A move to Aria failed: the table stays full. */
  bool move_failed= false;

  /** The table passed its limit: it moves to Aria with every row, as the server moves a full
      MEMORY table (create_internal_tmp_table_from_heap: the same Aria table, made by the same
      server function, which counts it in Created_tmp_disk_tables), then `row` is written
      there. From then on Aria's handler serves every call (RHEAP_ON_DISK). Returns the write's
      result: a duplicate of `row` is reported as Aria reports it. A scan in progress starts
      again from Aria's first row. */
  int move_to_disk(const uchar *row);

  /** open() of a table in Aria's place that the engine cannot hold: the Aria table the
      server would have made, empty, which serves every call. */
  int open_disk();

  /** Whether Aria may refuse to make this table for its header ("has too many columns and/or
      indexes and/or unique constraints", ma_create.c): the header takes 22 bytes a column and
      up to 48 a key part, and rounded up to aria_block_size (8 KiB by default, 32 KiB at most)
      it must stay within 64 KiB. Over-counted, for any block size: such a table (over about
      1,400 columns) in Aria's place opens in Aria, which then refuses it or makes it, as
      without rheap. */
  bool aria_may_refuse() const;

  /** Makes and opens the Aria table of this TABLE, as the server makes one
      (create_internal_tmp_table, which also counts it in Created_tmp_disk_tables), into
      `*out`. Returns 0 or an error (the table then made nothing that lasts). */
  int make_disk(handler **out);

  /** Closes an Aria table this handler made and deletes its files (Aria's drop_table). */
  void drop(handler *h);

  /** The table's columns as create_internal_tmp_table describes them to Aria, from `c` on (as
      Create_tmp_table::finalize lists them: the NULL bytes, then each field); the end. */
  TMP_ENGINE_COLUMNDEF *columns(TMP_ENGINE_COLUMNDEF *c) const;

  /** info() of the Aria table this one moved to, as the server reads it from this handler. */
  int disk_info(uint flag);

  /** Closes the Aria table this one moved to and deletes its files: an internal table goes
      with its only handler. */
  void drop_disk();

  /** A handler made for MEMORY (takeover) that is asked about a table HEAP holds. */
  bool for_heap(const char *name) const
  { return ht == heap_hton && rheap_heap_own_create && !rheap_has_table(name); }

  bool is_btree(uint inx) const { return table_share->key_info[inx].algorithm == HA_KEY_ALG_BTREE; }

  static const rheap_key_range *to_range(const key_range *r, rheap_key_range *out)
  {
    if (!r)
      return nullptr;
    *out= { r->key, r->length, r->keypart_map, (int32_t) r->flag };
    return out;
  }
};

#endif
