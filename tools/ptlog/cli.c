/*
 * ptlog: command-line parsing and main(). Everything else lives in the
 * command modules; this file only turns arguments into their parameters.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live.h"
#include "ptlog.h"

/* ---- help ------------------------------------------------------------------------- */

static const char exit_codes_text[] =
    "Exit status:\n"
    "  0  success\n"
    "  1  input read, but damage or truncation found (recovered with loss)\n"
    "  2  command-line usage error\n"
    "  3  input unreadable or invalid\n"
    "  4  cannot create, write or rename the output\n"
    "  5  internal error (out of memory)\n";

static const char select_text[] =
    "Event selection (options of one kind are alternatives, different kinds all apply):\n"
    "  --event GLOB     keep events whose name matches GLOB (fnmatch; repeatable;\n"
    "                   events without a name match \"event#ID\")\n"
    "  --pid PID        keep events of process PID (repeatable)\n"
    "  --tid TID        keep events of thread TID: its pthread_t or its kernel tid\n"
    "                   (as dump shows after \"tid\"), decimal or 0x hex (repeatable)\n"
    "  --begin TIME     keep events at or after TIME\n"
    "  --end TIME       keep events before TIME\n"
    "  --no-system      hide system events (names starting with \"posix_trace_\")\n"
    "  --limit N        stop after N events\n"
    "  --where EXPR     keep typed events whose fields match EXPR, e.g.\n"
    "                   'port == 443 && len > 1000' (== != < <= > >=, && || ! ( ),\n"
    "                   numbers, \"strings\", enum names; an event without the field\n"
    "                   never matches; a field or value that no schema of the log\n"
    "                   has is a usage error, exit 2)\n"
    "TIME is 2024-05-01T12:00:00.123456789Z (or with +HH:MM), nanoseconds since the\n"
    "epoch, or +OFFSET from the first event of the log: +1.5s, +250ms, +10us, +7ns.\n";

/* FOLLOW_HELP(NOTE): NOTE is a line of --follow's own ("" for none), before --writer-pid. */
#define FOLLOW_HELP(note)                                                                    \
    "  -f, --follow     follow a log while it is written (tail -f): print events as\n"     \
    "                   they land; end at its trailer, when its writer is gone, or\n"     \
    "                   on Ctrl-C (see README: \"Following a log\")\n" note                \
    "  --writer-pid PID with --follow: end once process PID has ended (default: the\n"    \
    "                   process the log names)\n"

typedef struct command_help {
    const char *name;
    const char *usage;
    const char *text;
} command_help;

