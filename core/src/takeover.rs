//! Which tables rheap serves in place of MEMORY's and Aria's: the rules, decided from what the
//! server says of a table share. The plugin asks these when the server makes a handler for a
//! share (MEMORY's and Aria's handler factories, which the plugin replaces).
//!
//! A table rheap already holds stays rheap's whatever the mode is now, so changing the mode only
//! affects tables created afterwards; a MEMORY table rheap does not hold stays HEAP's. That
//! includes a table HEAP holds that the server creates again by its name (TRUNCATE re-creates
//! a MEMORY table): HEAP's create then frees the old rows, as it does without rheap, and the
//! table stays HEAP's. So rheap remembers the names of the MEMORY tables it has seen handed to
//! HEAP ([`HeapNames`]), and forgets a name when HEAP drops or renames its table.

use crate::error::Result;
use std::sync::{Mutex, MutexGuard};

/// `rheap_takeover`: which of MEMORY's tables rheap serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// None.
    Off,
    /// The server's internal temporary tables.
    Internal,
    /// Internal temporary tables and ENGINE=MEMORY tables created from now on.
    All,
}

/// What the server says of a share when it asks for a handler.
#[derive(Debug, Clone, Copy)]
pub struct ShareFacts<'a> {
    /// The share is an `INTERNAL_TMP_TABLE` one.
    pub internal_tmp: bool,
    /// Its database ("" for none).
    pub db: &'a str,
    /// Its BLOB/TEXT columns.
    pub blob_fields: u32,
    /// Its MAX_ROWS (the server sets it on an internal table's share when it finalizes it).
    pub max_rows: u64,
    /// Its table name is the one `Create_tmp_table` gives every table it makes
    /// (`"(temporary)"`); CREATE TABLE's and the semi-join weedout's shares have others.
    pub made_by_create_tmp_table: bool,
}

/// What a share is, for serving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareKind {
    /// One of the server's internal temporary tables (GROUP BY, DISTINCT, UNION, derived
    /// tables, and the information_schema tables of SHOW and SELECT): private to a statement.
    Internal,
    /// A table being created (CREATE TABLE, ALTER TABLE's new table): an `INTERNAL_TMP_TABLE`
    /// share in a database.
    Creating,
    /// A table that exists, opened by name.
    Named,
}

/// The schema the server's own tables of SHOW and information_schema live in.
pub const INFORMATION_SCHEMA: &str = "information_schema";

impl ShareFacts<'_> {
    /// What the share is. The server's internal temporary tables are `INTERNAL_TMP_TABLE`
    /// shares with no database, or with information_schema's; CREATE TABLE and ALTER TABLE
    /// also build `INTERNAL_TMP_TABLE` shares, but in a database.
    pub fn kind(&self) -> ShareKind {
        match (self.internal_tmp, self.db) {
            (false, _) => ShareKind::Named,
            (true, "" | INFORMATION_SCHEMA) => ShareKind::Internal,
            (true, _) => ShareKind::Creating,
        }
    }

    /// Whether the share is one of information_schema's tables with BLOB/TEXT columns that the
    /// server's `choose_engine` sends to Aria (asked before `finalize` gives it MAX_ROWS: the
    /// other request for such a share, the conversion of a full in-memory table, comes after
    /// and must reach Aria).
    pub fn is_schema_table_for_aria(&self) -> bool {
        self.internal_tmp
            && self.blob_fields > 0
            && self.max_rows == 0
            && self.db == INFORMATION_SCHEMA
    }
}

impl ShareFacts<'_> {
    /// Whether the share is an internal table of a statement's own (GROUP BY, DISTINCT, UNION,
    /// derived tables, COUNT(DISTINCT), GROUP_CONCAT, window functions) that the server's
    /// `choose_engine` sends to Aria: for BLOB/TEXT columns, or for a unique constraint (a
    /// GROUP BY key too long for a key), when the session did not ask for disk tables
    /// ([`AriaTableRequest`]). Asked before `finalize` gives it MAX_ROWS; the conversion of a
    /// full in-memory table asks after, and must reach Aria.
    pub fn is_internal_table_for_aria(&self) -> bool {
        self.internal_tmp
            && self.db.is_empty()
            && self.made_by_create_tmp_table
            && self.max_rows == 0
    }
}

/// What the statement and session that build an internal table in Aria ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct AriaTableRequest {
    /// `rheap_takeover_blob_tables`.
    pub enabled: bool,
    /// The session asks for on-disk temporary tables (`big_tables`, `tmp_memory_table_size`
    /// = 0).
    pub disk_asked: bool,
    /// The statement uses full-text functions (MATCH ... AGAINST): a UNION's table is then
    /// made in Aria on purpose (`TMP_TABLE_FORCE_MYISAM`), for its full-text search.
    pub fulltext: bool,
}

/// Whether rheap serves, in memory and under its own name, an internal table with BLOB/TEXT
/// columns that the server would build in Aria: the table then behaves as Aria's (a unique
/// constraint where Aria would have one) until it passes its limit, when it moves to Aria
/// with every row.
pub fn serves_aria_table(mode: Mode, facts: &ShareFacts<'_>, req: AriaTableRequest) -> bool {
    mode != Mode::Off
        && facts.is_internal_table_for_aria()
        && req.enabled
        && !req.disk_asked
        && !req.fulltext
}

