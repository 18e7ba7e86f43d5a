/* ofi_config.h - the ofi transport's settings: TLM_CONFIG rows (name,
 * type, default, range, doc; src/config/config_table.h says the syntax) and
 * the libfabric variables it consults (TLM_CONFIG_ENV: read by the config
 * machinery, the one reader of the environment, never printed), collected
 * with every backend's by backends/backend_config.h. */
TLM_CONFIG(OFI_PROVIDER, STRING, "", "*",
           "libfabric provider for the ofi transport, e.g. tcp;ofi_rxm, shm, verbs;ofi_rxm; empty = libfabric's first reliable-datagram provider")
TLM_CONFIG(OFI_RXM_RX_SIZE, INT, "1024", "0..1048576",
           "ofi over ofi_rxm (tcp, verbs): depth of rxm's shared receive pool of 16 KiB buffers, set as FI_OFI_RXM_MSG_RX_SIZE unless that is set or FI_OFI_RXM_USE_SRX is off (rxm's own default, 4096, costs 64 MiB per process); 0 = leave libfabric's default")
TLM_CONFIG_ENV(FI_OFI_RXM_USE_SRX)
TLM_CONFIG_ENV(FI_OFI_RXM_MSG_RX_SIZE)