static const command_help helps[] = {
    {"dump", "ptlog dump [OPTIONS] FILE",
     "Print one line per event, oldest first:\n"
     "  TIME [DELTA] PID TID [tid KTID [(THREAD NAME)]] NAME [TRUNCATION] [PAYLOAD]\n"
     "KTID is the thread's kernel tid and THREAD NAME its name (pthread_setname_np),\n"
     "when the log knows them (format 1.1, 1.2); a name that does not print safely\n"
     "is quoted and escaped.\n"
     "FILE may be a .ptl log, JSON or JSON Lines, or - for standard input.\n\n"
     "Options:\n"
     "  --relative       time as seconds.nanoseconds since the first event\n"
     "  --local          absolute time in the local time zone (default: UTC)\n"
     "  --delta          add DELTA, +seconds.nanoseconds since the previous\n"
     "                   event printed (+0.000000000 for the first)\n"
     "  --color[=WHEN]   colour: auto (default: only on a terminal), always, never\n"
     "  --hex            every payload raw (text or hex), not decoded into fields\n"
     "  --from FORMAT    input format: ptl, json, jsonl (default: detected)\n"
     "  -o, --output OUT write to OUT instead of standard output\n"
     FOLLOW_HELP("")},
    {"info", "ptlog info [--json] [--quick | --threads] [-o OUT] FILE",
     "Describe a .ptl log: format version, attributes, clock, policies, final status,\n"
     "clean shutdown or recovered, blocks and chunks, stored and raw sizes, time span,\n"
     "and per event type: count, first and last time, payload size range, mean rate.\n\n"
     "Options:\n"
     "  --json           machine-readable JSON output\n"
     "  --quick          skip the per-event-type statistics: answer from the block\n"
     "                   index only, without decompressing any event\n"
     "  --threads        add per-thread statistics: for each pid, thread id and\n"
     "                   kernel tid, the event count, first and last time, time\n"
     "                   span and the thread's name (its latest; - for none)\n"
     "  -o, --output OUT write to OUT instead of standard output\n"},
    {"verify", "ptlog verify [-q] FILE",
     "Read every block and chunk of a .ptl log, checking every checksum; print what\n"
     "was checked and each problem with its file offset. A log that was not closed\n"
     "(no trailer) is not clean: exit status 1, as for damage.\n\n"
     "Options:\n"
     "  -q, --quiet      print only the problems\n"},
    {"convert", "ptlog convert [OPTIONS] IN --to FORMAT [-o OUT]",
     "Convert between .ptl, JSON, JSON Lines and (output only) the Chrome trace format\n"
     "and Perfetto's protobuf trace.\n"
     "The input format is detected, or given with --from.\n\n"
     "Options:\n"
     "  --to FORMAT      json, jsonl, chrome, perfetto or ptl (required)\n"
     "  --from FORMAT    ptl, json or jsonl (default: detected)\n"
     "  --ts FORM        json and jsonl: ts as ns (integer nanoseconds since the\n"
     "                   epoch, the default), text (\"SECONDS.NNNNNNNNN\") or\n"
     "                   relative (integer ns since the creation time: exact in\n"
     "                   tools that parse numbers as doubles, such as jq)\n"
     "  -o, --output OUT output file (default: standard output); written to a\n"
     "                   temporary file renamed into place only on success\n"
     FOLLOW_HELP("                   (with --to jsonl only)\n")
     "The event selection options of filter also apply.\n"},
    {"filter", "ptlog filter [OPTIONS] IN -o OUT",
     "Write a new .ptl log with the selected events and the same attributes and\n"
     "event types as IN (a .ptl log, JSON or JSON Lines).\n\n"
     "Options:\n"
     "  --from FORMAT    input format: ptl, json, jsonl (default: detected)\n"
     "  -o, --output OUT output file (- for standard output)\n"},
    {"merge", "ptlog merge [OPTIONS] IN... -o OUT",
     "Merge the events of several logs (.ptl, JSON or JSON Lines) into one log in\n"
     "timestamp order. Event types are unified by name; the attributes are those of\n"
     "the first input.\n\n"
     "Options:\n"
     "  --to FORMAT      ptl (default), json, jsonl, chrome or perfetto\n"
     "  --ts FORM        json and jsonl: ns (default), text or relative (see convert)\n"
     "  -o, --output OUT output file (- for standard output; required for ptl)\n"
     "The event selection options of filter also apply.\n"},
    {"record", "ptlog record [OPTIONS] -o FILE -- PROGRAM [ARGS...]",
     "Run PROGRAM (linked with libtracelog) traced from its first event into the log\n"
     "FILE, written by ptlog: a crash of PROGRAM loses nothing it recorded, and the\n"
     "log ends with a tracelog_process_end event saying how it ended. The log is\n"
     "PROGRAM's: its process (pid and executable) and its name as the trace name,\n"
     "its threads with their kernel tids (dump --tid KTID, info --threads) and names\n"
     "(each one's name at its first event, kept if it ends before ptlog writes its\n"
     "events, a killed PROGRAM's too; renames seen while it lives). Counts\n"
     "of events, written and lost are shown live on a terminal, with a warning if\n"
     "PROGRAM has made no trace call after 3 s. SIGINT and SIGTERM are passed to\n"
     "PROGRAM; the log is finished when it ends; a second one kills PROGRAM\n"
     "(SIGKILL). Exit status: PROGRAM's (128 + the signal if it was killed; 127 if\n"
     "it cannot be run), or ptlog's own codes below.\n\n"
     "Options:\n"
     "  -o, --output FILE       the log; - for standard output (the program's own\n"
     "                          output then goes to stderr); an existing FILE is\n"
     "                          replaced only once tracing has begun\n"
     "  --stream-policy P       flush (default), loop or until-full\n"
     "  --log-policy P          append (default), loop or until-full\n"
     "  --stream-size N         bytes of the stream buffer of each thread (k, M, G\n"
     "                          suffixes; default 64M with the flush policy, as\n"
     "                          memory is used as a thread writes; else 8M)\n"
     "  --log-size N            largest log for loop and until-full (k, M, G)\n"
     "  --event NAME            record only these event types (repeatable)\n"
     "  --exclude NAME          do not record this event type (repeatable)\n"
     "  --flush-wait US         with the flush policy, PROGRAM waits up to US\n"
     "                          microseconds (0..1000000) for room when its buffer\n"
     "                          is full rather than lose events (default 0: it\n"
     "                          never waits for ptlog)\n"
     "  --drain-nice N          nice value (-20..19) of ptlog's threads that write\n"
     "                          the log (default -10 where permitted, as root;\n"
     "                          else unchanged), so that they keep up with PROGRAM\n"
     "                          under a CPU-bound load; PROGRAM keeps its own\n"
     "  -q, --quiet             no counts, no summary (warnings are still shown)\n"
     "A warning says when the program's event-name map is refused (of another\n"
     "libtracelog version, or left by a dead process with its pid): the log then\n"
     "has its events under ids only, without names, schemas or the names of\n"
     "threads gone before they were written. The summary counts thread names the\n"
     "program published malformed in its map (refused: those threads are unnamed).\n"
     "Exit status 3: PROGRAM never took the trace stream up: it is not linked with\n"
     "libtracelog, or made no trace call (the log, with its start and end, is kept).\n"},
    {"attach", "ptlog attach [OPTIONS] PID -o FILE",
     "Trace the running process PID (linked with libtracelog, having opened an event\n"
     "type) into the log FILE until it ends or ptlog gets SIGINT or SIGTERM. The log\n"
     "is PID's (its pid, executable and name), as with record. The options of record\n"
     "apply: with the flush stream policy (the default) the log is written as events\n"
     "come; with loop or until-full, what the stream holds is written when PID ends\n"
     "or ptlog gets SIGINT or SIGTERM (loop: the last events; until-full: the first,\n"
     "and attach ends when the stream is full). On a terminal, a warning if PID has\n"
     "made no trace call after 3 s. The warning and the summary of record apply too\n"
     "(a refused event-name map, thread names refused). Exit status 3: the process\n"
     "cannot be traced (no such process, another user's, or not linked with\n"
     "libtracelog).\n"},
    {"top", "ptlog top [OPTIONS] PID|FILE",
     "Show live what a program records: per event type and per thread (kernel tid,\n"
     "name when the log gives one) the rate over the last interval, the totals and\n"
     "bytes, and the log's losses (stream and log overruns), refreshed every second.\n"
     "PID: the process is attached to as with 'ptlog attach' (the log is not kept);\n"
     "FILE: a .ptl log followed as with 'dump --follow'. On a terminal: a full\n"
     "screen; keys r, t, b, n sort by rate, total, bytes, name; q or Ctrl-C quits and\n"
     "restores the terminal. Otherwise one summary line per interval, until the log\n"
     "ends.\n\n"
     "Options:\n"
     "  --sort KEY       rate (default), total, bytes or name\n"
     "  --interval SEC   seconds between refreshes (0.1 to 3600, default 1)\n"
     "  --writer-pid PID FILE: as with dump --follow\n"},
    {"help", "ptlog help [COMMAND]", "Show the help of ptlog or of COMMAND.\n"},
};

