/* The server headers whose C-level constants and enums rheap-sys binds (build/bindings.rs). */
#include <my_global.h>
#include <my_base.h>
#include <mysql_com.h>
#include "handler.h"
