# The rheap suite: ENGINE=RHEAP through the real mysql-test-run.
# suite.opt loads ha_rheap.so from $RHEAP_PLUGIN_DIR; by default that is this repository's
# staged build output (target/plugin, made by `rheap-dev plugin` or ci/test).
package My::Suite::Rheap;

@ISA = qw(My::Suite);

use File::Basename qw(dirname);
use Cwd qw(abs_path);

$ENV{RHEAP_PLUGIN_DIR} ||= abs_path(dirname(__FILE__) . "/../../..") . "/target/plugin";

return "No ha_rheap.so in $ENV{RHEAP_PLUGIN_DIR} (build it with: cargo run -p rheap-mtr-tests --bin rheap-dev -- plugin)"
  unless -f "$ENV{RHEAP_PLUGIN_DIR}/ha_rheap.so";

bless { };
