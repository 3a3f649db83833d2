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

  rheap_handler *rs() { return reinterpret_cast<rheap_handler *>(state); }

public:
  /** A handler of `kind` (RHEAP_KIND_*: whose tables it serves) for `hton`. */
  ha_rheap(handlerton *hton, TABLE_SHARE *share, uint kind)
    : handler(hton, share), capabilities(flags[kind])
  { rheap_handler_init(rs()); }
  ~ha_rheap() override { rheap_handler_drop(rs()); }

  /** Capabilities, as the server tests them with HA_* bits (handler.h). */
  ulonglong table_flags() const override { return capabilities; }
  /** table_flags() of each RHEAP_KIND_*, from the engine at plugin init. */
  static ulonglong flags[3];
  /** What a key can do: HASH keys only find whole keys; BTREE keys also scan in order. */
  ulong index_flags(uint inx, uint, bool) const override
  { return (ulong) rheap_index_flags(is_btree(inx)); }
  /** SHOW INDEX's Index_type. */
  const char *index_type(uint inx) override { return is_btree(inx) ? "BTREE" : "HASH"; }
  /** Keys the optimizer may use for an ordered index scan. */
  const key_map *keys_to_use_for_scanning() override { return &btree_keys; }
  uint max_supported_keys() const override { return MAX_KEY; }
  uint max_supported_key_part_length() const override { return MAX_KEY_LENGTH; }
  /** The optimizer's costs, as MEMORY states them: a row costs 1/20 of a disk read. */
  double scan_time() override { return (double) (stats.records + stats.deleted) / 20.0 + 10; }
  double read_time(uint, uint, ha_rows rows) override { return (double) (rows + 1) / 20.0; }
  double keyread_time(uint, uint ranges, ha_rows rows) override
  { return (double) (rows + ranges) / 20.0; }
  double avg_io_cost() override { return 0.05; }
  /** Rows are fixed-length, as in MEMORY (SHOW TABLE STATUS: Row_format Fixed). */
  enum row_type get_row_type() const override { return ROW_TYPE_FIXED; }

  /** Called once per handler before any row access; creates a missing table, as MEMORY does
      after a restart (the .frm outlives the rows). Returns 0 or an error code. */
  int open(const char *name, int, uint test_if_locked) override
  {
    rheap_def_builder b;
    if (int err= b.fill(table, test_if_locked & HA_OPEN_INTERNAL_TABLE, 0, ht == heap_hton))
      return err;
    void *lock= nullptr;
    uint8_t emptied= 0;
    if (int err= rheap_open(rs(), name, &b.def, &lock, &emptied))
      return err;
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
    return rheap_close(rs());
  }
  /** Closes and drops the open table. An internal temporary table goes with its only handler,
      as HEAP's does: no lookup by name (which would also ask HEAP). */
  void drop_table(const char *name) override
  {
    if (internal_open)
      ha_close();
    else
      handler::drop_table(name);
  }
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
    if (table->next_number_field && buf == table->record[0])
      if (int err= update_auto_increment())
        return err;
    return rheap_write_row(rs(), buf);
  }
  /** UPDATE of the row last read (by scan, rnd_pos or index) to `new_data`. */
  int update_row(const uchar *old_data, const uchar *new_data) override
  { return rheap_update_row(rs(), old_data, new_data); }
  /** DELETE of the row last read; allowed in the middle of a scan, which then goes on. */
  int delete_row(const uchar *buf) override { return rheap_delete_row(rs(), buf); }
  /** DELETE without WHERE. TRUNCATE (of temporary tables and partitions; other tables are
      recreated) is the server's handler::truncate(): this, then reset_auto_increment(0). */
  int delete_all_rows() override { return rheap_delete_all_rows(rs()); }

  /** Starts a full scan (scan=true) or a series of rnd_pos calls (scan=false). */
  int rnd_init(bool scan) override { return rheap_rnd_init(rs(), scan); }
  /** Next row of the scan into `buf`, or HA_ERR_END_OF_FILE. */
  int rnd_next(uchar *buf) override { return rheap_rnd_next(rs(), buf); }
  /* rnd_end(): the server's default (nothing to end: rnd_init starts every scan afresh). */
  /** Reads the row at a position that position() stored. */
  int rnd_pos(uchar *buf, uchar *pos) override { return rheap_rnd_pos(rs(), buf, pos); }
  /** Stores the position of the row last read into `ref`. */
  void position(const uchar *) override { rheap_position(rs(), ref); }

  /** Reads a row by key into `buf`: the first (or last) row matching `find_flag` for the key
      prefix `keypart_map` of `key` (key format); HA_ERR_KEY_NOT_FOUND when none. */
  int index_read_map(uchar *buf, const uchar *key, key_part_map keypart_map,
                     enum ha_rkey_function find_flag) override
  { return rheap_index_read_map(rs(), buf, active_index, key, keypart_map, find_flag); }
  /** As index_read_map on key `index`, without index_init. */
  int index_read_idx_map(uchar *buf, uint index, const uchar *key, key_part_map keypart_map,
                         enum ha_rkey_function find_flag) override
  { return rheap_index_read_map(rs(), buf, index, key, keypart_map, find_flag); }
  /** The last row with the key prefix (ORDER BY ... DESC over a BTREE key). */
  int index_read_last_map(uchar *buf, const uchar *key, key_part_map keypart_map) override
  { return rheap_index_read_last_map(rs(), buf, active_index, key, keypart_map); }
  /** Next row in key order (BTREE), or next row with the same key (HASH). */
  int index_next(uchar *buf) override { return rheap_index_next(rs(), buf); }
  int index_prev(uchar *buf) override { return rheap_index_prev(rs(), buf); }
  /** First / last row in key order; HASH keys answer HA_ERR_WRONG_COMMAND. */
  int index_first(uchar *buf) override { return rheap_index_first(rs(), buf, active_index); }
  int index_last(uchar *buf) override { return rheap_index_last(rs(), buf, active_index); }
  /** Rows expected in a range: counted on BTREE keys; for HASH keys only exact whole keys are
      answered, from the key statistics. */
  ha_rows records_in_range(uint inx, const key_range *min_key, const key_range *max_key,
                           page_range *) override
  {
    rheap_key_range lo, hi;
    uint64_t n= rheap_records_in_range(rs(), inx, to_range(min_key, &lo), to_range(max_key, &hi));
    return n == UINT64_MAX ? HA_POS_ERROR : (ha_rows) n;
  }
  /** INTERSECT / EXCEPT: finds the row whose unique HASH key equals `record`'s. */
  int find_unique_row(uchar *record, uint unique_idx) override
  { return rheap_find_unique_row(rs(), record, unique_idx); }
  /** Remembers the current scan row; restart_rnd_next() goes on from it. */
  int remember_rnd_pos() override { return rheap_remember_rnd_pos(rs()); }
  int restart_rnd_next(uchar *buf) override { return rheap_restart_rnd_next(rs(), buf); }
  /** HANDLER ... READ NEXT: HA_ERR_RECORD_CHANGED when rows changed since the last read. */
  int can_continue_handler_scan() override
  { return rheap_can_continue_handler_scan(rs(), inited == INDEX ? 1 : inited == RND ? 2 : 0); }

  /** DISABLE KEYS (non-persistent only): indexes are emptied and no longer maintained. */
  int disable_indexes(key_map, bool persist) override
  { return persist ? HA_ERR_WRONG_COMMAND : rheap_disable_indexes(rs()); }
  /** ENABLE KEYS: only on an empty table (HA_ERR_CRASHED otherwise), as MEMORY. */
  int enable_indexes(key_map, bool persist) override
  { return persist ? HA_ERR_WRONG_COMMAND : rheap_enable_indexes(rs()); }
  int indexes_are_disabled() override { return rheap_indexes_are_disabled(rs()); }

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
    rheap_stats s;
    uint64_t rec_per_key[MAX_KEY];
    if (int err= rheap_info(rs(), flag, &s, rec_per_key, table->s->keys))
      return err;
    errkey= s.errkey;
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
  ha_rows records() override { return rheap_records(rs()); }
  /** Hints; MEMORY acts on HA_EXTRA_CHANGE_KEY_TO_UNIQUE/_DUP and HA_EXTRA_RESET_STATE. */
  int extra(enum ha_extra_function operation) override { return rheap_extra(rs(), operation); }
  /** End of statement: forget the cursor. */
  int reset() override { return rheap_reset(rs()); }
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

ulonglong ha_rheap::flags[3];

handler *rheap_new_handler(handlerton *hton, TABLE_SHARE *share, MEM_ROOT *mem_root, uint kind)
{
  return new (mem_root) ha_rheap(hton, share, kind);
}

void rheap_fill_table_flags()
{
  for (uint kind= 0; kind < array_elements(ha_rheap::flags); kind++)
    ha_rheap::flags[kind]= rheap_table_flags((uint8_t) kind);
}
