/* ptlog convert, filter, merge and dump: any source to any sink, through a temp file. */
#include "live.h"
#include "ptlog.h"

/* Input from a pipe: what was output goes out whenever the input has nothing more yet (live.h). */
static void flush_out(void *out) { ptlog_out_flush(out); }

int ptlog_convert_src(ptlog_src *src, ptlog_format to, const char *out_path, ptlog_select *sel,
                      const ptlog_dump_opts *text)
{
    ptlog_out out;
    int rc = ptlog_out_open(&out, out_path);
    if (rc) {
        src->close(src);
        return rc;
    }
    ptlog_in_on_wait(flush_out, &out);
    switch (to) {
    case PTLOG_FMT_JSON:
    case PTLOG_FMT_JSONL:
        rc = ptlog_write_json(src, &out, to == PTLOG_FMT_JSONL, sel, text ? text->ts : PTLOG_TS_NS);
        break;
    case PTLOG_FMT_CHROME:
        rc = ptlog_write_chrome(src, &out, sel);
        break;
    case PTLOG_FMT_PERFETTO:
        rc = ptlog_write_perfetto(src, &out, sel);
        break;
    case PTLOG_FMT_PTL:
        rc = ptlog_write_ptl(src, &out, sel);
        break;
    case PTLOG_FMT_TEXT:
        rc = ptlog_write_text(src, &out, sel, text);
        break;
    case PTLOG_FMT_AUTO:
        rc = PTLOG_EXIT_USAGE;
        break;
    }
    ptlog_in_on_wait(NULL, NULL);
    src->close(src);
    if (rc > PTLOG_EXIT_LOSS) {
        ptlog_out_abort(&out);
        return rc;
    }
    int wrc = ptlog_out_finish(&out);
    return wrc ? wrc : rc;
}

int ptlog_cmd_convert(const char *in_path, ptlog_format from, ptlog_format to, const char *out_path,
                      ptlog_select *sel, const ptlog_dump_opts *opts)
{
    ptlog_src *src;
    int rc = ptlog_src_open(in_path, from, &src);
    return rc ? rc : ptlog_convert_src(src, to, out_path, sel, opts);
}

int ptlog_cmd_dump(const char *path, ptlog_format from, ptlog_select *sel, const ptlog_dump_opts *opts,
                   const char *out_path)
{
    ptlog_src *src;
    int rc = ptlog_src_open(path, from, &src);
    return rc ? rc : ptlog_convert_src(src, PTLOG_FMT_TEXT, out_path, sel, opts);
}

int ptlog_cmd_merge(char **paths, size_t n, ptlog_format to, const char *out_path, ptlog_select *sel,
                    const ptlog_dump_opts *opts)
{
    ptlog_src *src;
    int rc = ptlog_merge_src_open(paths, n, &src);
    return rc ? rc : ptlog_convert_src(src, to, out_path, sel, opts);
}
