/* libgomp arm of the teamalg wait benchmark: the same scenarios as
 * benches/wait_scenarios.rs, driven by the same options, printing the same CSV rows
 * (label,impl,scenario,case,width,calls,median_us,p90_us,max_us) on stdout.
 *
 *   wait_scenarios --scenario S --widths 2,1 --calls N --label TEXT
 *
 * A section is one `#pragma omp parallel` region (libgomp keeps its hot team between them).
 * Built by benches/omp/build.sh with gcc -O2 -fopenmp. */
#define _GNU_SOURCE
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void busy(double us) {
    double end = now_us() + us;
    while (now_us() < end) {
    }
}

static void nap(double us) {
    struct timespec t = {(time_t)(us / 1e6), (long)((us - (time_t)(us / 1e6) * 1e6) * 1e3)};
    nanosleep(&t, NULL);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *label = "";

static void report(const char *scenario, const char *cas, int width, double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    double med = v[(int)((n - 1) * 0.5 + 0.5)], p90 = v[(int)((n - 1) * 0.9 + 0.5)];
    printf("%s,omp,%s,%s,%d,%d,%.3f,%.3f,%.3f\n", label, scenario, cas, width, n, med, p90, v[n - 1]);
    fflush(stdout);
}

static void sections(int w, int calls) {
    double shares[] = {5, 20, 50};
    double *v = malloc(sizeof(double) * calls);
    for (int s = 0; s < 3; s++) {
        char cas[32];
        snprintf(cas, sizeof cas, "%.0fus", shares[s]);
        for (int c = -calls / 10; c < calls; c++) {
            double t = now_us();
            for (int k = 0; k < 200; k++) {
#pragma omp parallel num_threads(w)
                busy(shares[s]);
            }
            if (c >= 0) v[c] = now_us() - t;
        }
        report("sections", cas, w, v, calls);
    }
    free(v);
}

static void gaps(int w, int calls) {
    double gap[] = {0, 100, 1000, 10000, 50000, 200000};
    const char *name[] = {"0", "100us", "1ms", "10ms", "50ms", "200ms"};
    double *first = malloc(sizeof(double) * calls), *whole = malloc(sizeof(double) * calls);
    for (int g = 0; g < 6; g++) {
        for (int c = -2; c < calls; c++) {
            if (gap[g] > 0) nap(gap[g]);
            double t = now_us(), f = 0;
            for (int k = 0; k < 10; k++) {
#pragma omp parallel num_threads(w)
                busy(5);
                if (k == 0) f = now_us() - t;
            }
            if (c >= 0) {
                first[c] = f;
                whole[c] = now_us() - t;
            }
        }
        char cas[32];
        snprintf(cas, sizeof cas, "%s/first", name[g]);
        report("gaps", cas, w, first, calls);
        snprintf(cas, sizeof cas, "%s/call", name[g]);
        report("gaps", cas, w, whole, calls);
    }
    free(first);
    free(whole);
}

static void acquire(int w, int calls) {
    double *v = malloc(sizeof(double) * calls);
    for (int c = -calls / 10; c < calls; c++) {
        double t = now_us();
        for (int k = 0; k < 50; k++) {
#pragma omp parallel num_threads(w)
            busy(20);
        }
        if (c >= 0) v[c] = now_us() - t;
    }
    report("acquire", "held_team", w, v, calls);
    free(v);
}

static void nested(int w, int calls) {
    if (w < 4) return;
    double *v = malloc(sizeof(double) * calls);
    omp_set_max_active_levels(2);
    for (int c = -calls / 10; c < calls; c++) {
        double t = now_us();
        for (int k = 0; k < 100; k++) {
#pragma omp parallel num_threads(w / 2)
            {
#pragma omp parallel num_threads(2)
                busy(20);
            }
        }
        if (c >= 0) v[c] = now_us() - t;
    }
    report("nested", "pairs", w, v, calls);
    free(v);
}

int main(int argc, char **argv) {
    const char *scenario = "all";
    char widths[256] = "2";
    int calls = 50;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--scenario")) scenario = argv[i + 1];
        else if (!strcmp(argv[i], "--widths")) snprintf(widths, sizeof widths, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--calls")) calls = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--label")) label = argv[i + 1];
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (calls < 1) calls = 1;
    for (char *w = strtok(widths, ","); w; w = strtok(NULL, ",")) {
        int width = atoi(w);
        if (width < 1) continue;
        int all = !strcmp(scenario, "all");
        if (all || !strcmp(scenario, "sections")) sections(width, calls);
        if (all || !strcmp(scenario, "gaps")) gaps(width, calls);
        if (all || !strcmp(scenario, "acquire")) acquire(width, calls);
        if (all || !strcmp(scenario, "nested")) nested(width, calls);
    }
    return 0;
}
