//! A table definition from the shim (`rheap_table_def`) in the core's terms, with HEAP's rules
//! for how each column type of a key compares.

use super::charset::ServerCollation;
use crate::error::{Error, Result};
use crate::key::{Algorithm, KeyDef, KeySeg, SegKind};
use crate::row::{RowFormat, VarField, VarKind};
use crate::table::{AutoKey, TableDef};
use rheap_sys::shim::{rheap_key_def, rheap_key_seg, rheap_table_def};
use rheap_sys::*;
use std::sync::Arc;

/// How a segment compares, as HEAP decides it: HASH keys compare every non-string type as
/// bytes; BTREE keys compare numbers by value.
fn kind(seg: &rheap_key_seg, algorithm: Algorithm) -> SegKind {
    let collation = || -> crate::collation::CollationRef {
        // SAFETY: the shim passes the column's CHARSET_INFO, which lives as long as the server.
        Arc::new(unsafe {
            ServerCollation::new(
                seg.charset,
                seg.mbmaxlen as usize,
                seg.binary_charset != 0,
                seg.length as usize,
            )
        })
    };
    let t = u32::from(seg.key_type);
    #[allow(non_upper_case_globals)]
    match t {
        ha_base_keytype_HA_KEYTYPE_TEXT => SegKind::Text(collation()),
        ha_base_keytype_HA_KEYTYPE_VARTEXT1
        | ha_base_keytype_HA_KEYTYPE_VARTEXT2
        | ha_base_keytype_HA_KEYTYPE_VARBINARY1
        | ha_base_keytype_HA_KEYTYPE_VARBINARY2 => SegKind::VarText {
            collation: collation(),
            len_bytes: usize::from(seg.length_bytes.clamp(1, 2)),
        },
        ha_base_keytype_HA_KEYTYPE_BIT => SegKind::Bit {
            pos: seg.bit_pos as usize,
            start: seg.bit_start,
            len: seg.bit_length,
        },
        _ if algorithm == Algorithm::Hash => SegKind::Binary,
        _ => numeric_kind(t).unwrap_or(SegKind::Binary),
    }
}

/// The kind of a numeric key type, compared by value.
fn numeric_kind(t: ha_base_keytype) -> Option<SegKind> {
    let int = |bytes, signed| Some(SegKind::Int { bytes, signed });
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
        ha_base_keytype_HA_KEYTYPE_FLOAT => Some(SegKind::Float),
        ha_base_keytype_HA_KEYTYPE_DOUBLE => Some(SegKind::Double),
        _ => None,
    }
}

fn seg(s: &rheap_key_seg, algorithm: Algorithm) -> KeySeg {
    KeySeg {
        kind: kind(s, algorithm),
        start: s.start as usize,
        length: s.length as usize,
        null: (s.null_bit != 0).then_some((s.null_pos as usize, s.null_bit)),
    }
}

/// # Safety
/// `k.segs` must point to `k.nsegs` segments.
unsafe fn key(k: &rheap_key_def) -> KeyDef {
    let algorithm = if k.btree != 0 {
        Algorithm::Btree
    } else {
        Algorithm::Hash
    };
    let segs: &[rheap_key_seg] = if k.nsegs == 0 {
        &[]
    } else {
        // SAFETY: by the contract, nsegs segments.
        unsafe { std::slice::from_raw_parts(k.segs, k.nsegs as usize) }
    };
    KeyDef::new(
        algorithm,
        k.unique != 0,
        k.null_are_equal != 0,
        segs.iter().map(|s| seg(s, algorithm)).collect(),
        k.key_length as usize,
    )
}

/// The core's definition of the table the shim describes.
///
/// # Safety
/// `def.keys` must point to `def.nkeys` keys, each as [`key`] requires.
pub unsafe fn table_def(def: &rheap_table_def) -> Result<TableDef> {
    let raw: &[rheap_key_def] = if def.nkeys == 0 {
        &[]
    } else {
        // SAFETY: by the contract, nkeys keys.
        unsafe { std::slice::from_raw_parts(def.keys, def.nkeys as usize) }
    };
    // SAFETY: each key's segments are valid by the contract.
    let keys: Vec<KeyDef> = raw.iter().map(|k| unsafe { key(k) }).collect();
    let auto_key = match usize::try_from(def.auto_key) {
        Err(_) => None,
        Ok(k) => {
            let first = keys
                .get(k)
                .and_then(|key| key.segs.first())
                .ok_or_else(|| Error::internal(format!("AUTO_INCREMENT key {k} has no column")))?;
            Some(AutoKey {
                key: k,
                seg: KeySeg {
                    kind: numeric_kind(u32::from(def.auto_key_type)).unwrap_or(SegKind::Binary),
                    ..first.clone()
                },
            })
        }
    };
    let vars = if def.nvars == 0 || def.vars.is_null() {
        &[]
    } else {
        // SAFETY: by the contract, nvars fields.
        unsafe { std::slice::from_raw_parts(def.vars, def.nvars as usize) }
    };
    let vars: Vec<VarField> = vars
        .iter()
        .map(|v| VarField {
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
        })
        .collect();
    let has_blobs = vars.iter().any(|v| matches!(v.kind, VarKind::Blob { .. }));
    // RHEAP tables store rows packed. Tables served for MEMORY keep MEMORY's fixed rows, and
    // internal temporary tables too unless they have BLOBs (which a fixed row cannot hold).
    let packed = def.for_memory == 0 && (def.internal == 0 || has_blobs);
    let format = RowFormat::new(
        def.reclength as usize,
        if packed { vars } else { Vec::new() },
    )?;
    Ok(TableDef {
        format,
        rec_len: def.reclength as usize,
        max_rows: def.max_rows,
        min_rows: def.min_rows,
        max_table_size: def.max_table_size,
        auto_increment: def.auto_increment,
        keys,
        auto_key,
        tmp_table: def.tmp_table != 0,
        heap_lengths: def.for_memory != 0,
    })
}
