/*
 * bench_plot: draws the recording benchmarks' results as one SVG file (no
 * gnuplot needed): cost per event against payload size, aggregate
 * throughput against thread count, and the fraction of events lost against
 * the offered event rate. Medians as points, min-max as bars.
 *
 *   bench_plot EVENT.json [LTTNG.json] -o OUT.svg
 *
 * EVENT.json is bench_event's --json output; LTTNG.json, when given and
 * present, is run-lttng.sh's, and adds the LTTng-UST series.
 * Exit status: 0, 1 if an input cannot be read, 2 for bad arguments.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_POINTS 32
#define MAX_SERIES 8

typedef struct series {
    const char *name, *color;
    int dashed;
    int n;
    double x[MAX_POINTS], y[MAX_POINTS], lo[MAX_POINTS], hi[MAX_POINTS];
} series;

typedef struct panel {
    const char *title, *xlabel, *ylabel;
    series s[MAX_SERIES];
    int ns;
    double xticks[MAX_POINTS];
    int nxticks;
    int log_x;
} panel;

static series *add_series(panel *p, const char *name, const char *color, int dashed)
{
    series *s = &p->s[p->ns++];
    memset(s, 0, sizeof *s);
    s->name = name;
    s->color = color;
    s->dashed = dashed;
    return s;
}

static void add_point(series *s, double x, double y, double lo, double hi)
{
    if (s->n == MAX_POINTS || !isfinite(y))
        return;
    int k = s->n++; /* kept in x order, so that the line does not zigzag */
    for (; k > 0 && s->x[k - 1] > x; k--) {
        s->x[k] = s->x[k - 1];
        s->y[k] = s->y[k - 1];
        s->lo[k] = s->lo[k - 1];
        s->hi[k] = s->hi[k - 1];
    }
    s->x[k] = x;
    s->y[k] = y;
    s->lo[k] = lo;
    s->hi[k] = hi;
}

/* A {"median","min","max"} object into a point; 0 if absent. */
static int add_summary(series *s, double x, json_t *o)
{
    if (!json_is_object(o))
        return 0;
    double m = json_number_value(json_object_get(o, "median"));
    add_point(s, x, m, json_number_value(json_object_get(o, "min")), json_number_value(json_object_get(o, "max")));
    return 1;
}

/* A round upper bound for an axis (1, 2 or 5 times a power of ten). */
static double nice_max(double v)
{
    if (v <= 0)
        return 1;
    double p = pow(10, floor(log10(v)));
    for (double m = 1; m <= 10; m *= 2) {
        if (m * p >= v)
            return m * p;
        if (m == 2 && 5 * p >= v)
            return 5 * p;
    }
    return 10 * p;
}

