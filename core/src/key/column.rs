//! HEAP's rules for how a key column compares, given the column's key type as the server
//! describes it (`ha_base_keytype`, which the plugin translates into [`ColumnType`]).
//!
//! - Strings (CHAR, VARCHAR, VARBINARY) compare by their collation in every kind of key.
//! - HASH keys compare every other type byte by byte: equal values have equal bytes.
//! - BTREE keys compare integers and floating-point numbers by value, and every other type
//!   (DECIMAL, temporal types, BINARY) byte by byte, which orders them correctly.
//! - Only BTREE keys have an order, so only their DESC parts sort in reverse.
//! - The AUTO_INCREMENT column's value is read as a number whatever the key.

use crate::error::Result;
use crate::key::collation::CollationRef;
use crate::key::{Algorithm, KeySeg, Number, OddBits, SegKind};

/// A key column's type, as far as comparing it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ColumnType {
    /// CHAR: a fixed-width string.
    Text,
    /// VARCHAR or VARBINARY, whose length prefix has `len_bytes` bytes (1 or 2; the server's
    /// 0 for a one-byte prefix is taken as 1).
    VarText { len_bytes: u8 },
    /// BIT(n), whose odd bits live among the record's NULL bits.
    Bit(OddBits),
    /// An integer or floating-point number.
    Number(Number),
    /// BLOB/TEXT, whose length takes `len_bytes` (1 to 4) before a pointer in the record: a
    /// part of a unique constraint, which compares the whole value.
    Blob { len_bytes: u8 },
    /// Any other type: compared as bytes.
    Other,
}

/// Where one segment of a key is, and what it holds.
#[derive(Debug, Clone, Copy)]
pub struct SegSpec {
    pub column: ColumnType,
    /// Offset of the value in the record.
    pub start: usize,
    /// Bytes of the segment in the key format.
    pub length: usize,
    /// `(byte offset, mask)` of the NULL bit, None for NOT NULL columns.
    pub null: Option<(usize, u8)>,
    /// A DESC part.
    pub reverse: bool,
}

impl ColumnType {
    /// How a column of this type compares in a key of `algorithm`; `collation` is asked only
    /// for strings.
    pub fn seg_kind(
        self,
        algorithm: Algorithm,
        collation: impl FnOnce() -> Result<CollationRef>,
    ) -> Result<SegKind> {
        Ok(match self {
            ColumnType::Text => SegKind::Text(collation()?),
            ColumnType::VarText { len_bytes } => SegKind::VarText {
                collation: collation()?,
                len_bytes: usize::from(len_bytes.clamp(1, 2)),
            },
            ColumnType::Bit(bits) => SegKind::Bit(bits),
            ColumnType::Blob { len_bytes } => SegKind::Blob {
                collation: collation()?,
                len_bytes: usize::from(len_bytes),
            },
            _ if algorithm == Algorithm::Hash => SegKind::Binary,
            other => other.value_kind(),
        })
    }

    /// How a value of this type is read as a number: by value for integers and floating-point
    /// numbers, else as bytes.
    pub fn value_kind(self) -> SegKind {
        match self {
            ColumnType::Number(n) => SegKind::Number(n),
            _ => SegKind::Binary,
        }
    }
}

impl SegSpec {
    /// The key segment of a key of `algorithm`.
    pub fn seg(
        self,
        algorithm: Algorithm,
        collation: impl FnOnce() -> Result<CollationRef>,
    ) -> Result<KeySeg> {
        Ok(KeySeg {
            kind: self.column.seg_kind(algorithm, collation)?,
            start: self.start,
            length: self.length,
            null: self.null,
            reverse: self.reverse && algorithm == Algorithm::Btree,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::collation::testing;
    use std::sync::Arc;

    fn binary() -> Result<CollationRef> {
        Ok(Arc::new(testing::Binary))
    }

    fn no_collation() -> Result<CollationRef> {
        panic!("a collation was asked for a type that has none")
    }

    fn spec(column: ColumnType, reverse: bool) -> SegSpec {
        SegSpec {
            column,
            start: 1,
            length: 4,
            null: Some((0, 2)),
            reverse,
        }
    }

    #[test]
    fn hash_keys_compare_numbers_as_bytes() {
        for column in [
            ColumnType::Number(Number::Int {
                bytes: 4,
                signed: true,
            }),
            ColumnType::Number(Number::Float),
            ColumnType::Number(Number::Double),
            ColumnType::Other,
        ] {
            let kind = column.seg_kind(Algorithm::Hash, no_collation).unwrap();
            assert!(matches!(kind, SegKind::Binary), "{column:?}: {kind:?}");
        }
    }

    #[test]
    fn btree_keys_compare_numbers_by_value() {
        let int = ColumnType::Number(Number::Int {
            bytes: 3,
            signed: false,
        });
        assert!(matches!(
            int.seg_kind(Algorithm::Btree, no_collation).unwrap(),
            SegKind::Number(Number::Int {
                bytes: 3,
                signed: false
            })
        ));
        assert!(matches!(
            ColumnType::Number(Number::Double)
                .seg_kind(Algorithm::Btree, no_collation)
                .unwrap(),
            SegKind::Number(Number::Double)
        ));
        assert!(matches!(
            ColumnType::Other
                .seg_kind(Algorithm::Btree, no_collation)
                .unwrap(),
            SegKind::Binary
        ));
    }

    #[test]
    fn strings_and_bits_compare_alike_in_every_key() {
        for algorithm in [Algorithm::Hash, Algorithm::Btree] {
            assert!(matches!(
                ColumnType::Text.seg_kind(algorithm, binary).unwrap(),
                SegKind::Text(_)
            ));
            // The server's 0 for a one-byte length prefix is taken as 1.
            for (given, taken) in [(0, 1), (1, 1), (2, 2)] {
                let kind = ColumnType::VarText { len_bytes: given }
                    .seg_kind(algorithm, binary)
                    .unwrap();
                assert!(
                    matches!(kind, SegKind::VarText { len_bytes, .. } if len_bytes == taken),
                    "{given}: {kind:?}"
                );
            }
            let bit = ColumnType::Bit(OddBits {
                pos: 0,
                start: 3,
                len: 5,
            });
            assert!(matches!(
                bit.seg_kind(algorithm, no_collation).unwrap(),
                SegKind::Bit(OddBits {
                    pos: 0,
                    start: 3,
                    len: 5
                })
            ));
        }
    }

    #[test]
    fn only_btree_parts_sort_in_reverse() {
        let int = ColumnType::Number(Number::Int {
            bytes: 4,
            signed: true,
        });
        assert!(
            spec(int, true)
                .seg(Algorithm::Btree, no_collation)
                .unwrap()
                .reverse
        );
        assert!(
            !spec(int, true)
                .seg(Algorithm::Hash, no_collation)
                .unwrap()
                .reverse
        );
        let seg = spec(int, false)
            .seg(Algorithm::Btree, no_collation)
            .unwrap();
        assert!(!seg.reverse);
        assert_eq!((seg.start, seg.length, seg.null), (1, 4, Some((0, 2))));
    }

    #[test]
    fn auto_increment_values_are_numbers() {
        assert!(matches!(
            ColumnType::Number(Number::Int {
                bytes: 8,
                signed: false
            })
            .value_kind(),
            SegKind::Number(Number::Int {
                bytes: 8,
                signed: false
            })
        ));
        assert!(matches!(
            ColumnType::Number(Number::Float).value_kind(),
            SegKind::Number(Number::Float)
        ));
        assert!(matches!(ColumnType::Text.value_kind(), SegKind::Binary));
    }
}
