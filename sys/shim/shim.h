/*
  shim.h: what the C++ files of rheap's shim share. The shim is split as storage/heap splits
  ha_heap.cc from its library: the handler class (ha_rheap.h, ha_rheap.cc; aria_table.cc for a
  table in Aria's place that moves to Aria), the table-definition builder (definition.h), the
  services Rust calls (services.cc), the plugin's registration, takeover hooks and variables
  (plugin.cc), and information_schema.RHEAP_TABLES (live_tables.cc). The narrow C interface to
  Rust is rheap_shim.h.
*/
#ifndef RHEAP_SHIM_INTERNAL_H
#define RHEAP_SHIM_INTERNAL_H

#define MYSQL_SERVER 1
#include <my_global.h>
#include "sql_class.h"
#include "handler.h"
#include "log.h"
#include "sql_i_s.h"
#include "sql_show.h"
#include "sql_table.h"
#include "sql_acl.h"
#include "sql_select.h"
#include <mysql/plugin.h>

#include "rheap_shim.h"

/* The plugin's settings and the engines it stands in for (plugin.cc). */

/** rheap_takeover: which MEMORY tables rheap serves (RHEAP_TAKEOVER_*). */
extern ulong rheap_takeover_mode;
/** rheap_takeover_information_schema. */
extern my_bool rheap_takeover_information_schema;
/** rheap_table_size_limit: RHEAP_LIMIT_BY_*. */
extern ulong rheap_table_size_limit;
/** Aria's handlerton and its own handler factory (NULL without Aria), and its key limits. */
extern handlerton *rheap_aria_hton;
extern handler *(*rheap_aria_own_create)(handlerton *, TABLE_SHARE *, MEM_ROOT *);
extern uint rheap_aria_key_length;
extern uint rheap_aria_key_parts;
/** HEAP's own handler factory and drop function, replaced while the plugin is loaded. */
extern handler *(*rheap_heap_own_create)(handlerton *, TABLE_SHARE *, MEM_ROOT *);
extern int (*rheap_heap_own_drop)(handlerton *, const char *);
/** Holds a reference to the plugin while rheap holds ENGINE=MEMORY tables, lets it go when the
    last is dropped (their rows live in this plugin, so UNINSTALL SONAME waits). */
void rheap_hold_plugin_while_memory_tables();

/* The handler (ha_rheap.cc). */

/** A new handler of `kind` (RHEAP_KIND_*) for `hton`, on `mem_root`. */
handler *rheap_new_handler(handlerton *hton, TABLE_SHARE *share, MEM_ROOT *mem_root, uint kind);
/** Asks the engine for each kind's table_flags() once, at init. */
void rheap_fill_table_flags();

/* Services (services.cc). */

/** Registers the performance_schema memory instruments memory/rheap/block and heap. */
void rheap_register_memory_keys();

/* information_schema.RHEAP_TABLES (live_tables.cc). */

/** The information_schema plugin's init: the table's columns and its fill. */
int rheap_tables_init(void *p);

#endif