static const command_help *find_help(const char *name)
{
    for (size_t i = 0; i < sizeof helps / sizeof *helps; i++)
        if (strcmp(helps[i].name, name) == 0)
            return &helps[i];
    return NULL;
}

static void main_help(FILE *f)
{
    fprintf(f,
            "Usage: ptlog COMMAND [OPTIONS] [ARGS]\n"
            "Read, check and convert tracelog .ptl logs.\n\n"
            "Commands:\n"
            "  dump      print the events, one line each\n"
            "  info      describe a log (attributes, sizes, per event type statistics)\n"
            "  verify    check every block and checksum of a log\n"
            "  convert   convert to and from JSON, JSON Lines, Chrome trace, .ptl\n"
            "  filter    write a new log with selected events\n"
            "  merge     merge several logs in timestamp order\n"
            "  record    run a program traced, writing its log\n"
            "  attach    trace a running process, writing its log\n"
            "  top       live rates of a running program or a growing log\n"
            "  help      show the help of a command\n\n"
            "Options:\n"
            "  -h, --help     show this help\n"
            "  -V, --version  show the version of ptlog and of the .ptl format it writes\n\n"
            "Inputs may be - (standard input); -o - writes to standard output.\n"
            "Run 'ptlog help COMMAND' for the options of a command.\n\n%s",
            exit_codes_text);
}

