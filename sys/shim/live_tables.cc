/*
  live_tables.cc: information_schema.RHEAP_TABLES, one row per live rheap table
  (core/src/catalog/live.rs), each shown to the users the server's own views would show it to.
*/
#include "shim.h"

/* The view's columns. */
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

/** Stores one row of RHEAP_TABLES, if the reader may see it
    (rheap_core::catalog::live::Audience); a named table's path ./schema/name is shown as the
    schema and table names it encodes. */
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

int rheap_tables_init(void *p)
{
  ST_SCHEMA_TABLE *schema= static_cast<ST_SCHEMA_TABLE *>(p);
  schema->fields_info= Show::rheap_tables_fields;
  schema->fill_table= rheap_tables_fill;
  return 0;
}
