//! bindgen runs: the shim's C header, and the C-level constants and enums used from the
//! server headers. The server's C++ classes are never bound: the shim is the only C++ user.

use super::Server;
use bindgen::callbacks::{IntKind, ParseCallbacks};
use std::path::Path;

/// Gives the server's macros the types the handler API uses: error codes are `int`, flag words
/// (`Table_flags`, index flags, key flags) are 64-bit.
#[derive(Debug)]
struct MacroTypes;

impl ParseCallbacks for MacroTypes {
    fn int_macro(&self, name: &str, _value: i64) -> Option<IntKind> {
        if name.starts_with("HA_ERR_") {
            Some(IntKind::Int)
        } else if name.starts_with("HA_") {
            Some(IntKind::U64)
        } else {
            None
        }
    }
}

pub fn generate(server: &Server, out: &Path) {
    let clang_args: Vec<String> = server
        .include_dirs()
        .iter()
        .map(|p| format!("-I{}", p.display()))
        .chain(
            [
                "-xc++",
                "-std=c++17",
                "-DMYSQL_DYNAMIC_PLUGIN",
                "-DHAVE_CONFIG_H",
                "-DDBUG_OFF",
                "-DNDEBUG",
            ]
            .map(String::from),
        )
        .collect();

    bindgen::Builder::default()
        .header("shim/rheap_shim.h")
        .allowlist_item("rheap_.*")
        .allowlist_var("RHEAP_.*")
        .layout_tests(true)
        .generate()
        .unwrap_or_else(|e| super::fail(format_args!("bindgen failed on shim/rheap_shim.h: {e}")))
        .write_to_file(out.join("shim.rs"))
        .unwrap();

    bindgen::Builder::default()
        .header("shim/server_consts.h")
        .clang_args(&clang_args)
        // Error codes (my_base.h).
        .allowlist_var("HA_ERR_.*")
        // Table, index and key flags, info() and open() flags (handler.h, my_base.h).
        .allowlist_var("HA_(FAST_KEY_READ|NO_BLOBS|NULL_IN_KEY|BINLOG_ROW_CAPABLE|BINLOG_STMT_CAPABLE|CAN_SQL_HANDLER|CAN_ONLINE_BACKUPS|REC_NOT_IN_SEQ|CAN_INSERT_DELAYED|NO_TRANSACTIONS|HAS_RECORDS|STATS_RECORDS_IS_EXACT|CAN_HASH_KEYS|CAN_GEOMETRY)")
        .allowlist_var("HA_(READ_NEXT|READ_PREV|READ_ORDER|READ_RANGE|ONLY_WHOLE_INDEX|KEY_SCAN_NOT_ROR)")
        .allowlist_var("HA_(NOSAME|NULL_ARE_EQUAL|AUTO_KEY|STATUS_.*|OPEN_INTERNAL_TABLE)")
        .allowlist_type("ha_rkey_function|ha_key_alg|ha_base_keytype|enum_field_types|ha_extra_function")
        .rustified_enum("ha_rkey_function|ha_key_alg")
        .parse_callbacks(Box::new(MacroTypes))
        .layout_tests(true)
        .generate()
        .unwrap_or_else(|e| super::fail(format_args!("bindgen failed on the server headers: {e}")))
        .write_to_file(out.join("server.rs"))
        .unwrap();
}