static void command_help_print(const command_help *h)
{
    printf("Usage: %s\n%s", h->usage, h->text);
    if (strcmp(h->name, "dump") == 0 || strcmp(h->name, "filter") == 0 || strcmp(h->name, "convert") == 0)
        printf("\n%s", select_text);
    printf("\n%s", exit_codes_text);
}

static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int usage_error(const char *cmd, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (cmd)
        ptlog_msg(cmd, "%s (see 'ptlog help %s')", text, cmd);
    else
        ptlog_msg(NULL, "%s (see 'ptlog --help')", text);
    return PTLOG_EXIT_USAGE;
}

/* ---- argument parsing -------------------------------------------------------------- */

enum {
    OPT_HELP = 'h',
    OPT_OUTPUT = 'o',
    OPT_QUIET = 'q',
    OPT_RELATIVE = 300,
    OPT_LOCAL,
    OPT_COLOR,
    OPT_FROM,
    OPT_TO,
    OPT_JSON,
    OPT_QUICK,
    OPT_DELTA,
    OPT_THREADS,
    OPT_HEX,
    OPT_TS,
    OPT_WRITER_PID,
    OPT_FOLLOW = 'f'
};

#define SELECT_OPTIONS                                                                      \
    {"event", required_argument, NULL, PTLOG_OPT_EVENT}, {"pid", required_argument, NULL, PTLOG_OPT_PID}, \
        {"tid", required_argument, NULL, PTLOG_OPT_TID},                                   \
        {"begin", required_argument, NULL, PTLOG_OPT_BEGIN},                               \
        {"end", required_argument, NULL, PTLOG_OPT_END},                                   \
        {"limit", required_argument, NULL, PTLOG_OPT_LIMIT},                               \
        {"no-system", no_argument, NULL, PTLOG_OPT_NO_SYSTEM},                             \
        {"where", required_argument, NULL, PTLOG_OPT_WHERE}

typedef struct args {
    const char *cmd;
    char **pos;
    size_t npos;
    const char *output;
    int relative, local, color, json, quiet, quick, delta, threads, hex, follow;
    long writer_pid; /* --writer-pid: 0 if not given */
    ptlog_ts_form ts; /* --ts */
    ptlog_format from, to;
    const char *to_name;
    ptlog_select sel;
} args;

static int parse_format(const char *cmd, const char *opt, const char *arg, ptlog_format *f, int output)
{
    *f = ptlog_format_parse(arg);
    if (*f == PTLOG_FMT_AUTO || (!output && (*f == PTLOG_FMT_CHROME || *f == PTLOG_FMT_PERFETTO)))
        return usage_error(cmd, "%s: unknown format '%s' (expected %s)", opt, arg,
                           output ? "json, jsonl, chrome, perfetto or ptl" : "ptl, json or jsonl");
    return 0;
}

static int has_option(const struct option *longopts, const char *name)
{
    for (; longopts->name; longopts++)
        if (strcmp(longopts->name, name) == 0)
            return 1;
    return 0;
}

