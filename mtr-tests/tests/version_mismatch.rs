//! A server of another version refuses the plugin with its own clear error, and keeps running.
//!
//! Only one server version is installed here, so the test makes the plugin "another version"
//! instead: it copies ha_rheap.so and changes the interface version the server checks (the
//! `st_mysql_storage_engine` the shim names `rheap_storage_engine`) to the previous patch
//! release. To the server that is exactly a plugin built against other headers.

use mysql::prelude::Queryable;
use rheap_harness::plugin::{interface_version_offset, server_version_id};
use rheap_harness::server::{Options, Server};
use rheap_harness::sql::{error_text, rheap_available};

#[test]
fn other_server_version_refuses_the_plugin() -> anyhow::Result<()> {
    let staged = rheap_harness::plugin::dir()?;
    let mut image = std::fs::read(staged.join("ha_rheap.so"))?;
    let version_id = server_version_id(&image)?;
    let at = interface_version_offset(&image)?;
    image[at..at + 4].copy_from_slice(&(((version_id - 1) << 8) as i32).to_ne_bytes());

    let other = tempfile::tempdir()?;
    std::fs::write(other.path().join("ha_rheap.so"), &image)?;
    let server = Server::start(Options {
        plugin_dir: Some(other.path().to_path_buf()),
        ..Options::default()
    })?;
    let mut c = server.conn()?;
    let err = c
        .query_drop("INSTALL SONAME 'ha_rheap'")
        .map_err(anyhow::Error::from)
        .expect_err("the server must refuse it");
    let text = error_text(&err);
    insta::assert_snapshot!(text, @"1126: Can't open shared library 'ha_rheap.so' (errno: 8, API version for STORAGE ENGINE plugin RHEAP not supported by this version of the server)");
    assert!(server.is_running());
    assert!(!rheap_available(&mut c)?);
    Ok(())
}
