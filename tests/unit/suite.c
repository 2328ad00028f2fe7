/* suite.c - the runner every libcheck unit suite ends with (kept apart so the benchmark needs no Check). */
#include <check.h>
#include <stdlib.h>

#include "testutil.h"

int tu_run_suite(struct Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