/* Parses the options of cmd (argv[0] is the command name). Exit code, or -1 if help was printed. */
static int parse_args(int argc, char **argv, const struct option *longopts, args *a)
{
    a->cmd = argv[0];
    a->color = -1;
    optind = 1;
    opterr = 0;
    /* The short forms of the command's own options only (-o and -q were once taken by every command). */
    char shorts[8] = ":h", *sp = shorts + 2;
    if (has_option(longopts, "follow"))
        *sp++ = 'f';
    if (has_option(longopts, "output"))
        *sp++ = 'o', *sp++ = ':';
    if (has_option(longopts, "quiet"))
        *sp++ = 'q';
    *sp = 0;
    for (;;) {
        int prev = optind;
        int c = getopt_long(argc, argv, shorts, longopts, NULL);
        if (c == -1)
            break;
        const char *opt_text = argv[prev < argc ? prev : argc - 1];
        if (c == '?') {
            if (optopt)
                return usage_error(a->cmd, "unknown option '-%c'", optopt);
            return usage_error(a->cmd, "unknown option '%s'", argv[optind - 1]);
        }
        if (c == ':')
            return usage_error(a->cmd, "option '%s' needs an argument", argv[optind - 1]);
        int r = ptlog_select_option(&a->sel, c, optarg);
        if (r < 0)
            return PTLOG_EXIT_USAGE;
        if (r > 0)
            continue;
        switch (c) {
        case OPT_HELP:
            command_help_print(find_help(a->cmd));
            return -1;
        case OPT_OUTPUT:
            if (!*optarg)
                return usage_error(a->cmd, "-o: an empty file name (- is standard output)");
            a->output = optarg;
            break;
        case OPT_QUIET:
            a->quiet = 1;
            break;
        case OPT_RELATIVE:
            a->relative = 1;
            break;
        case OPT_LOCAL:
            a->local = 1;
            break;
        case OPT_JSON:
            a->json = 1;
            break;
        case OPT_QUICK:
            a->quick = 1;
            break;
        case OPT_DELTA:
            a->delta = 1;
            break;
        case OPT_THREADS:
            a->threads = 1;
            break;
        case OPT_HEX:
            a->hex = 1;
            break;
        case OPT_TS:
            if (strcmp(optarg, "ns") == 0)
                a->ts = PTLOG_TS_NS;
            else if (strcmp(optarg, "text") == 0)
                a->ts = PTLOG_TS_TEXT;
            else if (strcmp(optarg, "relative") == 0)
                a->ts = PTLOG_TS_RELATIVE;
            else
                return usage_error(a->cmd, "--ts: unknown form '%s' (expected ns, text or relative)", optarg);
            break;
        case OPT_FOLLOW:
            a->follow = 1;
            break;
        case OPT_WRITER_PID: {
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v <= 0 || v > 0x7fffffffL)
                return usage_error(a->cmd, "--writer-pid: not a process id: '%s'", optarg);
            a->writer_pid = v;
            break;
        }
        case OPT_COLOR:
            if (!optarg || strcmp(optarg, "always") == 0)
                a->color = 1;
            else if (strcmp(optarg, "never") == 0)
                a->color = 0;
            else if (strcmp(optarg, "auto") == 0)
                a->color = -1;
            else
                return usage_error(a->cmd, "--color: expected auto, always or never, not '%s'", optarg);
            break;
        case OPT_FROM:
            if (parse_format(a->cmd, "--from", optarg, &a->from, 0))
                return PTLOG_EXIT_USAGE;
            break;
        case OPT_TO:
            if (parse_format(a->cmd, "--to", optarg, &a->to, 1))
                return PTLOG_EXIT_USAGE;
            break;
        default:
            return usage_error(a->cmd, "unexpected option '%s'", opt_text);
        }
    }
    a->pos = argv + optind;
    a->npos = (size_t)(argc - optind);
    return 0;
}

static int need_one_input(const args *a)
{
    if (a->npos == 0)
        return usage_error(a->cmd, "missing input file (use - for standard input)");
    if (a->npos > 1)
        return usage_error(a->cmd, "too many arguments: '%s'", a->pos[1]);
    return 0;
}

