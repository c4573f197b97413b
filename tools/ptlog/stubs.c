#include "ptlog.h"
int ptlog_cmd_info(const char *path, int json, const char *out_path) { (void)path; (void)json; (void)out_path; return 5; }
int ptlog_cmd_verify(const char *path, int quiet) { (void)path; (void)quiet; return 5; }
int ptlog_cmd_convert(const char *in_path, ptlog_format from, ptlog_format to, const char *out_path, ptlog_select *sel) { (void)in_path; (void)from; (void)to; (void)out_path; (void)sel; return 5; }
int ptlog_cmd_merge(char **paths, size_t n, const char *out_path) { (void)paths; (void)n; (void)out_path; return 5; }
int ptlog_json_src_open(ptlog_in *in, int lines, ptlog_src **out) { (void)in; (void)lines; (void)out; return 5; }
