/*
  plugin.cc: the RHEAP plugin as the server loads it: its declaration (the storage engine and
  information_schema.RHEAP_TABLES), init and deinit, the takeover hooks that replace MEMORY's
  and Aria's handler factories while it is loaded, its system and status variables.
*/
#include "shim.h"
#include <array>
#include <dlfcn.h>
#include <mutex>
#include <utility>

/** rheap_takeover: which MEMORY tables rheap serves (OFF, INTERNAL, ALL). */
ulong rheap_takeover_mode;
/** rheap_takeover_information_schema: serve the information_schema tables with BLOB/TEXT
    columns, which the server builds in Aria. */
my_bool rheap_takeover_information_schema= 1;
/** rheap_takeover_blob_tables: serve a statement's internal tables with BLOB/TEXT columns,
    which the server builds in Aria (docs/aria_tables.md). */
my_bool rheap_takeover_blob_tables= 1;
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
ulong rheap_table_size_limit;
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

void rheap_hold_plugin_while_memory_tables()
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
handler *(*rheap_heap_own_create)(handlerton *, TABLE_SHARE *, MEM_ROOT *);
int (*rheap_heap_own_drop)(handlerton *, const char *);
/** Aria's handlerton and its own handler factory, replaced while the plugin is loaded (NULL
    when the server has no Aria ready: then nothing is taken from Aria). */
handlerton *rheap_aria_hton;
handler *(*rheap_aria_own_create)(handlerton *, TABLE_SHARE *, MEM_ROOT *);
static handlerton *&aria_hton= rheap_aria_hton;
static handler *(*&aria_create)(handlerton *, TABLE_SHARE *, MEM_ROOT *)= rheap_aria_own_create;
/** Aria's key limits (max_supported_key_length, _parts), which depend on aria_block_size: read
    from an Aria handler at init. */
uint rheap_aria_key_length= MAX_KEY_LENGTH;
uint rheap_aria_key_parts= MAX_REF_PARTS;

static handler *rheap_create_handler(handlerton *hton, TABLE_SHARE *share, MEM_ROOT *mem_root)
{
  return rheap_new_handler(hton, share, mem_root, RHEAP_KIND_RHEAP);
}

/** hton->drop_table: 0 dropped, -1 not ours (so DROP TABLE IF EXISTS still notes "Unknown table"). */
static int rheap_hton_drop_table(handlerton *, const char *path) { return rheap_drop_table(path); }

/** What the server says of `share`, into `out`, for rheap to decide from; NULL without a share. */
static const rheap_share_facts *share_facts(const TABLE_SHARE *share, rheap_share_facts *out)
{
  if (!share)
    return NULL;
  static const LEX_CSTRING temporary= { STRING_WITH_LEN("(temporary)") };
  *out= { share->tmp_table == INTERNAL_TMP_TABLE, share->db.str, share->db.length,
          share->blob_fields, share->max_rows, share->normalized_path.str,
          share->table_name.length == temporary.length &&
            !memcmp(share->table_name.str, temporary.str, temporary.length) };
  return out;
}

/** MEMORY's handler factory while rheap is loaded: rheap's handler, still MEMORY's to the server
    (same handlerton, so conversion to Aria and every other heap-only path keep working), for
    the tables rheap_takeover gives it; HEAP's own otherwise. */
static handler *rheap_heap_create(handlerton *hton, TABLE_SHARE *share, MEM_ROOT *mem_root)
{
  rheap_share_facts facts;
  if (rheap_serves((uint32_t) rheap_takeover_mode, share_facts(share, &facts)))
    return rheap_new_handler(hton, share, mem_root, RHEAP_KIND_MEMORY);
  return rheap_heap_own_create(hton, share, mem_root);
}

/** Whether the statement uses full-text functions (MATCH ... AGAINST): a UNION's table is then
    made in Aria on purpose (TMP_TABLE_FORCE_MYISAM), for the search. */