/* The file behind an input or output argument ("-": the standard stream fd). 0 or -1. */
static int stat_arg(const char *path, int std_fd, struct stat *st)
{
    return !path || strcmp(path, "-") == 0 ? fstat(std_fd, st) : stat(path, st);
}

/*
 * Refuses an output that is one of the inputs (same device and inode, so
 * also through symbolic and hard links), before anything is written: the
 * output would replace the log it is read from, or grow it while it is read
 * (standard output appended to an input). Devices and FIFOs are exempt.
 */
static int check_output_not_input(const args *a, char *const *inputs, size_t n)
{
    struct stat out, in;
    if (stat_arg(a->output, STDOUT_FILENO, &out) != 0 || !S_ISREG(out.st_mode))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (stat_arg(inputs[i], STDIN_FILENO, &in) != 0 || in.st_dev != out.st_dev || in.st_ino != out.st_ino)
            continue;
        const char *in_name = ptlog_display_name(inputs[i]);
        if (!a->output || strcmp(a->output, "-") == 0)
            return usage_error(a->cmd, "standard output is the input %s (the same file); write elsewhere", in_name);
        return usage_error(a->cmd, "the output %s is the input %s (the same file); write to another file",
                           a->output, in_name);
    }
    return 0;
}

/* Binary output (.ptl, Perfetto) is never sent to a terminal by accident. */
static int check_binary_output(const args *a)
{
    int fd = a->output ? ptlog_out_named_fd(a->output) : STDOUT_FILENO;
    if (fd >= 0 && isatty(fd))
        return usage_error(a->cmd, "refusing to write a binary %s to a terminal; use -o FILE",
                           a->to == PTLOG_FMT_PERFETTO ? "Perfetto trace" : ".ptl log");
    return 0;
}

static int is_binary(ptlog_format f)
{
    return f == PTLOG_FMT_PTL || f == PTLOG_FMT_PERFETTO;
}

/* --follow and --writer-pid (dump, convert --to jsonl): follow.c. */
#define FOLLOW_OPTIONS                                                                      \
    {"follow", no_argument, NULL, OPT_FOLLOW}, {"writer-pid", required_argument, NULL, OPT_WRITER_PID}

static int check_follow(const args *a)
{
    if (a->writer_pid && !a->follow)
        return usage_error(a->cmd, "--writer-pid goes with --follow");
    if (a->follow && a->from != PTLOG_FMT_AUTO && a->from != PTLOG_FMT_PTL)
        return usage_error(a->cmd, "--follow reads .ptl logs only");
    return 0;
}

static int run_follow(args *a, ptlog_format to, const ptlog_dump_opts *text)
{
    ptlog_follow_opts fo = {a->writer_pid};
    ptlog_src *src;
    int rc = ptlog_follow_src_open(a->pos[0], &fo, &src, NULL);
    return rc ? rc : ptlog_convert_src(src, to, a->output, &a->sel, text);
}

static int run_dump(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        SELECT_OPTIONS,
        {"relative", no_argument, NULL, OPT_RELATIVE},
        {"local", no_argument, NULL, OPT_LOCAL},
        {"delta", no_argument, NULL, OPT_DELTA},
        {"color", optional_argument, NULL, OPT_COLOR},
        {"colour", optional_argument, NULL, OPT_COLOR},
        {"hex", no_argument, NULL, OPT_HEX},
        {"from", required_argument, NULL, OPT_FROM},
        {"output", required_argument, NULL, OPT_OUTPUT},
        FOLLOW_OPTIONS,
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    int rc = parse_args(argc, argv, opts, a);
    if (rc)
        return rc;
    if ((rc = need_one_input(a)))
        return rc;
    if (a->relative && a->local)
        return usage_error(a->cmd, "--relative and --local cannot be used together");
    if ((rc = check_output_not_input(a, a->pos, 1)))
        return rc;
    if ((rc = check_follow(a)))
        return rc;
    ptlog_dump_opts o = {.relative = a->relative, .local = a->local, .color = a->color, .delta = a->delta,
                         .hex = a->hex};
    if (a->follow)
        return run_follow(a, PTLOG_FMT_TEXT, &o);
    return ptlog_cmd_dump(a->pos[0], a->from, &a->sel, &o, a->output);
}

