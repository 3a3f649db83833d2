//! What the server says about a table when it creates or opens one (the shim's
//! `rheap_table_def`, translated field by field by the plugin), and the rules that turn it into
//! a [`TableDef`]: which key the AUTO_INCREMENT column leads and how it is read, who owns the
//! rows and so how they are stored, and what makes the table full.

use super::{AutoKey, TableDef};
use crate::error::{Error, Result};
use crate::key::column::ColumnType;
use crate::key::{KeyDef, KeySeg};
use crate::limits::{self, LimitBy};
use crate::rows::format::{Owner, RowFormat, VarField};

/// A table as the server describes it, in the core's terms.
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// Bytes of one row in the server's record format.
    pub rec_len: usize,
    /// MAX_ROWS (for an internal table, what the server derived), 0 when not given.
    pub max_rows: u64,
    /// MIN_ROWS, 0 when not given.
    pub min_rows: u64,
    /// `max_heap_table_size` of the creating thread.
    pub max_heap_table_size: u64,
    /// The server's in-memory limit for internal tables (`tmp_memory_table_size`).
    pub tmp_memory_table_size: u64,
    /// AUTO_INCREMENT= of CREATE TABLE, 0 when not given.
    pub auto_increment: u64,
    /// One of the server's internal temporary tables.
    pub internal: bool,
    /// A temporary table (internal, or CREATE TEMPORARY TABLE).
    pub tmp_table: bool,
    /// An ENGINE=MEMORY table rheap serves (`rheap_takeover=ALL`): it must look and fill as
    /// MEMORY's.
    pub for_memory: bool,
    /// The indexes, in the server's key order.
    pub keys: Vec<KeyDef>,
    /// The key the AUTO_INCREMENT column leads, and that column's own type.
    pub auto_key: Option<(usize, ColumnType)>,
    /// The VARCHAR and BLOB fields of the record, in record order.
    pub vars: Vec<VarField>,
    /// `rheap_table_size_limit`.
    pub limit_by: LimitBy,
}

impl TableSpec {
    /// Who the rows belong to, which decides how they are stored.
    pub fn owner(&self) -> Owner {
        if self.for_memory {
            Owner::Memory
        } else if self.internal {
            Owner::Internal
        } else {
            Owner::Rheap
        }
    }

