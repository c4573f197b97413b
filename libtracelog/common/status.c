/* Text and names of the status codes (the one list is TRACELOG_STATUS_MAP in tracelog/common.h). */
#include "tracelog/common.h"

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