/// The named MEMORY tables handed to HEAP while rheap is loaded (opened, or created in a mode
/// that left them to HEAP), until HEAP drops or renames them. A few names at most (MEMORY
/// tables of users, not internal ones), so a list.
#[derive(Debug, Default)]
pub struct HeapNames(Mutex<Vec<String>>);

impl HeapNames {
    pub const fn new() -> HeapNames {
        HeapNames(Mutex::new(Vec::new()))
    }

    fn names(&self) -> MutexGuard<'_, Vec<String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets every name, and the list's memory (the plugin is unloading).
    pub fn clear(&self) {
        *self.names() = Vec::new();
    }

    /// Whether HEAP holds the table `name`, as far as rheap has seen.
    pub fn has(&self, name: &str) -> bool {
        self.names().iter().any(|n| n == name)
    }

    /// Remembers `name` as HEAP's; fails only when out of memory.
    pub fn remember(&self, name: &str) -> Result<()> {
        remember(&mut self.names(), name)
    }

    /// HEAP's table `from` was dropped (`to` None) or renamed to `to`: its name is forgotten,
    /// or moved.
    pub fn moved(&self, from: &str, to: Option<&str>) -> Result<()> {
        let mut names = self.names();
        let Some(at) = names.iter().position(|n| n == from) else {
            return Ok(());
        };
        names.swap_remove(at);
        match to {
            Some(to) => remember(&mut names, to),
            None => Ok(()),
        }
    }
}

fn remember(names: &mut Vec<String>, name: &str) -> Result<()> {
    if !names.iter().any(|n| n == name) {
        let owned = crate::alloc::try_string(name)?;
        names.try_reserve(1)?;
        names.push(owned);
    }
    Ok(())
}

/// Whether rheap serves a MEMORY table of kind `kind` whose path is `name` (None when the
/// server has no table at hand, e.g. for a rename: rheap's handler then passes on to HEAP what
/// it does not hold); `holds` says whether rheap holds a named table.
///
/// Internal tables go by the mode. Of named tables, only a table being created does: an
/// existing table that rheap does not hold is HEAP's (made in another mode), and must stay so
/// even under ALL, else opening it again (after FLUSH TABLES, or when the table cache has no
/// free instance) would give an empty table of rheap's in place of HEAP's rows. A table left
/// to HEAP is remembered in `heap`.
pub fn serves_memory_table(
    mode: Mode,
    kind: ShareKind,
    name: Option<&str>,
    holds: impl FnOnce(&str) -> bool,
    heap: &HeapNames,
) -> Result<bool> {
    if kind == ShareKind::Internal {
        // Internal temporary tables are private to their statement and never named in the
        // registry: no lookup on this hot path.
        return Ok(mode != Mode::Off);
    }
    let Some(name) = name else {
        // A rename or drop: rheap's handler does it for the tables rheap holds and passes on
        // the others to HEAP, whatever the mode is now.
        return Ok(true);
    };
    if holds(name) || (kind == ShareKind::Creating && mode == Mode::All && !heap.has(name)) {
        return Ok(true);
    }
    heap.remember(name)?;
    Ok(false)
}

/// What the statement and session that build an information_schema table ask.
#[derive(Debug, Clone, Copy, Default)]
pub struct SchemaTableRequest {
    /// `rheap_takeover_information_schema`.
    pub enabled: bool,
    /// The statement needs only the table's definition (SHOW CREATE TABLE, CREATE TABLE ...
    /// LIKE, information_schema.TABLES over information_schema itself): it stays Aria's, so
    /// that the engine those show stays the server's own.
    pub structure_only: bool,
    /// The session asks for on-disk temporary tables (`big_tables`, `tmp_memory_table_size`
    /// = 0).
    pub disk_asked: bool,
}

