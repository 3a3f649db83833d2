/*
  ha_rheap.cc: the C++ side of the RHEAP storage engine.

  A thin adapter, as ha_heap.cc is over the heap C API: `ha_rheap` subclasses the server's
  `handler` and forwards each virtual, in one line, to the Rust function of the same name
  (rheap_shim.h). The engine's logic, including every decision about rows and tables, is in
  Rust; this file only converts between the server's C++ types and the C interface.

  Call sequence of a full table scan, as the server drives it:
    ha_rheap() -> open() -> store_lock() -> external_lock(F_WRLCK|F_RDLCK)
    -> info() -> rnd_init(true) -> rnd_next()... until HA_ERR_END_OF_FILE -> rnd_end()
    -> external_lock(F_UNLCK) -> close() -> ~ha_rheap()
*/
#define MYSQL_SERVER 1
#include <my_global.h>
#include "sql_class.h"
#include "handler.h"
#include "log.h"
#include "sql_i_s.h"
#include "sql_show.h"
#include "sql_table.h"
#include "sql_acl.h"
#include <mysql/plugin.h>
#include <array>
#include <dlfcn.h>
#include <mutex>
#include <utility>
#include <new>

#include "rheap_shim.h"


/** rheap_takeover: which MEMORY tables rheap serves (OFF, INTERNAL, ALL). */
static ulong takeover_mode;
/** rheap_takeover_information_schema: serve the information_schema tables with BLOB/TEXT
    columns, which the server builds in Aria. */
static my_bool takeover_information_schema= 1;
/** rheap_block_cache_size. */
static ulonglong block_cache_size;
/** rheap_max_memory. */
static ulonglong max_memory;
/** rheap_takeover's names, in the order of RHEAP_TAKEOVER_* (rheap_shim.h). */
static const char *takeover_names[]= { "OFF", "INTERNAL", "ALL", NullS };
static_assert(RHEAP_TAKEOVER_OFF == 0 && RHEAP_TAKEOVER_INTERNAL == 1 && RHEAP_TAKEOVER_ALL == 2 &&
              array_elements(takeover_names) == RHEAP_TAKEOVER_ALL + 2,
              "takeover_names lists RHEAP_TAKEOVER_* in order");
static TYPELIB takeover_typelib= { array_elements(takeover_names) - 1, "", takeover_names, NULL };
/** rheap_table_size_limit: RHEAP_LIMIT_BY_*. */
static ulong table_size_limit;
/** rheap_table_size_limit's names, in the order of RHEAP_LIMIT_BY_* (rheap_shim.h). */
static const char *limit_by_names[]= { "ACTUAL", "HEAP", NullS };
static_assert(RHEAP_LIMIT_BY_ACTUAL == 0 && RHEAP_LIMIT_BY_HEAP == 1 &&
              array_elements(limit_by_names) == RHEAP_LIMIT_BY_HEAP + 2,
              "limit_by_names lists RHEAP_LIMIT_BY_* in order");
static TYPELIB limit_by_typelib= { array_elements(limit_by_names) - 1, "", limit_by_names, NULL };

/** This plugin's handlerton, and a reference to the plugin held while rheap holds ENGINE=MEMORY
    tables: their rows live in this plugin, so UNINSTALL SONAME waits (the server says the
    plugin is busy) until they are dropped. */
static handlerton *rheap_hton;
static plugin_ref self_ref;
static std::mutex self_ref_mutex;

static void hold_plugin_while_memory_tables()
{
  plugin_ref release= NULL;
  {
    std::lock_guard<std::mutex> guard(self_ref_mutex);
    bool needed= rheap_memory_tables() > 0;
    if (needed && !self_ref && rheap_hton)
      self_ref= ha_lock_engine(NULL, rheap_hton);
    else if (!needed && self_ref)
    {
      release= self_ref;
      self_ref= NULL;
    }
  }
  /* Outside the mutex: letting go may deinitialise the plugin right here (a deferred
     UNINSTALL), and deinit takes the mutex. */
  if (release)
    plugin_unlock(NULL, release);
}

/** HEAP's own handler factory and drop function, replaced while the plugin is loaded. */
static handler *(*heap_create)(handlerton *, TABLE_SHARE *, MEM_ROOT *);
static int (*heap_drop)(handlerton *, const char *);
/** Aria's handlerton and its own handler factory, replaced while the plugin is loaded (NULL
    when the server has no Aria ready: then nothing is taken from Aria). */
static handlerton *aria_hton;
static handler *(*aria_create)(handlerton *, TABLE_SHARE *, MEM_ROOT *);

/** The engine's view of a table definition, with storage for its keys. */
class rheap_def_builder
{
  rheap_key_def keys[MAX_KEY];
  /* Room for the key segments and variable-length fields of most tables, so that opening one
     allocates nothing; larger definitions allocate theirs. */
  rheap_key_seg seg_room[16];
  rheap_var_field var_room[32];
  rheap_key_seg *more_segs= nullptr;
  rheap_var_field *more_vars= nullptr;