static int run_info(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"quick", no_argument, NULL, OPT_QUICK},
        {"threads", no_argument, NULL, OPT_THREADS},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    int rc = parse_args(argc, argv, opts, a);
    if (rc)
        return rc;
    if ((rc = need_one_input(a)) || (rc = check_output_not_input(a, a->pos, 1)))
        return rc;
    if (a->quick && a->threads)
        return usage_error(a->cmd, "--threads needs the pass over the events that --quick skips");
    ptlog_info_opts o = {a->json, a->quick, a->threads};
    return ptlog_cmd_info(a->pos[0], &o, a->output);
}

static int run_verify(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    int rc = parse_args(argc, argv, opts, a);
    if (rc)
        return rc;
    if ((rc = need_one_input(a)) || (rc = check_output_not_input(a, a->pos, 1)))
        return rc;
    return ptlog_cmd_verify(a->pos[0], a->quiet);
}

static int run_convert(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        SELECT_OPTIONS,
        {"to", required_argument, NULL, OPT_TO},
        {"from", required_argument, NULL, OPT_FROM},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {"ts", required_argument, NULL, OPT_TS},
        FOLLOW_OPTIONS,
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    int rc = parse_args(argc, argv, opts, a);
    if (rc)
        return rc;
    if ((rc = need_one_input(a)))
        return rc;
    if (a->to == PTLOG_FMT_AUTO)
        return usage_error(a->cmd, "missing --to FORMAT (json, jsonl, chrome, perfetto or ptl)");
    if ((rc = check_follow(a)))
        return rc;
    if (a->follow && a->to != PTLOG_FMT_JSONL)
        return usage_error(a->cmd, "--follow writes each event as it comes: only with --to jsonl");
    if ((rc = check_output_not_input(a, a->pos, 1))) /* --follow too: it once wrote over the log it followed */
        return rc;
    if (a->follow)
        return run_follow(a, PTLOG_FMT_JSONL, NULL);
    if (is_binary(a->to) && (rc = check_binary_output(a)))
        return rc;
    ptlog_dump_opts out_opts = {.ts = a->ts};
    return ptlog_cmd_convert(a->pos[0], a->from, a->to, a->output, &a->sel, &out_opts);
}

static int run_filter(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        SELECT_OPTIONS,
        {"from", required_argument, NULL, OPT_FROM},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    int rc = parse_args(argc, argv, opts, a);
    if (rc)
        return rc;
    if ((rc = need_one_input(a)))
        return rc;
    if (!a->output)
        return usage_error(a->cmd, "missing -o OUT (use -o - for standard output)");
    if ((rc = check_binary_output(a)) || (rc = check_output_not_input(a, a->pos, 1)))
        return rc;
    return ptlog_cmd_convert(a->pos[0], a->from, PTLOG_FMT_PTL, a->output, &a->sel, NULL);
}

static int run_merge(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        SELECT_OPTIONS,
        {"to", required_argument, NULL, OPT_TO},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {"ts", required_argument, NULL, OPT_TS},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    int rc = parse_args(argc, argv, opts, a);
    if (rc)
        return rc;
    if (a->npos == 0)
        return usage_error(a->cmd, "missing input files");
    if (a->to == PTLOG_FMT_AUTO)
        a->to = PTLOG_FMT_PTL;
    if (a->to == PTLOG_FMT_PTL && !a->output)
        return usage_error(a->cmd, "missing -o OUT (use -o - for standard output)");
    size_t stdin_count = 0;
    for (size_t i = 0; i < a->npos; i++)
        stdin_count += strcmp(a->pos[i], "-") == 0;
    if (stdin_count > 1)
        return usage_error(a->cmd, "standard input (-) can be given only once");
    if ((is_binary(a->to) && (rc = check_binary_output(a))) ||
        (rc = check_output_not_input(a, a->pos, a->npos)))
        return rc;
    ptlog_dump_opts out_opts = {.ts = a->ts};
    return ptlog_cmd_merge(a->pos, a->npos, a->to, a->output, &a->sel, &out_opts);
}

