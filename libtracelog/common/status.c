#include "tracelog/common.h"

unsigned tracelog_version_number(void) { return TRACELOG_VERSION_NUMBER; }
const char *tracelog_version_string(void) { return TRACELOG_VERSION_STRING; }

const char *tracelog_strerror(tracelog_status status)
{
    switch (status) {
#define TEXT_(name, value, text) case name: return text;
        TRACELOG_STATUS_MAP(TEXT_)
#undef TEXT_
    }
    return "unknown status";
}

const char *tracelog_status_name(tracelog_status status)
{
    switch (status) {
#define NAME_(name, value, text) case name: return #name;
        TRACELOG_STATUS_MAP(NAME_)
#undef NAME_
    }
    return "TRACELOG_E_UNKNOWN";
}
