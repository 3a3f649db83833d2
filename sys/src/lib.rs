//! Bindings to the MariaDB handler interface as rheap uses it.
//!
//! - [`shim`]: the narrow C interface of the C++ shim (`shim/rheap_shim.h`): the functions the
//!   engine implements for the shim and the few the shim implements for the engine.
//! - The server's C-level constants and enums (`HA_ERR_*`, table and index flags,
//!   `ha_rkey_function`, ...), re-exported at the crate root.
#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case)]

pub mod shim {
    #![allow(clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/shim.rs"));
}

mod server {
    #![allow(clippy::all, dead_code)]
    include!(concat!(env!("OUT_DIR"), "/server.rs"));
}
pub use server::*;

#[cfg(test)]
#[path = "../build/version.rs"]
mod version;

#[cfg(test)]
mod tests {
    use super::version::*;

    #[test]
    fn version_sources_parse() {
        let v = Version {
            major: 10,
            minor: 11,
            patch: 18,
        };
        assert_eq!(v.id(), 101118);
        let file = "MYSQL_VERSION_MAJOR=10\nMYSQL_VERSION_MINOR=11\nMYSQL_VERSION_PATCH=18\nSERVER_MATURITY=stable\n";
        assert_eq!(parse_version_file(file), Some(v));
        assert_eq!(
            parse_version_header(
                "#define MYSQL_SERVER_VERSION \"x\"\n#define MYSQL_VERSION_ID 101118\n"
            ),
            Some(v)
        );
        assert_eq!(
            parse_server_version("mariadbd  Ver 10.11.18-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n"),
            Some(v)
        );
        assert_eq!(parse_server_version("garbage"), None);
    }

    #[test]
    fn constants_are_the_servers() {
        assert_eq!(crate::HA_ERR_END_OF_FILE, 137);
        assert_eq!(crate::HA_ERR_RECORD_FILE_FULL, 135);
        assert_eq!(crate::HA_NO_BLOBS, 1 << 9);
        assert_eq!(crate::HA_BINLOG_ROW_CAPABLE, 1 << 34);
    }
}
