/* shm_config.h - the shm transport's settings: TLM_CONFIG rows (name,
 * type, default, range, doc; src/core/config_table.h says the syntax),
 * collected with every backend's by backends/backend_config.h.  The
 * transport reads them as p->config->SHM_* (docs/shm.md). */
TLM_CONFIG(SHM_BUF_SIZE, SIZE, "16k", "1k..64m",
           "Payload bytes of one shared-memory message buffer; larger transfers are cut into fragments of this size")
TLM_CONFIG(SHM_BUF_COUNT, INT, "256", "1..1048576",
           "Message buffers per process (shared by all its peers)")
TLM_CONFIG(SHM_RING, INT, "256", "2..16777216",
           "Descriptor cells per peer pair (power of two); messages up to 40 bytes travel inline in a cell")
