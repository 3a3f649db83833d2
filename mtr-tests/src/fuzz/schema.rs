//! Random table definitions for the twin-table fuzzer: columns of every kind MEMORY accepts
//! (BLOB and TEXT aside, which MEMORY refuses), NULL and NOT NULL, several character sets and
//! collations, and keys of every shape: HASH and BTREE, UNIQUE or not, one to three parts,
//! prefixes of strings, ASC and DESC parts, and an AUTO_INCREMENT column.
//!
//! Values come from small domains, so that equal keys, collation-equal strings ('a', 'A', 'a ')
//! and duplicate-key errors are frequent.

use super::rng::Rng;

/// The collations string columns are drawn with (all PAD SPACE, as MEMORY's keys are).
const COLLATIONS: &[(&str, &str)] = &[
    ("latin1", "latin1_swedish_ci"),
    ("latin1", "latin1_bin"),
    ("utf8mb4", "utf8mb4_general_ci"),
    ("utf8mb4", "utf8mb4_bin"),
    ("utf8mb4", "utf8mb4_unicode_ci"),
    ("utf8mb3", "utf8mb3_general_ci"),
];

/// Pieces strings are made of: case and accent variants, spaces (trailing ones included).
const PIECES: &[&str] = &["a", "A", "b", "ab", "B ", "é", "e", " ", "z"];

/// A column's type.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    /// An integer type (`TINYINT` ... `BIGINT`), unsigned or not.
    Int {
        name: &'static str,
        unsigned: bool,
    },
    Decimal,
    Double,
    Float,
    /// CHAR or VARCHAR of `len` characters in a character set and collation.
    Text {
        var: bool,
        len: usize,
        charset: &'static str,
        collation: &'static str,
    },
    /// VARBINARY or BINARY of `len` bytes.
    Binary {
        var: bool,
        len: usize,
    },
    Date,
    Datetime,
    Time,
    Year,
    /// TIMESTAMP (NULL unless NOT NULL: explicit defaults, so no automatic values).
    Timestamp,
    /// MariaDB's INET6 and UUID types.
    Inet6,
    Uuid,
    Enum,
    Set,
    /// BIT(n).
    Bit(u32),
}

/// One column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub ty: Type,
    pub nullable: bool,
}

/// One part of a key.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The column's index in [`Table::columns`].
    pub column: usize,
    /// A prefix of a string column, in characters (bytes for binary strings).
    pub prefix: Option<usize>,
    pub desc: bool,
}

/// One key.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub name: String,
    pub unique: bool,
    pub btree: bool,
    pub parts: Vec<Part>,
}

/// A table definition. Column 0 is `id`, whose values are unique by construction (the fuzzer
/// never writes one twice), so that ordering by it is total.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
    pub keys: Vec<Key>,
    /// `id` is AUTO_INCREMENT (and leads the first key): inserts leave it to the engine.
    pub auto_increment: bool,
}

impl Type {
    fn random(r: &mut Rng) -> Type {
        match r.below(16) {
            0..=2 => Type::Int {
                name: r.pick::<&str>(&["TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT"]),
                unsigned: r.one_in(3),
            },
            3 => Type::Decimal,
            4 => Type::Double,
            5 => Type::Float,
            6..=9 => {
                let (charset, collation) = *r.pick(COLLATIONS);
                Type::Text {
                    var: !r.one_in(3),
                    len: r.range(1, 12) as usize,
                    charset,
                    collation,
                }
            }
            10 => Type::Binary {
                var: !r.one_in(3),
                len: r.range(1, 8) as usize,
            },
            11 => r
                .pick(&[
                    Type::Date,
                    Type::Datetime,
                    Type::Time,
                    Type::Year,
                    Type::Timestamp,
                    Type::Inet6,
                    Type::Uuid,
                ])
                .clone(),
            12 => Type::Enum,
            13 => Type::Set,
            14 => Type::Bit(*r.pick(&[1, 3, 8, 13])),
            _ => Type::Int {
                name: "INT",
                unsigned: false,
            },
        }
    }

    /// The type as CREATE TABLE writes it.
    pub fn sql(&self) -> String {
        match self {
            Type::Int { name, unsigned } => {
                format!("{name}{}", if *unsigned { " UNSIGNED" } else { "" })
            }
            Type::Decimal => "DECIMAL(6,2)".into(),
            Type::Double => "DOUBLE".into(),
            Type::Float => "FLOAT".into(),
            Type::Text {
                var,
                len,
                charset,
                collation,
            } => format!(
                "{}({len}) CHARACTER SET {charset} COLLATE {collation}",
                if *var { "VARCHAR" } else { "CHAR" }
            ),
            Type::Binary { var, len } => {
                format!("{}({len})", if *var { "VARBINARY" } else { "BINARY" })
            }
            Type::Date => "DATE".into(),
            Type::Datetime => "DATETIME".into(),
            Type::Time => "TIME".into(),
            Type::Year => "YEAR".into(),
            Type::Timestamp => "TIMESTAMP".into(),
            Type::Inet6 => "INET6".into(),
            Type::Uuid => "UUID".into(),
            Type::Enum => "ENUM('x','y','Z','')".into(),
            Type::Set => "SET('p','q','r')".into(),
            Type::Bit(n) => format!("BIT({n})"),
        }
    }