static bool uses_fulltext(LEX *lex)
{
  auto has= [](SELECT_LEX *sl) { return sl && sl->ftfunc_list && sl->ftfunc_list->elements; };
  for (SELECT_LEX *sl= lex->all_selects_list; sl; sl= sl->next_select_in_list())
    /* A UNION's ORDER BY belongs to its unit's own SELECT (global_parameters(), which the
       server asks), which the list leaves out. */
    if (has(sl) || (sl->master_unit() && has(sl->master_unit()->global_parameters())))
      return true;
  return false;
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
    if (rheap_serves_schema_table((uint32_t) rheap_takeover_mode, f, rheap_takeover_information_schema,
                                  structure_only, disk_asked))
    {
      share->db_plugin= ha_lock_engine(NULL, heap_hton);
      return rheap_new_handler(heap_hton, share, mem_root, RHEAP_KIND_MEMORY_BLOBS);
    }
    /* A statement's own table with BLOB/TEXT columns: rheap's, under rheap's handlerton, so
       that the server treats it as it treats an Aria table (no heap-only path) but creates no
       files (instantiate_tmp_table creates only Aria's). free_tmp_table lets go of the lock. */
    /* The statement's SELECTs are looked at only for a table a statement makes (at start-up
       the server opens tables with no statement parsed). */
    bool fulltext= f->made_by_create_tmp_table && !f->db_length && uses_fulltext(lex);
    if (rheap_hton &&
        rheap_serves_aria_table((uint32_t) rheap_takeover_mode, f, rheap_takeover_blob_tables,
                                disk_asked, fulltext))
    {
      share->db_plugin= ha_lock_engine(NULL, rheap_hton);
      return rheap_new_handler(rheap_hton, share, mem_root, RHEAP_KIND_ARIA);
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
    return rheap_heap_own_drop(hton, path);
  }
  rheap_hold_plugin_while_memory_tables();
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
  rheap_register_memory_keys();
  if (int err= rheap_plugin_init())
    return err;
  if (name_status_variables())
    return 1;
  rheap_fill_table_flags();
  rheap_set_block_cache_size(block_cache_size);
  rheap_set_max_memory(max_memory);
  rheap_heap_own_create= heap_hton->create;
  rheap_heap_own_drop= heap_hton->drop_table;
  heap_hton->create= rheap_heap_create;
  heap_hton->drop_table= rheap_heap_drop_table;
  if (aria_hton)
  {
    aria_create= aria_hton->create;
    /* Aria's key limits, as a handler of Aria's states them (made without a share, as the
       server makes one to drop a table). */
    MEM_ROOT root;
    init_alloc_root(PSI_NOT_INSTRUMENTED, &root, 1024, 0, MYF(0));
    if (handler *h= aria_create(aria_hton, NULL, &root))
    {
      rheap_aria_key_length= h->max_supported_key_length();
      rheap_aria_key_parts= h->max_supported_key_parts();
      delete h;
    }
    free_root(&root, MYF(0));
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
    heap_hton->create= rheap_heap_own_create;
    heap_hton->drop_table= rheap_heap_own_drop;
  }
  if (aria_hton && live_hton(DB_TYPE_ARIA) == aria_hton && aria_hton->create == rheap_aria_create)
    aria_hton->create= aria_create;
  return rheap_plugin_deinit();
}

static MYSQL_SYSVAR_ENUM(takeover, rheap_takeover_mode, PLUGIN_VAR_RQCMDARG,
  "Which MEMORY tables RHEAP serves: OFF (none), INTERNAL (the server's internal temporary "
  "tables), ALL (also ENGINE=MEMORY tables). Applies to tables created afterwards.",
  NULL, NULL, RHEAP_TAKEOVER_INTERNAL, &takeover_typelib);

static MYSQL_SYSVAR_BOOL(takeover_information_schema, rheap_takeover_information_schema,
  PLUGIN_VAR_OPCMDARG,
  "Whether RHEAP also serves the information_schema tables that have BLOB/TEXT columns "
  "(SHOW FULL COLUMNS; SELECTs from COLUMNS, ROUTINES, VIEWS, TRIGGERS, ...), which the server "
  "otherwise builds in Aria. Needs rheap_takeover other than OFF. Applies to statements "
  "started afterwards.",
  NULL, NULL, 1);

static MYSQL_SYSVAR_BOOL(takeover_blob_tables, rheap_takeover_blob_tables, PLUGIN_VAR_OPCMDARG,
  "Whether RHEAP also serves a statement's internal temporary tables that the server builds in "
  "Aria on disk for their BLOB/TEXT/JSON columns or a GROUP BY key too long for a key (GROUP "
  "BY, DISTINCT, UNION, COUNT(DISTINCT), derived tables, window functions over them). Such a "
  "table behaves as Aria's and moves to Aria when it passes tmp_memory_table_size. Needs "
  "rheap_takeover other than OFF. Applies to statements started afterwards.",
  NULL, NULL, 1);

static MYSQL_SYSVAR_ENUM(table_size_limit, rheap_table_size_limit, PLUGIN_VAR_RQCMDARG,
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
  MYSQL_SYSVAR(takeover_blob_tables),
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
