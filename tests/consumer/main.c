/* Consumer of an installed tracelog: header and library versions must agree. */
#include <stdio.h>
#include <tracelog.h>

int main(void)
{
    printf("tracelog %s (%u), built against %s (%u)\n", tracelog_version_string(),
           tracelog_version_number(), TRACELOG_VERSION_STRING, (unsigned)TRACELOG_VERSION_NUMBER);
    return tracelog_version_number() == TRACELOG_VERSION_NUMBER ? 0 : 1;
}
