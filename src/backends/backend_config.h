/* backend_config.h - collects the settings every backend declares in its
 * own directory (<name>/<name>_config.h: TLM_CONFIG rows, TLM_CONFIG_ENV
 * for a library's own variables it reads) into the one configuration
 * table, src/config/config_table.h, which includes this file where the
 * backends' rows belong.  A new backend adds its line here: its rows are
 * then parsed, printed by TELEMEM_PRINT_CONFIG and listed in the README
 * (scripts/config-table.py follows these includes).  Every backend's rows
 * are here whether or not the build has the backend, so a job's settings
 * mean the same on every build. */
#include "backends/ofi/ofi_config.h"
#include "backends/shm/shm_config.h"
#include "backends/ucx/ucx_config.h"
