/*
  ha_rheap.cc: the RHEAP handler, the C++ side of each table the engine serves.

  A thin adapter, as ha_heap.cc is over the heap C API: `ha_rheap` subclasses the server's
  `handler` and forwards each virtual, in one line, to the Rust function of the same name
  (rheap_shim.h). The engine's logic, including every decision about rows and tables, is in
  Rust; this file only converts between the server's C++ types and the C interface.

  Call sequence of a full table scan, as the server drives it:
    ha_rheap() -> open() -> store_lock() -> external_lock(F_WRLCK|F_RDLCK)
    -> info() -> rnd_init(true) -> rnd_next()... until HA_ERR_END_OF_FILE -> rnd_end()
    -> external_lock(F_UNLCK) -> close() -> ~ha_rheap()
*/
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
static constexpr double ARIA_PAGE= 8192.0;

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
  int open(const char *name, int, uint test_if_locked) override
  {
    rheap_def_builder b;
    if (int err= b.fill(table, test_if_locked & HA_OPEN_INTERNAL_TABLE, 0, ht == heap_hton,
                        kind == RHEAP_KIND_ARIA))
      return err;
    void *lock= nullptr;
    uint8_t emptied= 0;
    if (int err= rheap_open(rs(), name, &b.def, &lock, &emptied))
    {
      /* A table in Aria's place whose keys the engine cannot hold (a BLOB in a collation
         that weighs on several levels) is Aria's from the start, as without rheap. */
      if (err == HA_ERR_UNSUPPORTED && kind == RHEAP_KIND_ARIA && !disk)
        return open_disk();
      return err;
    }
    /* table->key_info, not the share's: the server's internal tables set only the former. */
    btree_keys.clear_all();
    for (uint i= 0; i < table->s->keys; i++)
      if (table->key_info[i].algorithm == HA_KEY_ALG_BTREE)
        btree_keys.set_bit(i);
    if ((has_lock= lock != nullptr))
      thr_lock_data_init(static_cast<THR_LOCK *>(lock), &lock_data, nullptr);
    implicit_emptied= emptied;
    internal_open= test_if_locked & HA_OPEN_INTERNAL_TABLE;
    ref_length= RHEAP_REF_LENGTH;
    /* A MEMORY table this open created (after a restart) is one more rheap holds. */
    if (ht == heap_hton && emptied)
      rheap_hold_plugin_while_memory_tables();
    return 0;
  }
  /** Ends this handler's use of the table; the table itself lives on until dropped. */
  int close() override
  {
    internal_open= false;
    if (disk)
      drop_disk();
    /* A table that moved to Aria was closed when it moved. */
    return moved ? 0 : rheap_close(rs());
  }
  /** Closes and drops the open table. An internal temporary table goes with its only handler,
      as HEAP's does: no lookup by name (which would also ask HEAP). */
  void drop_table(const char *name) override
  {
    if (internal_open || moved)
      ha_close();
    else
      handler::drop_table(name);
  }
  /** A second handler on the open table (DS-MRR, index merge): none for a table in Aria's
      place, which only this handler holds; the server then does without. */
  handler *clone(const char *name, MEM_ROOT *mem_root) override
  { return kind == RHEAP_KIND_ARIA ? nullptr : handler::clone(name, mem_root); }
  /** CREATE TABLE: makes the empty table `name` (a handler that is not open). */
  int create(const char *name, TABLE *form, HA_CREATE_INFO *info) override
  {
    /* A handler made for MEMORY without a table at hand (the partition engine makes those):
       decide by the name being created. */
    if (ht == heap_hton && !rheap_serves_created((uint32_t) rheap_takeover_mode, name))
    {
      handler *h= rheap_heap_own_create(ht, NULL, current_thd->mem_root);
      return h ? h->ha_create(name, form, info) : HA_ERR_OUT_OF_MEM;
    }
    rheap_def_builder b;
    if (int err= b.fill(form, false, info->auto_increment_value, ht == heap_hton))
      return err;
    int err= rheap_create(rs(), name, &b.def);
    rheap_hold_plugin_while_memory_tables();
    return err;
  }
  /** Drops `name`: 0, or -1 when there is no such table (the server then says so). As MEMORY's
      handler, passes on to HEAP a table rheap does not hold. */
  int delete_table(const char *name) override
  {
    if (for_heap(name))
    {
      rheap_heap_table_moved(name, NULL);
      return rheap_heap_own_drop(ht, name);
    }
    int err= rheap_drop_table(name);
    rheap_hold_plugin_while_memory_tables();
    return err;
  }
  int rename_table(const char *from, const char *to) override
  {
    if (!for_heap(from))
      return rheap_rename_table(from, to);
    handler *h= rheap_heap_own_create(ht, NULL, current_thd->mem_root);
    int err= h ? h->ha_rename_table(from, to) : HA_ERR_OUT_OF_MEM;
    if (!err)
      rheap_heap_table_moved(from, to);
    return err;
  }

  /** INSERT of one row in record format (record[0]); assigns the AUTO_INCREMENT value first,
      as every engine's write_row does. */
  int write_row(const uchar *buf) override
  {
    RHEAP_ON_DISK(ha_write_tmp_row(const_cast<uchar *>(buf)));
    if (table->next_number_field && buf == table->record[0])
      if (int err= update_auto_increment())
        return err;
    int err= rheap_write_row(rs(), buf);
    /* A table in Aria's place never reports that it is full (the server would fail the
       statement: it moves only MEMORY's tables): it moves to Aria itself. */
    if (unlikely(err == HA_ERR_RECORD_FILE_FULL) && kind == RHEAP_KIND_ARIA)
      return move_to_disk(buf);
    return err;
  }
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
  int rnd_init(bool scan) override
  {
    if (unlikely(disk != nullptr))
    {
      if (disk->inited != NONE)
        disk->ha_index_or_rnd_end();
      return disk->ha_rnd_init(scan);
    }
    scan_started= false;
    return rheap_rnd_init(rs(), scan);
  }
  /** Next row of the scan into `buf`, or HA_ERR_END_OF_FILE. */
  int rnd_next(uchar *buf) override
  {
    RHEAP_ON_DISK(ha_rnd_next(buf));
    scan_started= true;
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
  int index_init(uint idx, bool sorted) override
  {
    active_index= idx;
    if (unlikely(disk != nullptr))
    {
      if (disk->inited != NONE)
        disk->ha_index_or_rnd_end();
      /* Aria keeps a unique constraint as no key (share->keys 0 after the move). */
      return idx < table->s->keys ? disk->ha_index_init(idx, sorted) : 0;
    }
    return 0;
  }
  int index_end() override
  {
    active_index= MAX_KEY;
    if (unlikely(disk != nullptr) && disk->inited != NONE)
      return disk->ha_index_or_rnd_end();
    return 0;
  }
  /** Reads the row at a position that position() stored. */
  int rnd_pos(uchar *buf, uchar *pos) override
  {
    RHEAP_ON_DISK(ha_rnd_pos(buf, pos));
    return rheap_rnd_pos(rs(), buf, pos);
  }
  /** Stores the position of the row last read into `ref`. */
  void position(const uchar *record) override
  {
    if (unlikely(disk != nullptr))
    {
      disk->position(record);
      memcpy(ref, disk->ref, disk->ref_length);
      return;
    }
    rheap_position(rs(), ref);
  }

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
                           page_range *pages) override
  {
    RHEAP_ON_DISK(records_in_range(inx, min_key, max_key, pages));
    rheap_key_range lo, hi;
    uint64_t n= rheap_records_in_range(rs(), inx, to_range(min_key, &lo), to_range(max_key, &hi));
    return n == UINT64_MAX ? HA_POS_ERROR : (ha_rows) n;
  }
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
  void update_create_info(HA_CREATE_INFO *create_info) override
  {
    info(HA_STATUS_AUTO);
    if (!(create_info->used_fields & HA_CREATE_USED_AUTO))
      create_info->auto_increment_value= stats.auto_increment_value;
  }
  /** ALTER TABLE may keep the rows only when nothing about their layout or AUTO_INCREMENT
      changes (MEMORY's rule). */
  bool check_if_incompatible_data(HA_CREATE_INFO *info, uint table_changes) override
  {
    if ((info->used_fields & HA_CREATE_USED_AUTO && info->auto_increment_value != 0) ||
        table_changes == IS_EQUAL_NO || table_changes & IS_EQUAL_PACK_LENGTH)
      return COMPATIBLE_DATA_NO;
    return COMPATIBLE_DATA_YES;
  }

  /** Statistics for the optimizer and SHOW TABLE STATUS; refreshes the HASH keys'
      rec_per_key as MEMORY does. */
  int info(uint flag) override
  {
    if (unlikely(disk != nullptr))
      return disk_info(flag);
    rheap_stats s;
    uint64_t rec_per_key[MAX_KEY];
    if (int err= rheap_info(rs(), flag, &s, rec_per_key, table->s->keys))
      return err;
    errkey= s.errkey;
    /* Aria's dup_ref: the row a unique constraint refused a row for (end_unique_update reads
       it back to update its group). */
    if ((flag & HA_STATUS_ERRKEY) && kind == RHEAP_KIND_ARIA)
      rheap_dup_position(rs(), dup_ref);
    if (s.key_stats_updated)
      for (uint i= 0; i < table->s->keys; i++)
      {
        KEY *key= table->key_info + i;
        if (key->rec_per_key && rec_per_key[i])
          key->rec_per_key[key->user_defined_key_parts - 1]= (ulong) rec_per_key[i];
      }
    stats.records= s.records;
    stats.deleted= s.deleted;
    stats.data_file_length= s.data_file_length;
    stats.index_file_length= s.index_file_length;
    stats.max_data_file_length= s.max_data_file_length;
    stats.delete_length= s.delete_length;
    stats.mean_rec_length= (ulong) s.mean_rec_length;
    stats.create_time= (ulong) s.create_time;
    if (flag & HA_STATUS_AUTO)
      stats.auto_increment_value= s.auto_increment_value;
    return 0;
  }
  /** Exact row count (HA_HAS_RECORDS). */
  ha_rows records() override
  {
    if (unlikely(disk != nullptr))
      return disk_info(HA_STATUS_VARIABLE) ? HA_POS_ERROR : stats.records;
    return rheap_records(rs());
  }
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
  THR_LOCK_DATA **store_lock(THD *, THR_LOCK_DATA **to, enum thr_lock_type lock_type) override
  {
    if (!has_lock)
      return to;
    if (lock_type != TL_IGNORE && lock_data.type == TL_UNLOCK)
      lock_data.type= lock_type;
    *to++= &lock_data;
    return to;
  }

