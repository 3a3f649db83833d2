/*
  services.cc: the server's services that rheap's Rust code calls (rheap_shim.h): THR_LOCKs for
  named tables, memory from my_malloc under performance_schema's instruments, moving an
  internal table's memory to its thread's count, the error log, and the collation functions of
  a CHARSET_INFO.
*/
#include "shim.h"
#include <new>

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

void rheap_register_memory_keys()
{
#ifdef HAVE_PSI_INTERFACE
  mysql_memory_register("rheap", rheap_memory_keys, array_elements(rheap_memory_keys));
#endif
}

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
