/* config_names.c - prints the settings the built library knows
 * (telemem_config_string() of a singleton), for config_names.sh. */
#include <stdio.h>

#include "telemem.h"

int main(int argc, char **argv)
{
    int rc = telemem_initialize(&argc, &argv);
    if (rc != TELEMEM_OK) {
        fprintf(stderr, "telemem_initialize: %s\n", telemem_strerror(rc));
        return 1;
    }
    fputs(telemem_config_string(), stdout);
    return telemem_finalize() == TELEMEM_OK ? 0 : 1;
}
