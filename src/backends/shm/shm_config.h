/* shm_config.h - the shm transport's settings: TLM_CONFIG rows (name,
 * type, default, range, doc; src/config/config_table.h says the syntax),
 * collected with every backend's by backends/backend_config.h.  The
 * transport reads them as p->config->SHM_* (docs/shm.md). */
TLM_CONFIG(SHM_BUF_SIZE, SIZE, "16k", "1k..64m",
           "Payload bytes of one shared-memory message buffer; larger transfers are cut into fragments of this size")
TLM_CONFIG(SHM_BUF_COUNT, INT, "256", "1..1048576",
           "Message buffers per process (shared by all its peers)")
TLM_CONFIG(SHM_RING, INT, "256", "2..16777216",
           "Descriptor cells per peer pair (power of two); messages up to 40 bytes travel inline in a cell")
TLM_CONFIG(SHM_CMA, BOOL, "y", "",
           "Shared memory: long payloads (puts, get replies, long active messages) go as a descriptor that the receiver pulls with process_vm_readv, one copy (n: every payload through the message buffers, two copies; also the fallback, logged at info level, where the kernel refuses CMA); docs/shm.md")
TLM_CONFIG(SHM_CMA_THRESHOLD, SIZE, "0", "0..1t",
           "Smallest payload pulled with CMA; 0 = the calibration profile's shm-pull line (telemem-run --calibrate), else 4m")
TLM_CONFIG(SHM_MAP_THRESHOLD, SIZE, "0", "0..1t",
           "Smallest payload pulled when it lies in a telemem_malloc_all block, which the receiver maps and copies with memcpy; 0 = the calibration profile's shm-map line, else 64k")