/// Whether rheap serves an information_schema table that the server would build in Aria.
pub fn serves_schema_table(mode: Mode, facts: &ShareFacts<'_>, req: SchemaTableRequest) -> bool {
    mode != Mode::Off
        && facts.is_schema_table_for_aria()
        && req.enabled
        && !req.structure_only
        && !req.disk_asked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(internal_tmp: bool, db: &str) -> ShareFacts<'_> {
        ShareFacts {
            internal_tmp,
            db,
            blob_fields: 0,
            max_rows: 0,
            made_by_create_tmp_table: db.is_empty(),
        }
    }

    #[test]
    fn statement_tables_with_blobs_served_only_when_everything_allows() {
        let f = ShareFacts {
            blob_fields: 2,
            ..facts(true, "")
        };
        let on = AriaTableRequest {
            enabled: true,
            ..Default::default()
        };
        assert!(serves_aria_table(Mode::Internal, &f, on));
        assert!(serves_aria_table(Mode::All, &f, on));
        assert!(!serves_aria_table(Mode::Off, &f, on));
        let off = AriaTableRequest::default();
        assert!(!serves_aria_table(Mode::Internal, &f, off), "the switch");
        for req in [
            AriaTableRequest {
                disk_asked: true,
                ..on
            },
            AriaTableRequest {
                fulltext: true,
                ..on
            },
        ] {
            assert!(!serves_aria_table(Mode::Internal, &f, req), "{req:?}");
        }
        // A unique constraint without BLOBs (a GROUP BY key too long) goes to Aria as well.
        assert!(serves_aria_table(
            Mode::Internal,
            &ShareFacts {
                blob_fields: 0,
                ..f
            },
            on
        ));
        // Not a statement's table, or already finalized (a conversion's share).
        for other in [
            ShareFacts { max_rows: 10, ..f },
            ShareFacts {
                made_by_create_tmp_table: false,
                ..f
            },
            ShareFacts {
                db: INFORMATION_SCHEMA,
                ..f
            },
            ShareFacts { db: "test", ..f },
            ShareFacts {
                internal_tmp: false,
                ..f
            },
        ] {
            assert!(!serves_aria_table(Mode::Internal, &other, on), "{other:?}");
        }
        // information_schema's tables have their own route.
        assert!(!ShareFacts {
            db: INFORMATION_SCHEMA,
            ..f
        }
        .is_internal_table_for_aria());
    }

    #[test]
    fn internal_tables_have_no_database_or_information_schemas() {
        assert_eq!(facts(true, "").kind(), ShareKind::Internal);
        assert_eq!(
            facts(true, "information_schema").kind(),
            ShareKind::Internal
        );
        assert_eq!(facts(true, "test").kind(), ShareKind::Creating);
        // A database whose name only starts like it is a user's.
        assert_eq!(
            facts(true, "information_schema2").kind(),
            ShareKind::Creating
        );
        assert_eq!(facts(false, "").kind(), ShareKind::Named);
        assert_eq!(facts(false, "information_schema").kind(), ShareKind::Named);
    }

    #[test]
    fn schema_tables_served_only_when_everything_allows() {
        let mut f = facts(true, INFORMATION_SCHEMA);
        f.blob_fields = 2;
        let yes = SchemaTableRequest {
            enabled: true,
            ..SchemaTableRequest::default()
        };
        assert!(serves_schema_table(Mode::Internal, &f, yes));
        assert!(serves_schema_table(Mode::All, &f, yes));
        assert!(!serves_schema_table(Mode::Off, &f, yes));
        for req in [
            SchemaTableRequest {
                enabled: false,
                ..yes
            },
            SchemaTableRequest {
                structure_only: true,
                ..yes
            },
            SchemaTableRequest {
                disk_asked: true,
                ..yes
            },
        ] {
            assert!(!serves_schema_table(Mode::Internal, &f, req), "{req:?}");
        }
        // A finalized share (the conversion of a full table), no BLOBs, another schema, not
        // an internal share: Aria's.
        for g in [
            ShareFacts { max_rows: 1, ..f },
            ShareFacts {
                blob_fields: 0,
                ..f
            },
            ShareFacts { db: "test", ..f },
            ShareFacts {
                internal_tmp: false,
                ..f
            },
        ] {
            assert!(!serves_schema_table(Mode::All, &g, yes), "{g:?}");
        }
    }

    #[test]
    fn named_tables_stay_with_the_engine_that_holds_them() {
        let heap = HeapNames::new();
        let serves = |mode, kind, name, ours: bool| {
            serves_memory_table(mode, kind, name, |_| ours, &heap).unwrap()
        };
        // Internal tables go by the mode alone.
        assert!(serves(
            Mode::Internal,
            ShareKind::Internal,
            Some("x"),
            false
        ));
        assert!(!serves(Mode::Off, ShareKind::Internal, None, false));
        // No table at hand: rheap's handler passes on what it does not hold.
        assert!(serves(Mode::Off, ShareKind::Named, None, false));
        // Created under ALL: rheap's; under INTERNAL: HEAP's, and remembered.
        assert!(serves(Mode::All, ShareKind::Creating, Some("./t/a"), false));
        assert!(!serves(
            Mode::Internal,
            ShareKind::Creating,
            Some("./t/b"),
            false
        ));
        assert!(heap.has("./t/b"));
        // HEAP's table created again (TRUNCATE) under ALL stays HEAP's.
        assert!(!serves(
            Mode::All,
            ShareKind::Creating,
            Some("./t/b"),
            false
        ));
        // An existing table: rheap's only if rheap holds it, whatever the mode.
        assert!(serves(Mode::Off, ShareKind::Named, Some("./t/a"), true));
        assert!(!serves(Mode::All, ShareKind::Named, Some("./t/c"), false));
        // Renamed, then dropped: the name follows, then goes.
        heap.moved("./t/b", Some("./t/d")).unwrap();
        assert!(!heap.has("./t/b") && heap.has("./t/d"));
        heap.moved("./t/d", None).unwrap();
        assert!(!heap.has("./t/d"));
        assert!(serves(Mode::All, ShareKind::Creating, Some("./t/d"), false));
    }
}
