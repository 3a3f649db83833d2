//! A table definition from the shim (`rheap_table_def`) in the core's terms.

use super::charset::ServerCollation;
use crate::error::{Error, Result};
use rheap_core::alloc::{try_arc, try_collect, try_collect_ok};
use rheap_core::key::column::{ColumnType, SegSpec};
use rheap_core::key::{Algorithm, KeyDef, KeySeg, Number, OddBits};
use rheap_core::limits::LimitBy;
use rheap_core::recycle::Shape;
use rheap_core::rows::format::{VarField, VarKind};
use rheap_core::table::spec::TableSpec;
use rheap_core::table::TableDef;
use rheap_sys::shim::{
    rheap_key_def, rheap_key_seg, rheap_table_def, rheap_var_field, RHEAP_LIMIT_BY_HEAP,
};
use rheap_sys::*;

/// The server's key type of a segment, in the core's terms (the rules for how each compares
/// are the core's: [`rheap_core::key::column`]).
fn column_type(seg: &rheap_key_seg) -> ColumnType {
    if seg.blob_length_bytes != 0 {
        return ColumnType::Blob {
            len_bytes: seg.blob_length_bytes,
        };
    }
    #[allow(non_upper_case_globals)]
    match u32::from(seg.key_type) {
        ha_base_keytype_HA_KEYTYPE_TEXT => ColumnType::Text,
        ha_base_keytype_HA_KEYTYPE_VARTEXT1
        | ha_base_keytype_HA_KEYTYPE_VARTEXT2
        | ha_base_keytype_HA_KEYTYPE_VARBINARY1
        | ha_base_keytype_HA_KEYTYPE_VARBINARY2 => ColumnType::VarText {
            len_bytes: seg.length_bytes,
        },
        ha_base_keytype_HA_KEYTYPE_BIT => ColumnType::Bit(OddBits {
            pos: seg.bit_pos as usize,
            start: seg.bit_start,
            len: seg.bit_length,
        }),
        t => numeric_type(t),
    }
}

/// The type of a numeric key type; [`ColumnType::Other`] for the rest.
fn numeric_type(t: ha_base_keytype) -> ColumnType {
    let int = |bytes, signed| ColumnType::Number(Number::Int { bytes, signed });
    #[allow(non_upper_case_globals)]
    match t {
        ha_base_keytype_HA_KEYTYPE_INT8 => int(1, true),
        ha_base_keytype_HA_KEYTYPE_SHORT_INT => int(2, true),
        ha_base_keytype_HA_KEYTYPE_USHORT_INT => int(2, false),
        ha_base_keytype_HA_KEYTYPE_INT24 => int(3, true),
        ha_base_keytype_HA_KEYTYPE_UINT24 => int(3, false),
        ha_base_keytype_HA_KEYTYPE_LONG_INT => int(4, true),
        ha_base_keytype_HA_KEYTYPE_ULONG_INT => int(4, false),
        ha_base_keytype_HA_KEYTYPE_LONGLONG => int(8, true),
        ha_base_keytype_HA_KEYTYPE_ULONGLONG => int(8, false),
        ha_base_keytype_HA_KEYTYPE_FLOAT => ColumnType::Number(Number::Float),
        ha_base_keytype_HA_KEYTYPE_DOUBLE => ColumnType::Number(Number::Double),
        _ => ColumnType::Other,
    }
}

fn seg(s: &rheap_key_seg, algorithm: Algorithm) -> Result<KeySeg> {
    let spec = SegSpec {
        column: column_type(s),
        start: s.start as usize,
        length: s.length as usize,
        null: (s.null_bit != 0).then_some((s.null_pos as usize, s.null_bit)),
        reverse: s.reverse != 0,
    };
    spec.seg(algorithm, || {
        // SAFETY: the shim passes the column's CHARSET_INFO, which lives as long as the server.
        let c = unsafe {
            ServerCollation::new(
                s.charset,
                s.mbmaxlen as usize,
                s.binary_charset != 0,
                s.length as usize,
            )
        };
        Ok(try_arc(c)?)
    })
}

/// # Safety
/// `k.segs` must point to `k.nsegs` segments.
unsafe fn key(k: &rheap_key_def) -> Result<KeyDef> {
    let algorithm = if k.btree != 0 {
        Algorithm::Btree
    } else {
        Algorithm::Hash
    };
    // SAFETY: by the contract, nsegs segments.
    let segs = unsafe { slice(k.segs, k.nsegs) };
    let mut def = KeyDef::try_new(
        algorithm,
        k.unique != 0,
        k.null_are_equal != 0,
        try_collect_ok(segs.iter().map(|s| seg(s, algorithm)))?,
        k.key_length as usize,
    )?;
    def.constraint = k.constraint != 0;
    // A key over a BLOB that is not a unique constraint is one the server also reads by key
    // (GROUP BY's lookups in its key format, which holds no whole BLOB): such a table is left
    // to Aria (Unsupported: it opens in Aria).
    if def.has_blobs() && !def.constraint {
        return Err(Error::Unsupported);
    }
    Ok(def)
}

