/*
  ha_rheap.cc: the RHEAP handler, the C++ side of each table the engine serves.

  A thin adapter, as ha_heap.cc is over the heap C API: `ha_rheap` (ha_rheap.h) subclasses the
  server's `handler` and forwards each virtual to the Rust function of the same name
  (rheap_shim.h); this file holds the methods of more than a line. The engine's logic, including every decision about rows and tables, is in
  Rust; this file only converts between the server's C++ types and the C interface.

  Call sequence of a full table scan, as the server drives it:
    ha_rheap() -> open() -> store_lock() -> external_lock(F_WRLCK|F_RDLCK)
    -> info() -> rnd_init(true) -> rnd_next()... until HA_ERR_END_OF_FILE -> rnd_end()
    -> external_lock(F_UNLCK) -> close() -> ~ha_rheap()
*/
#include "ha_rheap.h"

int ha_rheap::open(const char *name, int, uint test_if_locked)
{
  if (kind == RHEAP_KIND_ARIA && !disk && aria_may_refuse())
    return open_disk();
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

int ha_rheap::close()
{
  internal_open= false;
  if (disk)
    drop_disk();
  /* A table that moved to Aria was closed when it moved. */
  return moved ? 0 : rheap_close(rs());
}

void ha_rheap::drop_table(const char *name)
{
  if (internal_open || moved)
    ha_close();
  else
    handler::drop_table(name);
}

int ha_rheap::create(const char *name, TABLE *form, HA_CREATE_INFO *info)
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

int ha_rheap::delete_table(const char *name)
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

int ha_rheap::rename_table(const char *from, const char *to)
{
  if (!for_heap(from))
    return rheap_rename_table(from, to);
  handler *h= rheap_heap_own_create(ht, NULL, current_thd->mem_root);
  int err= h ? h->ha_rename_table(from, to) : HA_ERR_OUT_OF_MEM;
  if (!err)
    rheap_heap_table_moved(from, to);
  return err;
}

int ha_rheap::write_row(const uchar *buf)
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

int ha_rheap::rnd_init(bool scan)
{
  if (unlikely(disk != nullptr))
  {
    if (disk->inited != NONE)
      disk->ha_index_or_rnd_end();
    return disk->ha_rnd_init(scan);
  }
  return rheap_rnd_init(rs(), scan);
}

int ha_rheap::index_init(uint idx, bool sorted)
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

int ha_rheap::index_end()
{
  active_index= MAX_KEY;
  if (unlikely(disk != nullptr) && disk->inited != NONE)
    return disk->ha_index_or_rnd_end();
  return 0;
}

void ha_rheap::position(const uchar *record)
{
  if (unlikely(disk != nullptr))
  {
    disk->position(record);
    memcpy(ref, disk->ref, disk->ref_length);
    return;
  }
  rheap_position(rs(), ref);
}

ha_rows ha_rheap::records_in_range(uint inx, const key_range *min_key, const key_range *max_key,
                           page_range *pages)
{
  RHEAP_ON_DISK(records_in_range(inx, min_key, max_key, pages));
  rheap_key_range lo, hi;
  uint64_t n= rheap_records_in_range(rs(), inx, to_range(min_key, &lo), to_range(max_key, &hi));
  return n == UINT64_MAX ? HA_POS_ERROR : (ha_rows) n;
}

void ha_rheap::update_create_info(HA_CREATE_INFO *create_info)
{
  info(HA_STATUS_AUTO);
  if (!(create_info->used_fields & HA_CREATE_USED_AUTO))
    create_info->auto_increment_value= stats.auto_increment_value;
}

bool ha_rheap::check_if_incompatible_data(HA_CREATE_INFO *info, uint table_changes)
{
  if ((info->used_fields & HA_CREATE_USED_AUTO && info->auto_increment_value != 0) ||
      table_changes == IS_EQUAL_NO || table_changes & IS_EQUAL_PACK_LENGTH)
    return COMPATIBLE_DATA_NO;
  return COMPATIBLE_DATA_YES;
}

int ha_rheap::info(uint flag)
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

ha_rows ha_rheap::records()
{
  if (unlikely(disk != nullptr))
    return disk_info(HA_STATUS_VARIABLE) ? HA_POS_ERROR : stats.records;
  return rheap_records(rs());
}

THR_LOCK_DATA **ha_rheap::store_lock(THD *, THR_LOCK_DATA **to, enum thr_lock_type lock_type)
{
  if (!has_lock)
    return to;
  if (lock_type != TL_IGNORE && lock_data.type == TL_UNLOCK)
    lock_data.type= lock_type;
  *to++= &lock_data;
  return to;
}

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
