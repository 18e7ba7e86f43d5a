/* fail_config.c - failure: configuration.  With a bad TELEMEM_* value in
 * the environment (named on the command line), telemem_initialize()
 * returns TELEMEM_ERR_CONFIG, the library stays uninitialized, and after
 * the variable is removed it initializes normally (the log line naming the
 * variable is checked by run_checked.sh --require-log).  With "ok" as the
 * argument, initialization must succeed (unknown variables only warn). */
#include "tt.h"

int main(int argc, char **argv)
{
    tt_proc_line();
    const char *var = argc > 1 ? argv[1] : "ok";
    if (strcmp(var, "ok") != 0) {
        const char *val = getenv(var);
        TT_ASSERT(val != NULL, "%s is not set", var);
        tt_log("%s=%s", var, val);
        TT_EXPECT(telemem_initialize(&argc, &argv), TELEMEM_ERR_CONFIG);
        TT_EXPECT(telemem_rank(), TELEMEM_ERR_NOT_INITIALIZED);
        TT_EXPECT(telemem_barrier(), TELEMEM_ERR_NOT_INITIALIZED);
        TT_EXPECT(telemem_finalize(), TELEMEM_ERR_NOT_INITIALIZED);
        /* A failed initialize may be retried. */
        unsetenv(var);
    }
    tt_init(&argc, &argv, "fail_config");
    TT_CHECK(telemem_barrier());
    tt_finalize();
    tt_log("PASS");
    return 0;
}
