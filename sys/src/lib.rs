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
    use std::path::Path;

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

    /// The check the build script runs: headers of another version than the installed server
    /// fail the build with a message naming both versions.
    #[test]
    fn other_version_headers_are_refused_naming_both() {
        // The paths the build script used (MARIADBD, MARIADB_SOURCE_DIR, ... or their defaults).
        let mariadbd = Path::new(env!("RHEAP_BUILD_MARIADBD"));
        let generated = Path::new(env!("RHEAP_BUILD_GENERATED_DIR"));
        let src = Path::new(env!("RHEAP_BUILD_SOURCE_DIR"));
        let out = std::process::Command::new(mariadbd)
            .arg("--version")
            .output()
            .expect("the server the build checked is installed");
        let server = parse_server_version(&String::from_utf8_lossy(&out.stdout)).unwrap();
        // The tree the build used agrees with the server.
        assert_eq!(check(src, generated, mariadbd), Ok(server));

        let other = Version {
            patch: server.patch + 1,
            ..server
        };
        let fake = std::env::temp_dir().join(format!("rheap-fake-src-{}", std::process::id()));
        std::fs::create_dir_all(&fake).unwrap();
        std::fs::write(
            fake.join("VERSION"),
            format!(
                "MYSQL_VERSION_MAJOR={}\nMYSQL_VERSION_MINOR={}\nMYSQL_VERSION_PATCH={}\n",
                other.major, other.minor, other.patch
            ),
        )
        .unwrap();
        let err = check(&fake, generated, mariadbd).unwrap_err();
        std::fs::remove_dir_all(&fake).unwrap();
        assert!(
            err.contains(&other.to_string()) && err.contains(&server.to_string()),
            "{err}"
        );
        assert!(err.contains("MARIADB_SOURCE_DIR"), "{err}");
    }

    #[test]
    fn constants_are_the_servers() {
        assert_eq!(crate::HA_ERR_END_OF_FILE, 137);
        assert_eq!(crate::HA_ERR_RECORD_FILE_FULL, 135);
        assert_eq!(crate::HA_NO_BLOBS, 1 << 9);
        assert_eq!(crate::HA_BINLOG_ROW_CAPABLE, 1 << 34);
    }
}