    /// The table's definition.
    pub fn into_def(self) -> Result<TableDef> {
        let auto_key = match self.auto_key {
            None => None,
            Some((k, column)) => {
                let first = (self.keys.get(k))
                    .and_then(|key| key.segs.first())
                    .ok_or_else(|| {
                        Error::internal(format!("AUTO_INCREMENT key {k} has no column"))
                    })?;
                // The key may compare the column as bytes (a HASH key); the value is read
                // with the column's own type.
                Some(AutoKey {
                    key: k,
                    seg: KeySeg {
                        kind: column.value_kind(),
                        ..first.clone()
                    },
                })
            }
        };
        let owner = self.owner();
        let format = RowFormat::for_table(self.rec_len, self.vars, owner)?;
        let limit_by = limits::limit_by(self.limit_by, self.for_memory);
        let limits = limits::size_limits(
            limit_by,
            self.max_heap_table_size,
            self.tmp_memory_table_size,
            self.max_rows,
            self.internal,
            format.has_blobs(),
        );
        Ok(TableDef {
            format,
            rec_len: self.rec_len,
            max_rows: limits.max_rows,
            min_rows: self.min_rows,
            max_table_size: limits.max_table_size,
            limit_by,
            auto_increment: self.auto_increment,
            keys: self.keys,
            auto_key,
            tmp_table: self.tmp_table,
            heap_lengths: self.for_memory,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{Algorithm, Number, SegKind};
    use crate::rows::format::VarKind;

    const MIB: u64 = 1 << 20;

    /// An internal table of one 8-byte column with a HASH key on it, at 16 MiB settings.
    fn spec() -> TableSpec {
        TableSpec {
            rec_len: 9,
            max_rows: 1000,
            min_rows: 0,
            max_heap_table_size: 16 * MIB,
            tmp_memory_table_size: 4 * MIB,
            auto_increment: 0,
            internal: true,
            tmp_table: true,
            for_memory: false,
            keys: vec![KeyDef::new(Algorithm::Hash, true, false, vec![column()], 8)],
            auto_key: None,
            vars: vec![],
            limit_by: LimitBy::Actual,
        }
    }

    fn column() -> KeySeg {
        KeySeg {
            kind: SegKind::Binary,
            start: 1,
            length: 8,
            null: None,
            reverse: false,
        }
    }

    fn varchar() -> VarField {
        VarField {
            offset: 1,
            kind: VarKind::Varchar {
                len_bytes: 1,
                max: 7,
            },
        }
    }

    #[test]
    fn the_owner_follows_the_flags() {
        assert_eq!(spec().owner(), Owner::Internal);
        let named = TableSpec {
            internal: false,
            tmp_table: false,
            ..spec()
        };
        assert_eq!(named.owner(), Owner::Rheap);
        // MEMORY's table stays MEMORY's even when the server made it (an internal HEAP
        // table served under ALL is still described as MEMORY's).
        let memory = TableSpec {
            for_memory: true,
            ..spec()
        };
        assert_eq!(memory.owner(), Owner::Memory);
    }

    #[test]
    fn the_auto_increment_column_is_read_as_its_own_type() {
        let int = ColumnType::Number(Number::Int {
            bytes: 8,
            signed: false,
        });
        let def = TableSpec {
            auto_key: Some((0, int)),
            ..spec()
        }
        .into_def()
        .unwrap();
        let auto = def.auto_key.expect("an AUTO_INCREMENT key");
        assert_eq!(auto.key, 0);
        // The HASH key compares the column as bytes; its value is a number.
        assert!(matches!(def.keys[0].segs[0].kind, SegKind::Binary));
        assert!(matches!(
            auto.seg.kind,
            SegKind::Number(Number::Int {
                bytes: 8,
                signed: false
            })
        ));
        assert_eq!(auto.seg.start, def.keys[0].segs[0].start);
    }

    #[test]
    fn an_auto_increment_key_that_does_not_exist_is_an_error() {
        let err = TableSpec {
            auto_key: Some((3, ColumnType::Other)),
            ..spec()
        }
        .into_def()
        .unwrap_err();
        assert!(err.to_string().contains("AUTO_INCREMENT key 3"), "{err}");
    }

    #[test]
    fn rows_are_packed_for_rheap_and_internal_tables_with_variable_fields() {
        let packed = |s: TableSpec| !s.into_def().unwrap().format.is_fixed();
        let vars = || vec![varchar()];
        assert!(
            !packed(spec()),
            "an internal table of fixed fields keeps HEAP's rows"
        );
        assert!(packed(TableSpec {
            vars: vars(),
            ..spec()
        }));
        let named = TableSpec {
            internal: false,
            tmp_table: false,
            vars: vars(),
            ..spec()
        };
        assert!(packed(named));
        let memory = TableSpec {
            for_memory: true,
            vars: vars(),
            ..spec()
        };
        assert!(!packed(memory), "MEMORY's tables keep MEMORY's fixed rows");
    }

    #[test]
    fn limits_follow_the_setting_but_memory_tables_fill_as_memory() {
        let internal = spec().into_def().unwrap();
        assert_eq!(internal.limit_by, LimitBy::Actual);
        assert_eq!(internal.max_table_size, 4 * MIB, "tmp_memory_table_size");
        assert_eq!(internal.max_rows, 0, "no MAX_ROWS under ACTUAL");
        let memory = TableSpec {
            for_memory: true,
            internal: false,
            ..spec()
        }
        .into_def()
        .unwrap();
        assert_eq!(memory.limit_by, LimitBy::Heap);
        assert!(memory.heap_lengths);
        assert_eq!(memory.max_table_size, 16 * MIB, "max_heap_table_size");
        assert_eq!(memory.max_rows, 1000, "MAX_ROWS as given");
    }
}