    /// Whether a key part on the column may be a prefix.
    fn prefixable(&self) -> Option<usize> {
        match self {
            Type::Text { len, .. } | Type::Binary { len, .. } if *len > 1 => Some(*len),
            _ => None,
        }
    }

    /// A random value as an SQL literal (never NULL).
    pub fn value(&self, r: &mut Rng) -> String {
        match self {
            Type::Int { unsigned, name } => {
                if r.one_in(20) {
                    // The type's extremes (out-of-range values are clipped, with a warning).
                    let big = match *name {
                        "TINYINT" => 127,
                        "SMALLINT" => 32767,
                        "MEDIUMINT" => 8_388_607,
                        "INT" => 2_147_483_647,
                        _ => 9_223_372_036_854_775_807i64,
                    };
                    return if r.one_in(2) || *unsigned {
                        big.to_string()
                    } else {
                        format!("-{big}")
                    };
                }
                let lo = if *unsigned { 0 } else { -3 };
                r.range(lo, 6).to_string()
            }
            Type::Decimal => format!("{}.{}", r.range(-3, 5), *r.pick(&["0", "5", "25"])),
            Type::Double | Type::Float => {
                (*r.pick(&["0", "-0", "1.5", "-2.25", "3", "1e10", "0.1"])).into()
            }
            Type::Text { len, .. } => {
                let mut s = String::new();
                for _ in 0..r.below(3) {
                    s.push_str(r.pick::<&str>(PIECES));
                }
                // Longer than the column only now and then (cut, with a warning).
                if s.chars().count() > *len && !r.one_in(8) {
                    s = s.chars().take(*len).collect();
                }
                format!("'{s}'")
            }
            Type::Binary { len, .. } => {
                let bytes: Vec<u8> = (0..r.below(*len as u64 + 1))
                    .map(|_| *r.pick(&[0u8, b'a', b'A', b' ', 0xff]))
                    .collect();
                format!(
                    "X'{}'",
                    bytes.iter().map(|b| format!("{b:02X}")).collect::<String>()
                )
            }
            Type::Date => format!("'2024-0{}-1{}'", r.range(1, 3), r.range(0, 2)),
            Type::Datetime => format!("'2024-01-0{} 1{}:00:00'", r.range(1, 3), r.range(0, 2)),
            Type::Time => format!("'{}:30:00'", r.range(-2, 3)),
            Type::Year => r.pick(&["1999", "2000", "2024", "0"]).to_string(),
            Type::Timestamp => format!("'2024-02-0{} 0{}:00:00'", r.range(1, 3), r.range(1, 3)),
            Type::Inet6 => r
                .pick(&[
                    "'::1'",
                    "'::'",
                    "'10.0.0.1'",
                    "'fe80::1'",
                    "'::ffff:192.0.2.1'",
                ])
                .to_string(),
            Type::Uuid => format!("'00000000-0000-0000-0000-00000000000{}'", r.range(0, 3)),
            Type::Enum => r.pick(&["'x'", "'y'", "'Z'", "'z'", "''"]).to_string(),
            Type::Set => r.pick(&["'p'", "'q,p'", "'r'", "''", "'p,r'"]).to_string(),
            Type::Bit(n) => r.below(1 << (*n).min(4)).to_string(),
        }
    }

    /// An expression whose value is equal for two rows exactly when the column (or `col`, any
    /// expression of the column's type) compares equal in a key over its first `chars`
    /// characters (the whole column when None): the collation's weights for strings, the
    /// number for ENUM, SET and BIT.
    pub fn weight(&self, col: &str, chars: Option<usize>) -> String {
        match self {
            Type::Text { len, .. } => {
                let n = chars.unwrap_or(*len);
                format!("HEX(WEIGHT_STRING({col} AS CHAR({n})))")
            }
            Type::Binary { len, var } => {
                let n = chars.unwrap_or(*len);
                if *var {
                    format!("HEX(LEFT({col}, {n}))")
                } else {
                    format!("HEX(RPAD(LEFT({col}, {n}), {n}, X'00'))")
                }
            }
            Type::Enum | Type::Set | Type::Bit(_) => format!("{col} + 0"),
            Type::Double | Type::Float => format!("{col} + 0e0"),
            _ => col.to_string(),
        }
    }
}