static void draw_panel(FILE *f, const panel *p, double ox, double oy)
{
    const double w = 330, h = 250; /* plot area */
    double xmin = 1e300, xmax = -1e300, ymax = 0;
    for (int i = 0; i < p->ns; i++) {
        for (int k = 0; k < p->s[i].n; k++) {
            double x = p->log_x ? log2(p->s[i].x[k]) : p->s[i].x[k];
            xmin = x < xmin ? x : xmin;
            xmax = x > xmax ? x : xmax;
            double top = p->s[i].hi[k] > p->s[i].y[k] ? p->s[i].hi[k] : p->s[i].y[k];
            ymax = top > ymax ? top : ymax;
        }
    }
    for (int t = 0; t < p->nxticks; t++) {
        double x = p->log_x ? log2(p->xticks[t]) : p->xticks[t];
        xmin = x < xmin ? x : xmin;
        xmax = x > xmax ? x : xmax;
    }
    if (xmin > xmax)
        xmin = 0, xmax = 1;
    if (xmin == xmax)
        xmin -= 1, xmax += 1;
    double pad = (xmax - xmin) * 0.08;
    xmin -= pad;
    xmax += pad;
    ymax = nice_max(ymax * 1.05);
#define PX(v) (ox + ((p->log_x ? log2(v) : (v)) - xmin) / (xmax - xmin) * w)
#define PY(v) (oy + h - (v) / ymax * h)
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='14' font-weight='bold'>%s</text>\n", ox, oy - 12, p->title);
    fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' stroke='#444'/>\n", ox, oy, w, h);
    for (int t = 0; t <= 5; t++) {
        double v = ymax * t / 5, y = PY(v);
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n", ox, y, ox + w, y);
        fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='end'>%g</text>\n", ox - 4, y + 4, v);
    }
    for (int t = 0; t < p->nxticks; t++) {
        double x = PX(p->xticks[t]);
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n", x, oy, x, oy + h);
        fprintf(f, "<text x='%.1f' y='%.1f' font-size='11' text-anchor='middle'>%g</text>\n", x, oy + h + 15,
                p->xticks[t]);
    }
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='12' text-anchor='middle'>%s</text>\n", ox + w / 2, oy + h + 32,
            p->xlabel);
    fprintf(f, "<text transform='translate(%.1f,%.1f) rotate(-90)' font-size='12' text-anchor='middle'>%s</text>\n",
            ox - 42, oy + h / 2, p->ylabel);
    for (int i = 0; i < p->ns; i++) {
        const series *s = &p->s[i];
        if (!s->n)
            continue;
        fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2'%s points='", s->color,
                s->dashed ? " stroke-dasharray='6,4'" : "");
        for (int k = 0; k < s->n; k++)
            fprintf(f, "%.1f,%.1f ", PX(s->x[k]), PY(s->y[k]));
        fprintf(f, "'/>\n");
        for (int k = 0; k < s->n; k++) {
            double x = PX(s->x[k]);
            if (s->hi[k] > s->lo[k])
                fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s'/>\n", x, PY(s->lo[k]), x,
                        PY(s->hi[k]), s->color);
            fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n", x, PY(s->y[k]), s->color);
        }
        double ly = oy + 14 + 15 * i;
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' stroke-width='2'%s/>\n", ox + 8, ly - 4,
                ox + 26, ly - 4, s->color, s->dashed ? " stroke-dasharray='6,4'" : "");
        fprintf(f, "<text x='%.1f' y='%.1f' font-size='11'>%s</text>\n", ox + 30, ly, s->name);
    }
#undef PX
#undef PY
}

static json_t *load(const char *path, int required)
{
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j && required)
        fprintf(stderr, "bench_plot: %s:%d:%d: %s\n", path, err.line, err.column, err.text);
    return j;
}

