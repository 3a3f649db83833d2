/*
  aria_table.cc: a table in Aria's place (RHEAP_KIND_ARIA, docs/aria_tables.md) that passes its
  limit moves to Aria with every row, through the server's own create_internal_tmp_table, and
  from then on Aria's handler serves every call (RHEAP_ON_DISK in ha_rheap.h); one whose keys
  the engine cannot hold is Aria's from its open.
*/
#include "ha_rheap.h"

int ha_rheap::move_to_disk(const uchar *row)
{
  /* A move that failed is not tried again: the server goes on with the statement after some
     errors (INTERSECT ALL's unfold does), and create_internal_tmp_table changed the share. */
  if (move_failed || !rheap_aria_own_create)
    return HA_ERR_RECORD_FILE_FULL;
  move_failed= true;
  handler *h= nullptr;
  if (int err= make_disk(&h))
    return err == HA_ERR_OUT_OF_MEM ? err : HA_ERR_RECORD_FILE_FULL;
  /* Keys the server disabled (INTERSECT ALL's and EXCEPT ALL's unfold, which then writes
     copies of rows) are disabled in Aria's table too, before the copies come. */
  if (rheap_indexes_are_disabled(rs()))
    h->ha_disable_indexes(key_map(0), false);
  /* Every row, through record[1] as the server's own move copies them (its BLOB pointers
     into this handler's buffer, which Aria copies at once). The row the server read last
     keeps its BLOBs where they are: `row` may be that row (INTERSECT ALL's and EXCEPT ALL's
     unfold writes copies of it), and the server goes on writing it after the move. */
  rheap_hold_row_blobs(rs());
  int err= rheap_rnd_init(rs(), 1);
  while (!err)
  {
    err= rheap_rnd_next(rs(), table->record[1]);
    /* A freed slot (a deleted row, or one a duplicate took and gave back): skipped, as the
       server's ha_rnd_next skips it. */
    if (err == HA_ERR_RECORD_DELETED)
    {
      err= 0;
      continue;
    }
    if (!err)
      err= h->ha_write_tmp_row(table->record[1]);
  }
  if (err != HA_ERR_END_OF_FILE)
  {
    drop(h);
    return err ? err : HA_ERR_INTERNAL_ERROR;
  }
  rheap_close(rs());
  move_failed= false;
  moved= true;
  disk= h;
  rheap_note_moved_to_aria();
  /* A scan under way starts again from Aria's first row: the one server code that writes to a
     table while it scans it, INTERSECT ALL's and EXCEPT ALL's unfold, marks the rows it is done
     with and starts its scan again itself after it moves a MEMORY table. */
  if (inited == INDEX && active_index < table->s->keys)
    disk->ha_index_init(active_index, 0);
  else if (inited == RND)
    disk->ha_rnd_init(true);
  return disk->ha_write_tmp_row(const_cast<uchar *>(row));
}

int ha_rheap::open_disk()
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

int ha_rheap::make_disk(handler **out)
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

void ha_rheap::drop(handler *h)
{
  h->ha_close();
  rheap_aria_hton->drop_table(rheap_aria_hton, table->s->path.str);
  delete h;
}

TMP_ENGINE_COLUMNDEF *ha_rheap::columns(TMP_ENGINE_COLUMNDEF *c) const
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

int ha_rheap::disk_info(uint flag)
{
  int err= disk->info(flag);
  stats= disk->stats;
  errkey= disk->errkey;
  if (flag & HA_STATUS_ERRKEY)
    memcpy(dup_ref, disk->dup_ref, disk->ref_length);
  return err;
}

void ha_rheap::drop_disk()
{
  handler *d= disk;
  disk= nullptr;
  d->ha_index_or_rnd_end();
  drop(d);
}

bool ha_rheap::aria_may_refuse() const
{
  ulonglong parts= 0;
  for (uint i= 0; i < table->s->keys; i++)
    parts+= table->key_info[i].user_defined_key_parts;
  return (table->s->fields + 2) * 22ULL + parts * 48 + 2048 > 65536 - 32768;
}
