# The rheap_loaded suite: one test that fails unless RHEAP is loaded, run beside upstream suites
# that our driver runs with the plugin (cargo xtask upstream, ci/conformance). Its suite.pm makes
# mysql-test-run's log checks ignore the plugin's maturity note for the whole run.
package My::Suite::Rheap_loaded;

@ISA = qw(My::Suite);

use File::Basename qw(dirname);

do(dirname(__FILE__) . "/../rheap_suppressions.pl") or die "rheap_suppressions.pl: $@ $!";

bless { };