static int run_help(int argc, char **argv)
{
    if (argc < 2) {
        main_help(stdout);
        return 0;
    }
    const command_help *h = find_help(argv[1]);
    if (!h)
        return usage_error(NULL, "help: unknown command '%s'", argv[1]);
    command_help_print(h);
    return 0;
}

/*
 * Everything printed with stdio (help, version, verify's report) must reach
 * standard output: a full disk or a closed descriptor is an error (exit 4),
 * also for --help and --version. rc < 0: help was printed, success.
 */
static int finish_stdout(int rc)
{
    errno = 0;
    int flush_failed = fflush(stdout) != 0;
    if ((flush_failed || ferror(stdout)) && rc <= PTLOG_EXIT_LOSS) {
        ptlog_msg(NULL, "cannot write to standard output: %s", flush_failed && errno ? strerror(errno) : "write error");
        return PTLOG_EXIT_OUTPUT;
    }
    return rc < 0 ? 0 : rc;
}

/*
 * A standard descriptor the caller closed (ptlog ... >&-) is held by /dev/null opened the other way
 * round, so that reads or writes there fail (EBADF) and no file ptlog opens lands on it: the input
 * log once became descriptor 1, and the .ptl writer tried to truncate it as its output.
 */
static void hold_closed_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            int held = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
            if (held >= 0 && held != fd) /* the lowest free descriptor is fd: this cannot happen */
                close(held);
        }
}

int main(int argc, char **argv)
{
    hold_closed_std_fds();
    ptlog_catch_file_size();
    if (argc < 2) {
        usage_error(NULL, "missing command");
        return PTLOG_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0)
        return finish_stdout(run_help(1, argv));
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        printf("ptlog %s (tracelog %s), writes .ptl format %d.%d\n", PTLOG_VERSION, tracelog_version_string(),
               TRACELOG_FORMAT_MAJOR, TRACELOG_FORMAT_MINOR);
        return finish_stdout(0);
    }
    static const struct {
        const char *name;
        int (*run)(int, char **, args *);
    } commands[] = {
        {"dump", run_dump}, {"info", run_info}, {"verify", run_verify},
        {"convert", run_convert}, {"filter", run_filter}, {"merge", run_merge},
    };
    if (strcmp(cmd, "help") == 0)
        return finish_stdout(run_help(argc - 1, argv + 1));
    if (ptlog_read_ahead_init() || ptlog_format_threads_init()) /* checked before any input is opened */
        return PTLOG_EXIT_USAGE;
    if (strcmp(cmd, "top") == 0) {
        if (argc > 2 && (strcmp(argv[2], "-h") == 0 || strcmp(argv[2], "--help") == 0)) {
            command_help_print(find_help(cmd));
            return finish_stdout(0);
        }
        return ptlog_cmd_top(argc - 1, argv + 1);
    }
    if (strcmp(cmd, "record") == 0 || strcmp(cmd, "attach") == 0) {
        if (argc > 2 && (strcmp(argv[2], "-h") == 0 || strcmp(argv[2], "--help") == 0)) {
            command_help_print(find_help(cmd));
            return finish_stdout(0);
        }
        return cmd[0] == 'r' ? ptlog_cmd_record(argc - 1, argv + 1) : ptlog_cmd_attach(argc - 1, argv + 1);
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        if (strcmp(cmd, commands[i].name) != 0)
            continue;
        args a;
        memset(&a, 0, sizeof a);
        int rc = commands[i].run(argc - 1, argv + 1, &a);
        ptlog_select_free(&a.sel);
        return finish_stdout(rc);
    }
    if (cmd[0] == '-')
        return usage_error(NULL, "unknown option '%s'", cmd);
    return usage_error(NULL, "unknown command '%s'", cmd);
}