/// The core's definition of the table the shim describes: its fields translated into a
/// [`TableSpec`], whose rules ([`TableSpec::into_def`]) are the core's.
///
/// # Safety
/// `def.keys` must point to `def.nkeys` keys, each as [`key`] requires.
pub unsafe fn table_def(def: &rheap_table_def) -> Result<TableDef> {
    // SAFETY: by the contract, nkeys keys.
    let raw = unsafe { slice(def.keys, def.nkeys) };
    // SAFETY: each key's segments are valid by the contract.
    let keys: Vec<KeyDef> = try_collect_ok(raw.iter().map(|k| unsafe { key(k) }))?;
    // SAFETY: by the contract, nvars fields (NULL when there are none).
    let vars = unsafe { slice(def.vars, def.nvars) };
    let vars: Vec<VarField> = try_collect(vars.iter().map(|v| VarField {
        offset: v.offset as usize,
        kind: if v.blob != 0 {
            VarKind::Blob {
                len_bytes: usize::from(v.len_bytes),
            }
        } else {
            VarKind::Varchar {
                len_bytes: usize::from(v.len_bytes),
                max: v.max as usize,
            }
        },
    }))?;
    let spec = TableSpec {
        rec_len: def.reclength as usize,
        max_rows: def.max_rows,
        min_rows: def.min_rows,
        max_heap_table_size: def.max_table_size,
        tmp_memory_table_size: def.tmp_memory_table_size,
        auto_increment: def.auto_increment,
        internal: def.internal != 0,
        tmp_table: def.tmp_table != 0,
        for_memory: def.for_memory != 0,
        keys,
        auto_key: usize::try_from(def.auto_key)
            .ok()
            .map(|k| (k, numeric_type(u32::from(def.auto_key_type)))),
        vars,
        limit_by: match u32::from(def.limit_by) {
            RHEAP_LIMIT_BY_HEAP => LimitBy::Heap,
            _ => LimitBy::Actual,
        },
    };
    spec.into_def()
}

/// The key under which a table built from `def` is kept for reuse
/// ([`rheap_core::recycle`]); None when `def` has more to say than a key holds. Every
/// field is named, so that a field added to the shim's structs fails to compile here until it
/// is part of the key.
///
/// # Safety
/// As [`table_def`].
pub unsafe fn shape_of(def: &rheap_table_def) -> Option<Shape> {
    let rheap_table_def {
        reclength,
        max_rows,
        min_rows,
        max_table_size,
        tmp_memory_table_size,
        auto_increment,
        internal,
        tmp_table,
        keys,
        nkeys,
        auto_key,
        auto_key_type,
        for_memory,
        vars,
        nvars,
        limit_by,
        // Who creates or opens the table: not part of what it is.
        connection: _,
    } = *def;
    let flags = |bytes: &[u8]| bytes.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b));
    let pair = |lo: u32, hi: u32| u64::from(lo) | u64::from(hi) << 32;
    let mut k = Shape::new();
    k.push(&[
        u64::from(reclength),
        max_rows,
        min_rows,
        max_table_size,
        tmp_memory_table_size,
        auto_increment,
        flags(&[internal, tmp_table, for_memory, auto_key_type]) | pair(0, auto_key as u32),
        u64::from(limit_by),
        pair(nkeys, nvars),
    ])?;
    // SAFETY: by the contract, nkeys keys (when there are any).
    for key in unsafe { slice(keys, nkeys) } {
        let rheap_key_def {
            segs,
            nsegs,
            key_length,
            btree,
            unique,
            null_are_equal,
            constraint,
        } = *key;
        k.push(&[
            pair(nsegs, key_length),
            flags(&[btree, unique, null_are_equal, constraint]),
        ])?;
        // SAFETY: by the contract, each key's nsegs segments.
        for seg in unsafe { slice(segs, nsegs) } {
            let rheap_key_seg {
                charset,
                start,
                length,
                null_pos,
                bit_pos,
                mbmaxlen,
                key_type,
                null_bit,
                length_bytes,
                bit_start,
                bit_length,
                binary_charset,
                reverse,
                blob_length_bytes,
            } = *seg;
            k.push(&[
                charset as usize as u64,
                pair(start, length),
                pair(null_pos, bit_pos),
                pair(mbmaxlen, 0) | flags(&[key_type, null_bit, length_bytes, bit_start]) << 32,
                flags(&[bit_length, binary_charset, reverse, blob_length_bytes]),
            ])?;
        }
    }
    // SAFETY: by the contract, nvars fields (when there are any).
    for var in unsafe { slice(vars, nvars) } {
        let rheap_var_field {
            offset,
            len_bytes,
            blob,
            max,
        } = *var;
        k.push(&[
            pair(offset, 0) | flags(&[len_bytes, blob]) << 32,
            u64::from(max),
        ])?;
    }
    Some(k.seal())
}

/// `n` items from `p`; empty when `n` is 0 (then `p` may be NULL).
///
/// # Safety
/// When `n` is not 0, `p` must point to `n` valid items that outlive the slice.
unsafe fn slice<'a, T>(p: *const T, n: u32) -> &'a [T] {
    if n == 0 || p.is_null() {
        &[]
    } else {
        // SAFETY: by the contract.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}
