# The rheap_takeover suite: RHEAP serving MEMORY's tables (rheap_takeover) through the real
# mysql-test-run. suite.opt loads ha_rheap.so from $RHEAP_PLUGIN_DIR (default: this repository's
# target/plugin); the suite is skipped, with the reason, when no plugin is built.
package My::Suite::Rheap_takeover;

@ISA = qw(My::Suite);

use File::Basename qw(dirname);
use Cwd qw(abs_path);

$ENV{RHEAP_PLUGIN_DIR} ||= abs_path(dirname(__FILE__) . "/../../..") . "/target/plugin";

return "No ha_rheap.so in $ENV{RHEAP_PLUGIN_DIR} (build it with: cargo xtask dist; rheap-dev stages it in target/plugin)"
  unless -f "$ENV{RHEAP_PLUGIN_DIR}/ha_rheap.so";

bless { };