  template <class T, size_t N> static T *room_for(uint n, T (&local)[N], T *&more)
  { return n <= N ? local : (more= new (std::nothrow) T[n]()); }

public:
  rheap_table_def def;

  ~rheap_def_builder() { delete[] more_segs; delete[] more_vars; }

  /** Fills `def` from `table` as HEAP reads a definition (heap_prepare_hp_create_info).
      Returns 0 or HA_ERR_OUT_OF_MEM. */
  int fill(const TABLE *table, bool internal, ulonglong auto_increment, bool for_memory)
  {
    const TABLE_SHARE *s= table->s;
    uint parts= 0;
    for (uint k= 0; k < s->keys; k++)
      parts+= table->key_info[k].user_defined_key_parts;
    rheap_key_seg *segs= room_for(parts, seg_room, more_segs);
    if (!segs)
      return HA_ERR_OUT_OF_MEM;
    rheap_key_seg *seg= segs;
    for (uint k= 0; k < s->keys; k++)
    {
      const KEY *key= table->key_info + k;
      keys[k]= { seg, key->user_defined_key_parts, key->key_length,
                 key->algorithm == HA_KEY_ALG_BTREE, (key->flags & HA_NOSAME) != 0,
                 (key->flags & HA_NULL_ARE_EQUAL) != 0 };
      for (uint p= 0; p < key->user_defined_key_parts; p++, seg++)
        fill_seg(table, key->key_part + p, seg);
    }
    def.reclength= s->reclength;
    def.max_rows= s->max_rows;
    def.min_rows= s->min_rows;
    def.max_table_size= current_thd->variables.max_heap_table_size;
    def.tmp_memory_table_size= current_thd->variables.tmp_memory_table_size;
    def.auto_increment= auto_increment;
    def.internal= internal;
    def.tmp_table= s->tmp_table != NO_TMP_TABLE;
    def.keys= keys;
    def.nkeys= s->keys;
    def.auto_key= table->found_next_number_field ? (int32_t) s->next_number_index : -1;
    def.auto_key_type= table->found_next_number_field ?
      (uint8_t) table->found_next_number_field->key_type() : 0;
    def.for_memory= for_memory && !internal;
    def.nvars= 0;
    def.vars= nullptr;
    def.limit_by= (uint8_t) table_size_limit;
    def.connection= thd_get_thread_id(current_thd);
    /* The variable-length fields, from which the engine decides how to store the rows
       (RowFormat::for_table, row.rs). The server counts a share's VARCHARs only when it reads
       a .frm, so an internal table's fields are looked at: its BLOBs and the VARCHARs whose
       room packing can save (RHEAP_PACKED_MIN_ROOM) are described, the rest is stored as it
       is. */
    if (internal || s->varchar_fields || s->blob_fields)
    {
      rheap_var_field *vars= room_for(s->fields, var_room, more_vars);
      if (!vars)
        return HA_ERR_OUT_OF_MEM;
      for (uint i= 0; i < s->fields; i++)
      {
        Field *f= table->field[i];
        uint32_t offset= (uint32_t) (f->ptr - table->record[0]);
        if (f->flags & BLOB_FLAG)
          vars[def.nvars++]= { offset, (uint8_t) static_cast<Field_blob *>(f)->pack_length_no_ptr(),
                               1, 0 };
        else if ((!internal || f->field_length >= RHEAP_PACKED_MIN_ROOM) &&
                 (f->real_type() == MYSQL_TYPE_VARCHAR ||
                  f->real_type() == MYSQL_TYPE_VARCHAR_COMPRESSED))
        {
          Field_varstring *v= static_cast<Field_varstring *>(f);
          vars[def.nvars++]= { offset, (uint8_t) v->length_bytes, 0, v->field_length };
        }
      }
      def.vars= vars;
    }
    return 0;
  }

private:
  static void fill_seg(const TABLE *table, const KEY_PART_INFO *part, rheap_key_seg *seg)
  {
    Field *field= part->field;
    CHARSET_INFO *cs= (field->flags & (ENUM_FLAG | SET_FLAG)) ?
      &my_charset_bin : field->charset_for_protocol();
    const uchar *rec= table->record[0];
    *seg= {};
    seg->charset= cs;
    seg->start= part->offset;
    seg->length= part->length;
    seg->null_bit= field->null_ptr ? field->null_bit : 0;
    seg->null_pos= field->null_ptr ? (uint32_t) (field->null_ptr - rec) : 0;
    seg->mbmaxlen= cs->mbmaxlen;
    seg->key_type= (uint8_t) field->key_type();
    seg->binary_charset= cs == &my_charset_bin;
    seg->reverse= (part->key_part_flag & HA_REVERSE_SORT) != 0;
    seg->length_bytes= field->real_type() == MYSQL_TYPE_VARCHAR ?
      (uint8_t) static_cast<Field_varstring *>(field)->length_bytes : 0;
    if (field->key_type() == HA_KEYTYPE_BIT)
    {
      const Field_bit *bit= static_cast<const Field_bit *>(field);
      seg->bit_pos= bit->bit_ptr ? (uint32_t) (bit->bit_ptr - rec) : 0;
      seg->bit_start= bit->bit_ofs;
      seg->bit_length= (uint8_t) bit->bit_len;
    }
  }
};

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
      hold_plugin_while_memory_tables();
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
    if (ht == heap_hton && !rheap_serves_created((uint32_t) takeover_mode, name))
    {
      handler *h= heap_create(ht, NULL, current_thd->mem_root);
      return h ? h->ha_create(name, form, info) : HA_ERR_OUT_OF_MEM;
    }
    rheap_def_builder b;
    if (int err= b.fill(form, false, info->auto_increment_value, ht == heap_hton))
      return err;
    int err= rheap_create(rs(), name, &b.def);
    hold_plugin_while_memory_tables();
    return err;
  }
  /** Drops `name`: 0, or -1 when there is no such table (the server then says so). As MEMORY's
      handler, passes on to HEAP a table rheap does not hold. */
  int delete_table(const char *name) override
  {
    if (for_heap(name))
    {
      rheap_heap_table_moved(name, NULL);
      return heap_drop(ht, name);
    }
    int err= rheap_drop_table(name);
    hold_plugin_while_memory_tables();
    return err;
  }
  int rename_table(const char *from, const char *to) override
  {
    if (!for_heap(from))
      return rheap_rename_table(from, to);
    handler *h= heap_create(ht, NULL, current_thd->mem_root);
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
  { return ht == heap_hton && heap_create && !rheap_has_table(name); }

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

/* ---- Called from Rust ------------------------------------------------------------------- */

extern "C" void *rheap_thr_lock_new(void)
{
  THR_LOCK *lock= new (std::nothrow) THR_LOCK();
  if (lock)
    thr_lock_init(lock);
  return lock;
}

extern "C" void rheap_thr_lock_free(void *lock)
{
  thr_lock_delete(static_cast<THR_LOCK *>(lock));
  delete static_cast<THR_LOCK *>(lock);
}

extern "C" void rheap_move_memory_to_thread(int64_t delta)
{
  if (update_malloc_size)
  {
    update_malloc_size((long long) delta, 1);
    update_malloc_size((long long) -delta, 0);
  }
}

/** performance_schema's keys: memory/rheap/block for tables' blocks, memory/rheap/heap for the
    rest of what the plugin allocates. */
static PSI_memory_key rheap_key_memory_block, rheap_key_memory_heap;
#ifdef HAVE_PSI_INTERFACE
static PSI_memory_info rheap_memory_keys[]= {
  { &rheap_key_memory_block, "block", PSI_FLAG_GLOBAL },
  { &rheap_key_memory_heap, "heap", PSI_FLAG_GLOBAL }
};
#endif

extern "C" void *rheap_block_alloc(size_t size)
{
  return my_malloc(rheap_key_memory_block, size, MYF(0));
}

extern "C" void rheap_block_free(void *block) { my_free(block); }

extern "C" void *rheap_heap_alloc(size_t size)
{
  return my_malloc(rheap_key_memory_heap, size, MYF(0));
}

extern "C" void *rheap_heap_realloc(void *ptr, size_t size)
{
  return my_realloc(rheap_key_memory_heap, ptr, size, MYF(0));
}

extern "C" void rheap_heap_free(void *ptr) { my_free(ptr); }

extern "C" void rheap_log(int level, const char *msg)
{
  if (level == 0)
    sql_print_error("RHEAP: %s", msg);
  else if (level == 1)
    sql_print_warning("RHEAP: %s", msg);
  else
    sql_print_information("RHEAP: %s", msg);
}

extern "C" size_t rheap_cs_charpos(const void *cs, const unsigned char *s, size_t len,
                                   size_t chars)
{
  return my_ci_charpos(static_cast<CHARSET_INFO *>(cs), (const char *) s,
                       (const char *) s + len, chars);
}

extern "C" size_t rheap_cs_strnxfrmlen(const void *cs, size_t len)
{
  CHARSET_INFO *c= static_cast<CHARSET_INFO *>(cs);
  return c->coll->strnxfrmlen(c, len);
}

extern "C" void rheap_cs_strnxfrm(const void *cs, unsigned char *dst, size_t dstlen, size_t chars,
                                  const unsigned char *src, size_t srclen)
{
  CHARSET_INFO *c= static_cast<CHARSET_INFO *>(cs);
  c->coll->strnxfrm(c, dst, dstlen, (uint) (chars * c->strxfrm_multiply), src, srclen,
                    MY_STRXFRM_PAD_WITH_SPACE | MY_STRXFRM_PAD_TO_MAXLEN);
}

extern "C" size_t rheap_cs_strnxfrm_unpadded(const void *cs, unsigned char *dst, size_t dstlen,
                                             size_t chars, const unsigned char *src,
                                             size_t srclen)
{
  CHARSET_INFO *c= static_cast<CHARSET_INFO *>(cs);
  return c->coll->strnxfrm(c, dst, dstlen, (uint) (chars * c->strxfrm_multiply), src, srclen, 0);
}

extern "C" size_t rheap_cs_space(const void *cs, unsigned char *dst, size_t dstlen)
{
  CHARSET_INFO *c= static_cast<CHARSET_INFO *>(cs);
  int n= my_ci_wc_mb(c, (my_wc_t) ' ', dst, dst + dstlen);
  return n > 0 ? (size_t) n : 0;
}

extern "C" int rheap_cs_one_level(const void *cs)
{
  return static_cast<const CHARSET_INFO *>(cs)->levels_for_order <= 1;
}

extern "C" int rheap_cs_pads_with_space(const void *cs)
{
  return !(static_cast<const CHARSET_INFO *>(cs)->state & MY_CS_NOPAD);
}

extern "C" size_t rheap_cs_lengthsp(const void *cs, const unsigned char *s, size_t len)
{
  return my_ci_lengthsp(static_cast<CHARSET_INFO *>(cs), (const char *) s, len);
}

/* Exported by mariadbd (strings/ctype-simple.c) but not declared in m_ctype.h. */
extern "C" size_t my_strnxfrm_simple_nopad(CHARSET_INFO *, uchar *, size_t, uint, const uchar *,
                                           size_t, uint);

extern "C" const unsigned char *rheap_cs_weight_map(const void *cs)
{
  const CHARSET_INFO *c= static_cast<const CHARSET_INFO *>(cs);
  if (c->coll->strnxfrm == my_strnxfrm_simple || c->coll->strnxfrm == my_strnxfrm_simple_nopad)
    return c->sort_order;
  return nullptr;
}

extern "C" void rheap_cs_hash_sort(const void *cs, const unsigned char *s, size_t len,
                                   uint64_t *nr1, uint64_t *nr2)
{
  CHARSET_INFO *c= static_cast<CHARSET_INFO *>(cs);
  ulong a= (ulong) *nr1, b= (ulong) *nr2;
  c->coll->hash_sort(c, s, len, &a, &b);
  *nr1= a;
  *nr2= b;
}

/* ---- Plugin declaration ----------------------------------------------------------------- */

static handler *rheap_create_handler(handlerton *hton, TABLE_SHARE *share, MEM_ROOT *mem_root)
{
  return new (mem_root) ha_rheap(hton, share, RHEAP_KIND_RHEAP);
}

/** hton->drop_table: 0 dropped, -1 not ours (so DROP TABLE IF EXISTS still notes "Unknown table"). */
static int rheap_hton_drop_table(handlerton *, const char *path) { return rheap_drop_table(path); }

/** What the server says of `share`, into `out`, for rheap to decide from; NULL without a share. */
static const rheap_share_facts *share_facts(const TABLE_SHARE *share, rheap_share_facts *out)
{
  if (!share)
    return NULL;
  *out= { share->tmp_table == INTERNAL_TMP_TABLE, share->db.str, share->db.length,
          share->blob_fields, share->max_rows, share->normalized_path.str };
  return out;
}

/** MEMORY's handler factory while rheap is loaded: rheap's handler, still MEMORY's to the server
    (same handlerton, so conversion to Aria and every other heap-only path keep working), for
    the tables rheap_takeover gives it; HEAP's own otherwise. */
static handler *rheap_heap_create(handlerton *hton, TABLE_SHARE *share, MEM_ROOT *mem_root)
{
  rheap_share_facts facts;
  if (rheap_serves((uint32_t) takeover_mode, share_facts(share, &facts)))
    return new (mem_root) ha_rheap(hton, share, RHEAP_KIND_MEMORY);
  return heap_create(hton, share, mem_root);
}

/** Aria's handler factory while rheap is loaded. Create_tmp_table::choose_engine sends every
    internal temporary table with BLOB/TEXT columns to Aria; for those of information_schema
    (SHOW FULL COLUMNS, SELECT from COLUMNS, ROUTINES, ...) that rheap_serves_schema_table
    takes, this re-points the share at MEMORY and returns rheap's handler. It runs before
    finalize() and instantiate_tmp_table() look at share->db_type(), so from here on the
    server treats the table as an in-memory one: no Aria files, and the server's own
    conversion to Aria when the table is full. Every other table is Aria's. */
static handler *rheap_aria_create(handlerton *hton, TABLE_SHARE *share, MEM_ROOT *mem_root)
{
  /* Every Aria table comes here, some with no thread (at start-up); the tables rheap may take
     are built by a statement. */
  THD *thd= current_thd;
  rheap_share_facts facts;
  const rheap_share_facts *f= thd ? share_facts(share, &facts) : NULL;
  if (f)
  {
    LEX *lex= thd->lex;
    /* A statement that only needs the definition, unless the table is the SHOW command's own
       (SHOW FULL COLUMNS reads COLUMNS, "reformed" from the SHOW). */
    bool structure_only= lex->only_view_structure() &&
      !(lex->query_tables && lex->query_tables->schema_table_reformed);
    bool disk_asked= thd->variables.big_tables || !thd->variables.tmp_memory_table_size;
    if (rheap_serves_schema_table((uint32_t) takeover_mode, f, takeover_information_schema,
                                  structure_only, disk_asked))
    {
      share->db_plugin= ha_lock_engine(NULL, heap_hton);
      return new (mem_root) ha_rheap(heap_hton, share, RHEAP_KIND_MEMORY_BLOBS);
    }
  }
  return aria_create(hton, share, mem_root);
}

/** The handlerton of a built-in engine while it is initialised: NULL before its init and
    after its deinit (the server registers a handlerton under its legacy type when the engine's
    init has succeeded, and takes it out before freeing it). Before Aria's init its plugin has
    no handlerton at all, so looking it up by name could hand back nothing to use. */
static handlerton *live_hton(enum legacy_db_type type)
{
  return ha_resolve_by_legacy_type(NULL, type);
}

/** MEMORY's hton->drop_table while rheap is loaded: the table is rheap's or HEAP's. */
static int rheap_heap_drop_table(handlerton *hton, const char *path)
{
  int ours= rheap_drop_table(path);
  if (ours == -1)
  {
    rheap_heap_table_moved(path, NULL);
    return heap_drop(hton, path);
  }
  hold_plugin_while_memory_tables();
  return ours;
}

static int name_status_variables();

static int rheap_init_func(void *p)
{
  /* With --plugin-load-add we may come before MEMORY or Aria: the server retries us after
     every other plugin. On that retry Aria is ready if the server has it at all; without it,
     rheap goes on without taking Aria's tables. */
  static bool retried;
  aria_hton= live_hton(DB_TYPE_ARIA);
  if (!heap_hton || (!aria_hton && !retried))
  {
    retried= true;
    return HA_ERR_RETRY_INIT;
  }
  handlerton *hton= static_cast<handlerton *>(p);
  rheap_hton= hton;
  hton->create= rheap_create_handler;
  hton->drop_table= rheap_hton_drop_table;
  hton->flags= HTON_CAN_RECREATE;
  /* Keep this library mapped after UNINSTALL: handlers made for MEMORY tables do not hold a
     reference to this plugin, and their code must outlive it. */
  Dl_info self;
  if (dladdr((void *) &rheap_init_func, &self) && self.dli_fname)
    dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
#ifdef HAVE_PSI_INTERFACE
  mysql_memory_register("rheap", rheap_memory_keys, array_elements(rheap_memory_keys));
#endif
  if (int err= rheap_plugin_init())
    return err;
  if (name_status_variables())
    return 1;
  for (uint kind= 0; kind < array_elements(ha_rheap::flags); kind++)
    ha_rheap::flags[kind]= rheap_table_flags((uint8_t) kind);
  rheap_set_block_cache_size(block_cache_size);
  rheap_set_max_memory(max_memory);
  heap_create= heap_hton->create;
  heap_drop= heap_hton->drop_table;
  heap_hton->create= rheap_heap_create;
  heap_hton->drop_table= rheap_heap_drop_table;
  if (aria_hton)
  {
    aria_create= aria_hton->create;
    aria_hton->create= rheap_aria_create;
  }
  else
    sql_print_warning("RHEAP: no Aria engine: information_schema tables with BLOB/TEXT "
                      "columns are not taken over");
  return 0;
}

/** Gives MEMORY back its own factory: new MEMORY tables are HEAP's again. Handlers made for
    MEMORY until now keep working (the library stays mapped, see init). */
static int rheap_deinit_func(void *)
{
  /* At shutdown the server deinitialises us while we still hold ourselves (MEMORY tables
     left): let go, so the server finds no reference left. */
  plugin_ref release= NULL;
  {
    std::lock_guard<std::mutex> guard(self_ref_mutex);
    release= self_ref;
    self_ref= NULL;
  }
  if (release)
    plugin_unlock(NULL, release);
  rheap_hton= NULL;
  /* At server shutdown MEMORY and Aria may be gone already (freed): only an engine still
     initialised gets its factory back. */
  if (heap_hton && live_hton(DB_TYPE_HEAP) == heap_hton &&
      heap_hton->create == rheap_heap_create)
  {
    heap_hton->create= heap_create;
    heap_hton->drop_table= heap_drop;
  }
  if (aria_hton && live_hton(DB_TYPE_ARIA) == aria_hton && aria_hton->create == rheap_aria_create)
    aria_hton->create= aria_create;
  return rheap_plugin_deinit();
}

static MYSQL_SYSVAR_ENUM(takeover, takeover_mode, PLUGIN_VAR_RQCMDARG,
  "Which MEMORY tables RHEAP serves: OFF (none), INTERNAL (the server's internal temporary "
  "tables), ALL (also ENGINE=MEMORY tables). Applies to tables created afterwards.",
  NULL, NULL, RHEAP_TAKEOVER_INTERNAL, &takeover_typelib);

static MYSQL_SYSVAR_BOOL(takeover_information_schema, takeover_information_schema,
  PLUGIN_VAR_OPCMDARG,
  "Whether RHEAP also serves the information_schema tables that have BLOB/TEXT columns "
  "(SHOW FULL COLUMNS; SELECTs from COLUMNS, ROUTINES, VIEWS, TRIGGERS, ...), which the server "
  "otherwise builds in Aria. Needs rheap_takeover other than OFF. Applies to statements "
  "started afterwards.",
  NULL, NULL, 1);

static MYSQL_SYSVAR_ENUM(table_size_limit, table_size_limit, PLUGIN_VAR_RQCMDARG,
  "What makes an RHEAP table full: ACTUAL, the bytes it really holds passing its limit "
  "(max_heap_table_size; for an internal temporary table, tmp_memory_table_size within it); "
  "HEAP, the bytes MEMORY would hold, so that a table fills at MEMORY's own row (for exact "
  "comparisons with MEMORY). Applies to tables created afterwards.",
  NULL, NULL, RHEAP_LIMIT_BY_ACTUAL, &limit_by_typelib);

static void update_block_cache_size(THD *, struct st_mysql_sys_var *, void *var, const void *save)
{
  block_cache_size= *static_cast<const ulonglong *>(save);
  rheap_set_block_cache_size(block_cache_size);
}

static MYSQL_SYSVAR_ULONGLONG(block_cache_size, block_cache_size, PLUGIN_VAR_RQCMDARG,
  "Bytes of freed table blocks RHEAP keeps for the next tables, server-wide; blocks beyond it "
  "go back to the system at once. 0 keeps none.",
  NULL, update_block_cache_size, 16ULL << 20, 0, ULONGLONG_MAX, 1024);

static void update_max_memory(THD *, struct st_mysql_sys_var *, void *var, const void *save)
{
  max_memory= *static_cast<const ulonglong *>(save);
  rheap_set_max_memory(max_memory);
}

static MYSQL_SYSVAR_ULONGLONG(max_memory, max_memory, PLUGIN_VAR_RQCMDARG,
  "Bytes all RHEAP tables (internal temporary tables included) may hold together, server-wide. "
  "A write that needs more finds its table full: an internal temporary table moves to disk, "
  "an RHEAP or MEMORY table reports that it is full. Lowering it takes nothing from a table; it "
  "stops growth. 0: no limit.",
  NULL, update_max_memory, 1ULL << 30, 0, ULONGLONG_MAX, 0);

#ifdef RHEAP_FAILPOINTS
/** rheap_debug_fail_alloc_after: test builds only (cargo feature `failpoints`), never in the
    shipped plugin. Shows the value last set; the countdown itself lives in the engine. */
static long long debug_fail_alloc_after;

static void update_debug_fail_alloc_after(THD *, struct st_mysql_sys_var *, void *,
                                          const void *save)
{
  debug_fail_alloc_after= *static_cast<const long long *>(save);
  rheap_debug_fail_alloc_after(debug_fail_alloc_after);
}

static MYSQL_SYSVAR_LONGLONG(debug_fail_alloc_after, debug_fail_alloc_after, PLUGIN_VAR_RQCMDARG,
  "Test builds only: RHEAP's block allocation fails after this many more blocks, server-wide, "
  "until it is set again; -1 never fails.",
  NULL, update_debug_fail_alloc_after, -1, -1, LONGLONG_MAX, 1);

/** rheap_debug_fail_nth_alloc: test builds only, as above. */
static long long debug_fail_nth_alloc;

static void update_debug_fail_nth_alloc(THD *, struct st_mysql_sys_var *, void *,
                                        const void *save)
{
  debug_fail_nth_alloc= *static_cast<const long long *>(save);
  rheap_debug_fail_nth_alloc(debug_fail_nth_alloc);
}

static MYSQL_SYSVAR_LONGLONG(debug_fail_nth_alloc, debug_fail_nth_alloc, PLUGIN_VAR_RQCMDARG,
  "Test builds only: the Nth allocation of any kind RHEAP makes from now (a block, or its own "
  "heap memory) fails, once; -1 none.",
  NULL, update_debug_fail_nth_alloc, -1, -1, LONGLONG_MAX, 1);
#endif

static struct st_mysql_sys_var *rheap_system_variables[]= {
  MYSQL_SYSVAR(takeover), MYSQL_SYSVAR(takeover_information_schema),
  MYSQL_SYSVAR(block_cache_size), MYSQL_SYSVAR(max_memory), MYSQL_SYSVAR(table_size_limit),
#ifdef RHEAP_FAILPOINTS
  MYSQL_SYSVAR(debug_fail_alloc_after), MYSQL_SYSVAR(debug_fail_nth_alloc),
#endif
  NULL
};

/** SHOW STATUS: the engine's counter I (core/src/status.rs), summed over its per-CPU parts
    when it is read. */
template <uint32_t I>
static int show_counter(THD *, struct st_mysql_show_var *var, void *buff,
                        struct system_status_var *, enum enum_var_type)
{
  var->type= SHOW_LONGLONG;
  var->value= static_cast<char *>(buff);
  *static_cast<unsigned long long *>(buff)= rheap_status_value(I);
  return 0;
}

template <std::size_t... I>
static constexpr std::array<mysql_show_var_func, sizeof...(I)>
counter_functions(std::index_sequence<I...>)
{ return {{ &show_counter<(uint32_t) I>... }}; }

/** The status variables, named by the engine at init (the server registers them after init
    returns); until then, and past the engine's count, the list's end. */
static struct st_mysql_show_var rheap_status_variables[RHEAP_STATUS_MAX + 1];

/** Fills rheap_status_variables from the engine's list. Returns 0, or 1 when the engine has
    more counters than room here (the engine's build asserts it has not, so never in practice). */
static int name_status_variables()
{
  static constexpr auto functions= counter_functions(std::make_index_sequence<RHEAP_STATUS_MAX>());
  uint32_t n= rheap_status_count();
  if (n > RHEAP_STATUS_MAX)
  {
    sql_print_error("RHEAP: %u status variables, room for %u", n, (uint) RHEAP_STATUS_MAX);
    return 1;
  }
  for (uint32_t i= 0; i < n; i++)
    rheap_status_variables[i]= { rheap_status_name(i), (char *) functions[i], SHOW_SIMPLE_FUNC };
  rheap_status_variables[n]= { NullS, NullS, SHOW_LONG };
  return 0;
}

/** The interface version the server checks against its own MYSQL_VERSION_ID (a named, non-static
    object so tests can find it in the symbol table). */
struct st_mysql_storage_engine rheap_storage_engine= { MYSQL_HANDLERTON_INTERFACE_VERSION };

/* information_schema.RHEAP_TABLES: one row per live rheap table (core/src/live.rs). */
namespace Show {
static ST_FIELD_INFO rheap_tables_fields[]=
{
  Column("TABLE_SCHEMA", Name(), NULLABLE),
  Column("TABLE_NAME", Varchar(FN_REFLEN), NOT_NULL),
  Column("KIND", Varchar(16), NOT_NULL),
  Column("CONNECTION_ID", ULonglong(), NULLABLE),
  Column("TABLE_ROWS", ULonglong(), NOT_NULL),
  Column("DATA_BYTES", ULonglong(), NOT_NULL),
  Column("INDEX_BYTES", ULonglong(), NOT_NULL),
  Column("BLOCKS", ULonglong(), NOT_NULL),
  Column("MAX_BYTES", ULonglong(), NOT_NULL),
  CEnd()
};
} // namespace Show

/** The reader of RHEAP_TABLES and what is known of it during one fill. */
struct rheap_tables_fill_ctx
{
  THD *thd;
  TABLE *table;
  /** The reader has PROCESS: it sees every connection's tables, as in PROCESSLIST. */
  bool process;
  /** The last connection asked about, and whether the reader sees it (rows come grouped by
      table, not by connection, but a statement's few tables are usually listed together). */
  uint64_t asked= 0;
  bool asked_seen= false;
};

/** Whether the reader may see table `db`.`name` in information_schema.TABLES: the rule of
    sql_show.cc's get_all_tables, a privilege on the database (or a global one) that covers
    tables, or any grant on the table itself. Raises no error. */
static bool rheap_sees_table(THD *thd, const char *db, const char *name)
{
  Security_context *sctx= thd->security_ctx;
  privilege_t col(NO_ACL);
  if (check_access(thd, SELECT_ACL, db, &col, NULL, false, true) &&
      !(sctx->master_access & (DB_ACLS | SHOW_DB_ACL)) &&
      !acl_get_all3(sctx, db, false))
    return false;
  if (col & TABLE_ACLS)
    return true;
  TABLE_LIST t;
  t.reset();
  t.db= { db, strlen(db) };
  t.table_name= { name, strlen(name) };
  t.grant.privilege= col;
  return !check_grant(thd, TABLE_ACLS, &t, true, 1, true);
}

struct rheap_owner_probe { my_thread_id id; const char *reader; bool seen; };

/** server_threads' callback: whether the connection asked for is the reader's user's, as
    PROCESSLIST decides for a reader without PROCESS (thd_visible_in_processlist). The list's
    lock, held during the call, keeps the THD and its security context alive. */
static my_bool rheap_owner_match(THD *tmp, rheap_owner_probe *p)
{
  if (tmp->thread_id != p->id)
    return 0;
  const char *user= tmp->security_ctx->user;
  p->seen= (tmp->vio_ok() || tmp->system_thread) && user &&
           (!tmp->system_thread || (tmp->system_thread & SYSTEM_THREAD_EVENT_WORKER)) &&
           !strcmp(user, p->reader);
  return 1;
}

/** Whether the reader may see a table owned by connection `id`: its own, or another of its
    user's connections, or any with PROCESS (PROCESSLIST's rule). */
static bool rheap_sees_connection(rheap_tables_fill_ctx *c, uint64_t id)
{
  if (c->process || id == (uint64_t) c->thd->thread_id)
    return true;
  if (id != c->asked)
  {
    rheap_owner_probe p= { (my_thread_id) id, c->thd->security_ctx->priv_user, false };
    server_threads.iterate(rheap_owner_match, &p);
    c->asked= id;
    c->asked_seen= p.seen;
  }
  return c->asked_seen;
}

/** Stores one row of RHEAP_TABLES, if the reader may see it (rheap_core::live::Audience); a
    named table's path ./schema/name is shown as the schema and table names it encodes. */
static int rheap_tables_store(void *ctx, const rheap_live_table *r)
{
  rheap_tables_fill_ctx *c= static_cast<rheap_tables_fill_ctx *>(ctx);
  Field **f= c->table->field;
  char path[FN_REFLEN + 1], schema[NAME_LEN + 1], name[FN_REFLEN + 1];
  size_t len= MY_MIN((size_t) r->path_len, sizeof(path) - 1);
  memcpy(path, r->path, len);
  path[len]= 0;
  char *slash= r->named && len > 2 && !memcmp(path, "./", 2) ? strchr(path + 2, '/') : NULL;
  uint schema_len= 0, name_len= 0;
  if (slash)
  {
    *slash= 0;
    schema_len= filename_to_tablename(path + 2, schema, sizeof(schema));
    name_len= filename_to_tablename(slash + 1, name, sizeof(name));
  }
  bool seen;
  switch (r->audience) {
  case RHEAP_AUDIENCE_PRIVILEGED:
    seen= slash && rheap_sees_table(c->thd, schema, name);
    break;
  case RHEAP_AUDIENCE_OWNER:
    seen= rheap_sees_connection(c, r->connection);
    break;
  default:
    seen= c->process;
  }
  if (!seen)
    return 0;
  if (slash)
  {
    f[0]->store(schema, schema_len, system_charset_info);
    f[0]->set_notnull();
    f[1]->store(name, name_len, system_charset_info);
  }
  else
  {
    f[0]->set_null();
    f[1]->store(path, len, system_charset_info);
  }
  f[2]->store(r->kind, r->kind_len, system_charset_info);
  if (r->connection)
  {
    f[3]->store((longlong) r->connection, true);
    f[3]->set_notnull();
  }
  else
    f[3]->set_null();
  f[4]->store((longlong) r->rows, true);
  f[5]->store((longlong) r->data_bytes, true);
  f[6]->store((longlong) r->index_bytes, true);
  f[7]->store((longlong) r->blocks, true);
  f[8]->store((longlong) r->max_bytes, true);
  return schema_table_store_record(c->thd, c->table) ? 1 : 0;
}

/** ST_SCHEMA_TABLE::fill_table: every live table the reader may see, as the engine lists
    them. The reader is thd->security_ctx: the definer's inside a DEFINER view or routine, as
    for the server's own views. */
static int rheap_tables_fill(THD *thd, TABLE_LIST *tables, COND *)
{
  rheap_tables_fill_ctx ctx;
  ctx.thd= thd;
  ctx.table= tables->table;
  ctx.process= (thd->security_ctx->master_access & PROCESS_ACL) != NO_ACL;
  return rheap_live_tables(rheap_tables_store, &ctx) ? 1 : 0;
}

static int rheap_tables_init(void *p)
{
  ST_SCHEMA_TABLE *schema= static_cast<ST_SCHEMA_TABLE *>(p);
  schema->fields_info= Show::rheap_tables_fields;
  schema->fill_table= rheap_tables_fill;
  return 0;
}

static struct st_mysql_information_schema rheap_tables_descriptor=
{ MYSQL_INFORMATION_SCHEMA_INTERFACE_VERSION };

maria_declare_plugin(rheap)
{
  MYSQL_STORAGE_ENGINE_PLUGIN,
  &rheap_storage_engine,
  "RHEAP",
  "the rheap developers",
  "In-memory tables, HEAP-compatible, written in Rust",
  PLUGIN_LICENSE_GPL,
  rheap_init_func,
  rheap_deinit_func,
  0x0001,
  rheap_status_variables,
  rheap_system_variables,
  "0.1",
  /* GAMMA (release candidate): it passes the server's own suites, but has no production history
     yet. A stable server loads GAMMA plugins by default (plugin_maturity=gamma); the note it
     logs at start is one mysql-test-run's global suppressions already cover. */
  MariaDB_PLUGIN_MATURITY_GAMMA
},
{
  MYSQL_INFORMATION_SCHEMA_PLUGIN,
  &rheap_tables_descriptor,
  "RHEAP_TABLES",
  "the rheap developers",
  "Every live RHEAP table, internal temporary tables included, and the memory it holds",
  PLUGIN_LICENSE_GPL,
  rheap_tables_init,
  NULL,
  0x0001,
  NULL,
  NULL,
  "0.1",
  MariaDB_PLUGIN_MATURITY_GAMMA
}
maria_declare_plugin_end;