int main(int argc, char **argv)
{
    const char *event_path = NULL, *lttng_path = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!event_path)
            event_path = argv[i];
        else if (!lttng_path)
            lttng_path = argv[i];
        else
            event_path = NULL, i = argc;
    }
    if (!event_path || !out) {
        fprintf(stderr, "usage: bench_plot EVENT.json [LTTNG.json] -o OUT.svg\n");
        return 2;
    }
    json_t *ev = load(event_path, 1);
    if (!ev)
        return 1;
    json_t *lt = lttng_path ? load(lttng_path, 0) : NULL;
    json_t *figs = json_object_get(ev, "figures");
    static const double sizes[3] = {16, 64, 256};
    static panel cost, thr, loss;

    cost = (panel){.title = "Cost per event", .xlabel = "payload (bytes)", .ylabel = "ns per event (per thread)",
                   .log_x = 1, .nxticks = 3, .xticks = {16, 64, 256}};
    series *c1 = add_series(&cost, "tracelog, log, 1 thread", "#1f77b4", 0);
    series *c2 = add_series(&cost, "tracelog, log, 2 threads", "#1f77b4", 1);
    series *c3 = add_series(&cost, "tracelog, no log, 1 thread", "#2ca02c", 0);
    series *clk = add_series(&cost, "clock_gettime", "#7f7f7f", 1);
    for (int i = 0; i < 3; i++) {
        char key[64];
        snprintf(key, sizeof key, "event_log_%gb_1t_ns", sizes[i]);
        add_summary(c1, sizes[i], json_object_get(figs, key));
        snprintf(key, sizeof key, "event_log_%gb_2t_ns", sizes[i]);
        add_summary(c2, sizes[i], json_object_get(figs, key));
        snprintf(key, sizeof key, "event_nolog_%gb_1t_ns", sizes[i]);
        add_summary(c3, sizes[i], json_object_get(figs, key));
        add_summary(clk, sizes[i], json_object_get(figs, "clock_gettime_realtime_ns"));
    }

    thr = (panel){.title = "Aggregate throughput, 16-byte payload", .xlabel = "threads (one per core)",
                  .ylabel = "M events/s", .nxticks = 2, .xticks = {1, 2}};
    series *t1 = add_series(&thr, "tracelog, log", "#1f77b4", 0);
    series *t2 = add_series(&thr, "tracelog, no log", "#2ca02c", 0);
    json_t *o1 = json_object_get(figs, "event_log_16b_1t_ns"), *o2 = json_object_get(figs, "event_log_16b_2t_ns");
    if (o1 && o2) {
        add_point(t1, 1, 1e3 / json_number_value(json_object_get(o1, "median")), 0, 0);
        add_point(t1, 2, 2e3 / json_number_value(json_object_get(o2, "median")), 0, 0);
    }
    o1 = json_object_get(figs, "event_nolog_16b_1t_ns"), o2 = json_object_get(figs, "event_nolog_16b_2t_ns");
    if (o1 && o2) {
        add_point(t2, 1, 1e3 / json_number_value(json_object_get(o1, "median")), 0, 0);
        add_point(t2, 2, 2e3 / json_number_value(json_object_get(o2, "median")), 0, 0);
    }

    /* Against the rate the producer really offered: a producer slower than the target never loses. */
    loss = (panel){.title = "Sustained rate: loss", .xlabel = "rate offered by the producer (M events/s)",
                   .ylabel = "fraction of events lost (%)"};
    series *l1 = add_series(&loss, "tracelog FLUSH", "#1f77b4", 0);
    size_t i;
    json_t *step;
    json_array_foreach(json_object_get(json_object_get(ev, "sustained"), "steps"), i, step)
    {
        add_point(l1, json_number_value(json_object_get(step, "achieved_mev_s")),
                  100 * json_number_value(json_object_get(step, "fraction_lost")), 0, 0);
    }
    for (int t = 0; t <= 20; t += 4)
        loss.xticks[loss.nxticks++] = t;

    if (lt) {
        series *lc1 = add_series(&cost, "LTTng-UST, 1 thread", "#d62728", 0);
        series *lc2 = add_series(&cost, "LTTng-UST, 2 threads", "#d62728", 1);
        series *lt3 = add_series(&thr, "LTTng-UST", "#d62728", 0);
        json_t *r;
        json_array_foreach(json_object_get(lt, "recording"), i, r)
        {
            double p = json_number_value(json_object_get(r, "payload"));
            int th = (int)json_integer_value(json_object_get(r, "threads"));
            json_t *l = json_object_get(r, "lttng_ns");
            add_summary(th == 1 ? lc1 : lc2, p, l);
            if (p == 16 && json_is_object(l))
                add_point(lt3, th, th * 1e3 / json_number_value(json_object_get(l, "median")), 0, 0);
        }
        series *l2 = add_series(&loss, "LTTng-UST discard", "#d62728", 0);
        json_array_foreach(json_object_get(json_object_get(lt, "sustained"), "lttng_steps"), i, step)
        {
            add_point(l2, json_number_value(json_object_get(step, "achieved_mev_s")),
                      100 * json_number_value(json_object_get(step, "fraction_lost")), 0, 0);
        }
    }

    FILE *f = fopen(out, "w");
    if (!f) {
        fprintf(stderr, "bench_plot: %s: %s\n", out, strerror(errno));
        return 1;
    }
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='1260' height='360' font-family='sans-serif'>\n"
               "<rect width='100%%' height='100%%' fill='white'/>\n");
    draw_panel(f, &cost, 70, 40);
    draw_panel(f, &thr, 490, 40);
    draw_panel(f, &loss, 910, 40);
    fprintf(f, "</svg>\n");
    int bad = fclose(f) != 0;
    json_decref(ev);
    json_decref(lt);
    if (bad) {
        fprintf(stderr, "bench_plot: %s: write failed\n", out);
        return 1;
    }
    printf("plot: %s\n", out);
    return 0;
}