impl Table {
    /// A random definition.
    pub fn random(r: &mut Rng) -> Table {
        let mut columns = vec![Column {
            name: "id".into(),
            ty: Type::Int {
                name: "INT",
                unsigned: false,
            },
            nullable: false,
        }];
        for i in 0..r.range(1, 5) {
            columns.push(Column {
                name: format!("c{i}"),
                ty: Type::random(r),
                nullable: !r.one_in(3),
            });
        }
        let auto_increment = r.one_in(5);
        let mut keys = Vec::new();
        if auto_increment {
            keys.push(Key {
                name: "PRIMARY".into(),
                unique: true,
                btree: r.one_in(2),
                parts: vec![Part {
                    column: 0,
                    prefix: None,
                    desc: false,
                }],
            });
        }
        for k in 0..r.below(4) {
            let btree = r.one_in(2);
            let parts: Vec<Part> = (0..r.range(1, 3))
                .map(|_| {
                    let column = r.range(1, columns.len() as i64 - 1) as usize;
                    let prefix = columns[column]
                        .ty
                        .prefixable()
                        .filter(|_| r.one_in(4))
                        .map(|len| r.range(1, len as i64 - 1) as usize);
                    Part {
                        column,
                        prefix,
                        desc: r.one_in(3),
                    }
                })
                .collect();
            keys.push(Key {
                name: format!("k{k}"),
                unique: r.one_in(4),
                btree,
                parts,
            });
        }
        Table {
            columns,
            keys,
            auto_increment,
        }
    }

    /// CREATE TABLE `name` with this definition on `engine` (None: no ENGINE clause, for an
    /// mtr test whose session default names the engine).
    pub fn create(&self, name: &str, engine: Option<&str>) -> String {
        let mut items: Vec<String> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                format!(
                    "{} {}{}{}",
                    c.name,
                    c.ty.sql(),
                    if c.nullable { "" } else { " NOT NULL" },
                    if i == 0 && self.auto_increment {
                        " AUTO_INCREMENT"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        for k in &self.keys {
            let parts: Vec<String> = k
                .parts
                .iter()
                .map(|p| {
                    format!(
                        "{}{}{}",
                        self.columns[p.column].name,
                        p.prefix.map(|n| format!("({n})")).unwrap_or_default(),
                        if p.desc { " DESC" } else { "" }
                    )
                })
                .collect();
            let kind = if k.name == "PRIMARY" {
                "PRIMARY KEY".to_string()
            } else {
                format!("{}KEY {}", if k.unique { "UNIQUE " } else { "" }, k.name)
            };
            items.push(format!(
                "{kind} ({}) USING {}",
                parts.join(", "),
                if k.btree { "BTREE" } else { "HASH" }
            ));
        }
        let engine = engine.map(|e| format!(" ENGINE={e}")).unwrap_or_default();
        format!("CREATE TABLE {name} ({}){engine}", items.join(", "))
    }

    /// An expression that is equal for two rows exactly when their key `k` is (see
    /// [`Type::weight`]); NULL parts count as equal to each other.
    pub fn key_weight(&self, k: usize) -> String {
        let parts: Vec<String> = self.keys[k]
            .parts
            .iter()
            .map(|p| {
                let c = &self.columns[p.column];
                format!("IFNULL({}, 'NULL')", c.ty.weight(&c.name, p.prefix))
            })
            .collect();
        format!("CONCAT_WS('|', {})", parts.join(", "))
    }

    /// A random value for column `c`, NULL now and then where the column allows it.
    pub fn value(&self, c: usize, r: &mut Rng) -> String {
        let col = &self.columns[c];
        if col.nullable && r.one_in(6) {
            "NULL".into()
        } else {
            col.ty.value(r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_valid_sql_shapes() {
        let mut r = Rng::new(1);
        for _ in 0..200 {
            let t = Table::random(&mut r);
            let sql = t.create("t", Some("MEMORY"));
            assert!(sql.starts_with("CREATE TABLE t (id INT NOT NULL"), "{sql}");
            assert!(sql.ends_with(") ENGINE=MEMORY"), "{sql}");
            assert_eq!(t.columns[0].name, "id");
            for (k, key) in t.keys.iter().enumerate() {
                assert!(!key.parts.is_empty());
                assert!(t.key_weight(k).starts_with("CONCAT_WS('|', IFNULL("));
                for p in &key.parts {
                    if let Some(n) = p.prefix {
                        assert!(n >= 1 && Some(n) < t.columns[p.column].ty.prefixable());
                    }
                }
            }
        }
    }
}
