# Server log lines that mysql-test-run must not count as warnings wherever rheap is loaded; the
# suite.pm of each of our suites, and of the suites our driver runs with the plugin, reads this.
#
# RHEAP is a gamma plugin: a stable server notes "Plugin 'RHEAP' is of maturity level gamma
# while the server is stable" at every start. mysql-test-run's check after each test ignores it
# (include/mtr_warnings.sql lists it), but its check of a server's log after the server shuts
# down (a restart after a failed test, the end of a run) reads only @::global_suppressions.
push @::global_suppressions,
  qr/Plugin 'RHEAP(_TABLES)?' is of maturity level gamma while the server is stable/;
1;
