# The rheap_takeover suite: RHEAP serving MEMORY's tables (rheap_takeover) through the real
# mysql-test-run.
#
# suite.opt loads ha_rheap.so from $RHEAP_PLUGIN_DIR. When that is not set, it is the server's
# plugin directory if ha_rheap.so is installed there (the mariadb-plugin-rheap package, whose
# suites live under mysql-test/plugin/rheap/: mtr then names the library in $HA_RHEAP_SO), else
# this repository's staged build output (target/plugin, staged by cargo xtask or ci/test from
# `cargo xtask dist`'s target/dist). With neither, the suite is skipped and says why.
package My::Suite::Rheap_takeover;

@ISA = qw(My::Suite);

use File::Basename qw(dirname);
use Cwd qw(abs_path);

do(dirname(__FILE__) . "/../rheap_suppressions.pl") or die "rheap_suppressions.pl: $@ $!";

$ENV{RHEAP_PLUGIN_DIR} ||= ($ENV{HA_RHEAP_SO} && -f "$::plugindir/$ENV{HA_RHEAP_SO}")
  ? $::plugindir
  : abs_path(dirname(__FILE__) . "/../../..") . "/target/plugin";

return "No ha_rheap.so in $ENV{RHEAP_PLUGIN_DIR} (install mariadb-plugin-rheap, or build it with: cargo xtask dist; cargo xtask stages it in target/plugin)"
  unless -f "$ENV{RHEAP_PLUGIN_DIR}/ha_rheap.so";

bless { };