private:
  /** The table moved to Aria (move_to_disk): the engine's table is closed. */
  bool moved= false;
  /** A scan read a row since rnd_init: its place cannot follow the rows to Aria. (The
      server also calls rnd_init before it fills a table, with nothing read.) */
  bool scan_started= false;

  /** The table passed its limit: it moves to Aria with every row, as the server moves a full
      MEMORY table (create_internal_tmp_table_from_heap: the same Aria table, made by the same
      server function, which counts it in Created_tmp_disk_tables), then `row` is written
      there. From then on Aria's handler serves every call (RHEAP_ON_DISK). Returns the write's
      result: a duplicate of `row` is reported as Aria reports it. A scan in progress cannot
      follow its rows to Aria: the table is then full, as a MEMORY table's is. */
  int move_to_disk(const uchar *row)
  {
    if ((inited == RND && scan_started) || !rheap_aria_own_create)
      return HA_ERR_RECORD_FILE_FULL;
    handler *h= nullptr;
    if (int err= make_disk(&h))
      return err == HA_ERR_OUT_OF_MEM ? err : HA_ERR_RECORD_FILE_FULL;
    /* Every row, through record[1] as the server's own move copies them (its BLOB pointers
       into this handler's buffer, which Aria copies at once). */
    int err= rheap_rnd_init(rs(), 1);
    while (!err && !(err= rheap_rnd_next(rs(), table->record[1])))
      err= h->ha_write_tmp_row(table->record[1]);
    if (err != HA_ERR_END_OF_FILE)
    {
      drop(h);
      return err ? err : HA_ERR_INTERNAL_ERROR;
    }
    rheap_close(rs());
    moved= true;
    disk= h;
    rheap_note_moved_to_aria();
    if (inited == INDEX && active_index < table->s->keys)
      disk->ha_index_init(active_index, 0);
    else if (inited == RND)
      disk->ha_rnd_init(true);
    return disk->ha_write_tmp_row(const_cast<uchar *>(row));
  }

  /** open() of a table in Aria's place that the engine cannot hold: the Aria table the
      server would have made, empty, which serves every call. */
  int open_disk()
  {
    if (!rheap_aria_own_create)
      return HA_ERR_UNSUPPORTED;
    handler *h= nullptr;
    if (int err= make_disk(&h))
      return err;
    moved= true;
    disk= h;
    internal_open= true;
    ref_length= disk->ref_length;
    rheap_note_moved_to_aria();
    return 0;
  }

  /** Makes and opens the Aria table of this TABLE, as the server makes one
      (create_internal_tmp_table, which also counts it in Created_tmp_disk_tables), into
      `*out`. Returns 0 or an error (the table then made nothing that lasts). */
  int make_disk(handler **out)
  {
    TABLE_SHARE *s= table->s;
    THD *thd= table->in_use;
    TMP_ENGINE_COLUMNDEF *start= static_cast<TMP_ENGINE_COLUMNDEF *>(
      alloc_root(&table->mem_root, sizeof(TMP_ENGINE_COLUMNDEF) * (s->fields + 2)));
    handler *h= start ? rheap_aria_own_create(rheap_aria_hton, s, &table->mem_root) : nullptr;
    if (!h)
      return HA_ERR_OUT_OF_MEM;
    h->init();
    TMP_ENGINE_COLUMNDEF *end= columns(start);
    if (h->set_ha_share_ref(&s->ha_share) ||
        create_internal_tmp_table(table, table->key_info, start, &end,
                                  thd->lex->first_select_lex()->options |
                                  thd->variables.option_bits))
    {
      delete h;
      return HA_ERR_INTERNAL_ERROR;
    }
    int err= h->ha_open(table, s->path.str, O_RDWR, HA_OPEN_TMP_TABLE | HA_OPEN_INTERNAL_TABLE);
    if (!err && h->ref_length > RHEAP_REF_LENGTH)
    {
      h->ha_close();
      err= HA_ERR_INTERNAL_ERROR;
    }
    if (err)
    {
      rheap_aria_hton->drop_table(rheap_aria_hton, s->path.str);
      delete h;
      return err;
    }
    h->extra(HA_EXTRA_QUICK);
    if (table->no_rows)
      h->extra(HA_EXTRA_NO_ROWS);
    *out= h;
    return 0;
  }

  /** Closes and drops an Aria table this handler made and has not taken on. */
  void drop(handler *h)
  {
    h->ha_close();
    rheap_aria_hton->drop_table(rheap_aria_hton, table->s->path.str);
    delete h;
  }

  /** The table's columns as create_internal_tmp_table describes them to Aria, from `c` on (as
      Create_tmp_table::finalize lists them: the NULL bytes, then each field); the end. */
  TMP_ENGINE_COLUMNDEF *columns(TMP_ENGINE_COLUMNDEF *c) const
  {
    const uchar *rec= table->record[0];
    uint null_bytes= table->s->fields ? (uint) (table->field[0]->ptr - rec) : 0;
    if (null_bytes)
    {
      *c= {};
      c->type= FIELD_NORMAL;
      c->length= (uint16) null_bytes;
      c++;
    }
    for (uint i= 0; i < table->s->fields; i++, c++)
    {
      Field *f= table->field[i];
      *c= {};
      c->length= (uint16) f->pack_length_in_rec();
      /* Rows with BLOBs are packed (the server's rule for them). */
      c->type= f->tmp_engine_column_type(true);
      if (f->null_ptr)
      {
        c->null_bit= f->null_bit;
        c->null_pos= (uint) (f->null_ptr - rec);
      }
    }
    return c;
  }

  /** info() of the Aria table this one moved to, as the server reads it from this handler. */
  int disk_info(uint flag)
  {
    int err= disk->info(flag);
    stats= disk->stats;
    errkey= disk->errkey;
    if (flag & HA_STATUS_ERRKEY)
      memcpy(dup_ref, disk->dup_ref, disk->ref_length);
    return err;
  }

  /** Closes the Aria table this one moved to and deletes its files: an internal table goes
      with its only handler. */
  void drop_disk()
  {
    handler *d= disk;
    disk= nullptr;
    d->ha_index_or_rnd_end();
    /* Aria's drop_table: close, then delete the table's files. */
    d->drop_table(table->s->path.str);
    delete d;
  }

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

ulonglong ha_rheap::flags[4];

handler *rheap_new_handler(handlerton *hton, TABLE_SHARE *share, MEM_ROOT *mem_root, uint kind)
{
  return new (mem_root) ha_rheap(hton, share, kind);
}

void rheap_fill_table_flags()
{
  for (uint kind= 0; kind < array_elements(ha_rheap::flags); kind++)
    ha_rheap::flags[kind]= rheap_table_flags((uint8_t) kind);
}
