/* ucx_config.h - the ucx transport's settings: none of its own so far,
 * and the UCX variable it consults (TLM_CONFIG_ENV: UCX_TLS, whether the
 * user chose the wires; beside shm the transport leaves UCX's
 * shared-memory wires out unless UCX_TLS is set).
 * UCX reads its own variables from the environment when the transport
 * opens its context (ucp_config_read): UCX_TLS (the wires), UCX_NET_DEVICES
 * (the devices), UCX_RNDV_THRESH, ...  A TELEMEM_UCX_TLS or _DEVICES would
 * be a second name for the same knob, with a rule for which one wins.  A
 * setting of the transport's own (say its pool sizes, now constants in
 * ucx_transport.c) is a TLM_CONFIG row here (name, type, default, range,
 * doc; src/config/config_table.h says the syntax), read as
 * p->config->UCX_*, as shm_config.h and ofi_config.h do. */
TLM_CONFIG_ENV(UCX_TLS)
