//! What the collation tests share: the values they compare, and the server's collations.

use anyhow::{ensure, Result};
use mysql::prelude::Queryable;
use mysql::Conn;

/// Strings (SQL literals) that differ in case, accents, trailing spaces, trailing NUL
/// characters and expansions ('ß' and 'ss'), and NULL.
pub const VALUES: &[&str] = &[
    "'abc'",
    "'ABC '",
    "'abc  '",
    "'Abc'",
    "'äbc'",
    "'abc\\t'",
    "''",
    "' '",
    "'   '",
    "NULL",
    "'ß'",
    "'ss'",
    "'a'",
    "'a '",
    "'A'",
    "'x\\0'",
    "'x'",
    "'x \\0'",
    "'ǅ'",
    "'Dž'",
    "'ﬀ'",
    "'ff'",
    "'Straße'",
    "'STRASSE'",
    "'\\0'",
];

/// The collation that compares strings as C strings: tis620_thai_nopad_ci (strcmp after
/// thai2sortable), to which a NUL ends a string, so 'x' and 'x\0' are equal. rheap's weights
/// keep what follows a NUL, so for it the tests leave out the values with a NUL.
pub const C_STRINGS: &str = "tis620_thai_nopad_ci";

/// Every collation of the server with its character set (the UCA 14.0 names that stand for a
/// family of collations have none, and are left out), by name.
pub fn collations(c: &mut Conn) -> Result<Vec<(String, String)>> {
    let all: Vec<(String, String)> = c.query(
        "SELECT COLLATION_NAME, CHARACTER_SET_NAME FROM information_schema.COLLATIONS \
         WHERE CHARACTER_SET_NAME IS NOT NULL ORDER BY COLLATION_NAME",
    )?;
    ensure!(all.len() > 300, "only {} collations", all.len());
    Ok(all)
}
