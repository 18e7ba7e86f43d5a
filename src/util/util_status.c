/* util_status.c - telemem_strerror() and telemem_status_name(), generated
 * from status_list.h and checked against the public enum at compile time. */
#include "telemem.h"

#define TLM_STATUS(name, value, text) \
    _Static_assert((int)(name) == (value), #name " differs from status_list.h");
#include "util/status_list.h"
#undef TLM_STATUS

const char *telemem_strerror(int status)
{
    switch (status) {
#define TLM_STATUS(name, value, text) case value: return text;
#include "util/status_list.h"
#undef TLM_STATUS
    default: return "unknown status";
    }
}

const char *telemem_status_name(int status)
{
    switch (status) {
#define TLM_STATUS(name, value, text) case value: return #name;
#include "util/status_list.h"
#undef TLM_STATUS
    default: return "TELEMEM_UNKNOWN_STATUS";
    }
}
