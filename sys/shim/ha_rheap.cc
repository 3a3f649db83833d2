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
#include <mysql/plugin.h>
#include <new>

#include "rheap_shim.h"

/** Fills the engine's view of a table definition from the server's. */
static void rheap_fill_def(const TABLE *table, bool internal, ulonglong auto_increment,
                           rheap_table_def *def)
{
  const TABLE_SHARE *s= table->s;
  def->reclength= s->reclength;
  def->max_rows= s->max_rows;
  def->min_rows= s->min_rows;
  def->max_table_size= current_thd->variables.max_heap_table_size;
  def->auto_increment= auto_increment;
  def->internal= internal;
}

class ha_rheap final : public handler
{
  /** The Rust state; NULL only if it could not be allocated (every call then fails). */
  rheap_handler *rs;
  /** This handler's request on the table's THR_LOCK (shared tables only). */
  THR_LOCK_DATA lock_data;
  bool has_lock= false;

public:
  ha_rheap(handlerton *hton, TABLE_SHARE *share)
    : handler(hton, share), rs(rheap_handler_new()) {}
  ~ha_rheap() override { rheap_handler_free(rs); }

  /** Capabilities, as the server tests them with HA_* bits (handler.h). */
  ulonglong table_flags() const override { return rheap_table_flags(); }
  /** No index support yet: max_supported_keys() is 0, so the server never asks. */
  ulong index_flags(uint, uint, bool) const override { return 0; }
  /** Rows are fixed-length, as in MEMORY (SHOW TABLE STATUS: Row_format Fixed). */
  enum row_type get_row_type() const override { return ROW_TYPE_FIXED; }

  /** Called once per handler before any row access; creates a missing table, as MEMORY does
      after a restart (the .frm outlives the rows). Returns 0 or an error code. */
  int open(const char *name, int, uint test_if_locked) override
  {
    rheap_table_def def;
    rheap_fill_def(table, test_if_locked & HA_OPEN_INTERNAL_TABLE, 0, &def);
    void *lock= nullptr;
    uint8_t emptied= 0;
    if (int err= rheap_open(rs, name, &def, &lock, &emptied))
      return err;
    if ((has_lock= lock != nullptr))
      thr_lock_data_init(static_cast<THR_LOCK *>(lock), &lock_data, nullptr);
    implicit_emptied= emptied;
    ref_length= rheap_ref_length();
    return 0;
  }
  /** Ends this handler's use of the table; the table itself lives on until dropped. */
  int close() override { return rheap_close(rs); }
  /** CREATE TABLE: makes the empty table `name` (a handler that is not open). */
  int create(const char *name, TABLE *form, HA_CREATE_INFO *info) override
  {
    rheap_table_def def;
    rheap_fill_def(form, false, info->auto_increment_value, &def);
    return rheap_create(rs, name, &def);
  }
  /** Drops `name`: 0, or -1 when there is no such table (the server then says so). */
  int delete_table(const char *name) override { return rheap_drop_table(name); }
  int rename_table(const char *from, const char *to) override { return rheap_rename_table(from, to); }

  /** INSERT of one row in record format (record[0]). */
  int write_row(const uchar *buf) override { return rheap_write_row(rs, buf); }
  /** UPDATE of the row last read (by scan, rnd_pos or index) to `new_data`. */
  int update_row(const uchar *old_data, const uchar *new_data) override
  { return rheap_update_row(rs, old_data, new_data); }
  /** DELETE of the row last read; allowed in the middle of a scan, which then goes on. */
  int delete_row(const uchar *buf) override { return rheap_delete_row(rs, buf); }
  /** DELETE without WHERE (and TRUNCATE of temporary tables). */
  int delete_all_rows() override { return rheap_delete_all_rows(rs); }
  int truncate() override { return rheap_truncate(rs); }

  /** Starts a full scan (scan=true) or a series of rnd_pos calls (scan=false). */
  int rnd_init(bool scan) override { return rheap_rnd_init(rs, scan); }
  /** Next row of the scan into `buf`, or HA_ERR_END_OF_FILE. */
  int rnd_next(uchar *buf) override { return rheap_rnd_next(rs, buf); }
  int rnd_end() override { return rheap_rnd_end(rs); }
  /** Reads the row at a position that position() stored. */
  int rnd_pos(uchar *buf, uchar *pos) override { return rheap_rnd_pos(rs, buf, pos); }
  /** Stores the position of the row last read into `ref`. */
  void position(const uchar *) override { rheap_position(rs, ref); }

  /** Statistics for the optimizer and SHOW TABLE STATUS. */
  int info(uint flag) override
  {
    rheap_stats s;
    if (int err= rheap_info(rs, flag, &s))
      return err;
    stats.records= s.records;
    stats.deleted= s.deleted;
    stats.data_file_length= s.data_file_length;
    stats.index_file_length= s.index_file_length;
    stats.max_data_file_length= s.max_data_file_length;
    stats.delete_length= s.delete_length;
    stats.mean_rec_length= (ulong) s.mean_rec_length;
    stats.create_time= (ulong) s.create_time;
    stats.auto_increment_value= s.auto_increment_value;
    return 0;
  }
  /** Exact row count (HA_HAS_RECORDS). */
  ha_rows records() override { return rheap_records(rs); }
  int extra(enum ha_extra_function) override { return 0; }
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
};

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

extern "C" void rheap_log(int level, const char *msg)
{
  if (level == 0)
    sql_print_error("RHEAP: %s", msg);
  else if (level == 1)
    sql_print_warning("RHEAP: %s", msg);
  else
    sql_print_information("RHEAP: %s", msg);
}

/* ---- Plugin declaration ----------------------------------------------------------------- */

static handler *rheap_create_handler(handlerton *hton, TABLE_SHARE *share, MEM_ROOT *mem_root)
{
  return new (mem_root) ha_rheap(hton, share);
}

/** hton->drop_table: 0 dropped, -1 not ours (so DROP TABLE IF EXISTS still notes "Unknown table"). */
static int rheap_hton_drop_table(handlerton *, const char *path) { return rheap_drop_table(path); }

static int rheap_init_func(void *p)
{
  handlerton *hton= static_cast<handlerton *>(p);
  hton->create= rheap_create_handler;
  hton->drop_table= rheap_hton_drop_table;
  hton->flags= HTON_CAN_RECREATE;
  return rheap_plugin_init();
}

static int rheap_deinit_func(void *) { return rheap_plugin_deinit(); }

/** The interface version the server checks against its own MYSQL_VERSION_ID (a named, non-static
    object so tests can find it in the symbol table). */
struct st_mysql_storage_engine rheap_storage_engine= { MYSQL_HANDLERTON_INTERFACE_VERSION };

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
  NULL,
  NULL,
  "0.1",
  /* STABLE: a GAMMA plugin loads with a warning in the error log at every server start, which
     mysql-test-run reports as a failure of whatever test runs first. */
  MariaDB_PLUGIN_MATURITY_STABLE
}
maria_declare_plugin_end;
