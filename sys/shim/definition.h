/*
  definition.h: the table definition the shim hands to rheap (rheap_table_def), built from the
  server's TABLE as HEAP reads one (heap_prepare_hp_create_info); used by ha_rheap.cc's open
  and create.
*/
#ifndef RHEAP_DEFINITION_H
#define RHEAP_DEFINITION_H

#include "shim.h"
#include <new>

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

  /** Fills `def` from `table` as HEAP reads a definition (heap_prepare_hp_create_info);
      `aria`: a table in Aria's place, whose keys are as Aria would make them. Returns 0 or
      HA_ERR_OUT_OF_MEM. */
  int fill(const TABLE *table, bool internal, ulonglong auto_increment, bool for_memory,
           bool aria= false)
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
      /* A unique constraint (the share's only key) compares NULLs as equal, as Aria's
         MARIA_UNIQUEDEF does (null_are_equal). Aria also makes one of a key longer than its
         limits (create_internal_tmp_table). */
      bool constraint= k == 0 &&
        (s->uniques || (aria && (key->key_length > rheap_aria_key_length ||
                                 key->user_defined_key_parts > rheap_aria_key_parts)));
      keys[k]= { seg, key->user_defined_key_parts, key->key_length,
                 key->algorithm == HA_KEY_ALG_BTREE, (key->flags & HA_NOSAME) != 0 || constraint,
                 (key->flags & HA_NULL_ARE_EQUAL) != 0 || constraint, constraint };
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
    def.limit_by= (uint8_t) rheap_table_size_limit;
    def.connection= thd_get_thread_id(current_thd);
    /* The variable-length fields, from which the engine decides how to store the rows
       (RowFormat::for_table, core/src/rows/format.rs). The server counts a share's VARCHARs
       only when it reads a .frm, so an internal table's fields are looked at: its BLOBs and
       the VARCHARs whose room packing can save (RHEAP_PACKED_MIN_ROOM) are described, the rest
       is stored as it is. */
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
    if (field->flags & BLOB_FLAG)
      seg->blob_length_bytes= (uint8_t) static_cast<Field_blob *>(field)->pack_length_no_ptr();
    if (field->key_type() == HA_KEYTYPE_BIT)
    {
      const Field_bit *bit= static_cast<const Field_bit *>(field);
      seg->bit_pos= bit->bit_ptr ? (uint32_t) (bit->bit_ptr - rec) : 0;
      seg->bit_start= bit->bit_ofs;
      seg->bit_length= (uint8_t) bit->bit_len;
    }
  }
};

#endif
