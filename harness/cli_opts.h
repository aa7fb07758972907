/* cli_opts.h -- the one option parser of every `adaload` subcommand.
 *
 *   int64_t gpus = 16; uint64_t seed = 0; const char *out = NULL; int quiet = 0; cli_list v = {0};
 *   const cli_opt opts[] = {
 *       CLI_I64("--gpus", &gpus, 1, 1000000, "N", "data-parallel ranks (default 16)"),
 *       CLI_U64("--seed", &seed, INT64_MAX, "N", "seed (default 0)"),
 *       CLI_STR("--out", &out, "FILE", "where to write"),
 *       CLI_FLAG("--quiet", &quiet, "say less"),
 *       CLI_LIST("--variant", &v, "V", "a variant (repeatable, or comma-separated)"),
 *       CLI_END};
 *   const char *pos[2]; int npos = 0;
 *   int r = cli_parse("plan", opts, argc, argv, pos, 2, &npos);
 *   if (r == CLI_HELP) { usage(); cli_print_options(stdout, opts); return 0; }
 *   if (r != CLI_OK) return ADA_EXIT_USAGE;             // the one-line message is printed
 *
 * Adding an option is one line in the table. Rules, the same for every subcommand:
 *   - "--name value" and "--name=value"; a value may not start with "--" (so `--seed` at the
 *     end, or followed by another option, is "missing value"), and may not be empty;
 *   - an option given twice is an error ("--seed given twice"), except CLI_LIST ones;
 *   - whole numbers are decimal digits with an optional leading '-': no '+', no spaces, no
 *     0x and no octal -- `--seed 010` is 10; out of range or junk is an error;
 *   - numbers (CLI_F64) are finite decimal floats ("1e-3", "0.5"); no hex, inf or nan;
 *   - "-h" / "--help" anywhere returns CLI_HELP; "-" alone is a positional (stdout/stdin);
 *   - anything else starting with '-' is an unknown option; extra positionals are errors.
 * Messages: "adaload CMD: --gpus 0: must be a whole number in [1, 1000000]" (or the
 * option's own .what text), one line on stderr.
 */
#ifndef ADALOAD_CLI_OPTS_H
#define ADALOAD_CLI_OPTS_H

#include <stdint.h>
#include <stdio.h>

typedef enum { CLI_KIND_END, CLI_KIND_FLAG, CLI_KIND_STR, CLI_KIND_I64, CLI_KIND_U64, CLI_KIND_F64, CLI_KIND_LIST } cli_kind;

enum { CLI_LIST_MAX = 64, CLI_LIST_STORE = 4096 };

/* The values of a repeatable option, comma-separated values split; v[i] point into store. */
typedef struct {
    const char *v[CLI_LIST_MAX];
    int n;
    char store[CLI_LIST_STORE];
    int used;
} cli_list;

typedef struct {
    const char *name; /* "--seed" */
    cli_kind kind;
    void *dst;        /* int* (flag: set to 1), const char**, int64_t*, uint64_t*, double*, cli_list* */
    int64_t ilo, ihi; /* CLI_I64: [ilo, ihi]; CLI_U64: [0, ihi] */
    double flo, fhi;  /* CLI_F64: lo < v <= hi when flo_open, lo <= v <= hi otherwise */
    int flo_open;
    const char *what; /* "must be <what>" in messages; NULL: made from the bounds */
    const char *meta; /* the value's name in --help ("N", "FILE") */
    const char *help; /* one line for --help */
    int *given;       /* set to 1 when the option appears (optional) */
} cli_opt;

#define CLI_FLAG(n_, d_, help_) {.name = (n_), .kind = CLI_KIND_FLAG, .dst = (d_), .help = (help_)}
#define CLI_STR(n_, d_, meta_, help_) {.name = (n_), .kind = CLI_KIND_STR, .dst = (d_), .meta = (meta_), .help = (help_)}
#define CLI_I64(n_, d_, lo_, hi_, meta_, help_) \
    {.name = (n_), .kind = CLI_KIND_I64, .dst = (d_), .ilo = (lo_), .ihi = (hi_), .meta = (meta_), .help = (help_)}
#define CLI_U64(n_, d_, hi_, meta_, help_) \
    {.name = (n_), .kind = CLI_KIND_U64, .dst = (d_), .ihi = (hi_), .meta = (meta_), .help = (help_)}
/* lo < v <= hi (open at lo) */
#define CLI_F64(n_, d_, lo_, hi_, meta_, help_) \
    {.name = (n_), .kind = CLI_KIND_F64, .dst = (d_), .flo = (lo_), .fhi = (hi_), .flo_open = 1, .meta = (meta_), .help = (help_)}
#define CLI_LIST(n_, d_, meta_, help_) {.name = (n_), .kind = CLI_KIND_LIST, .dst = (d_), .meta = (meta_), .help = (help_)}
#define CLI_END {.name = NULL, .kind = CLI_KIND_END}

enum { CLI_OK = 0, CLI_HELP = 1, CLI_ERROR = -1 };

/* Parses argv[1..argc) against opts (ended by CLI_END); positionals go to pos[0..max_pos)
 * with their count in *npos (pos may be NULL when max_pos is 0). Returns CLI_OK, CLI_HELP,
 * or CLI_ERROR after printing the one-line message as command cmd. */
int cli_parse(const char *cmd, const cli_opt *opts, int argc, char **argv, const char **pos,
              int max_pos, int *npos);

/* "  --name META  help" lines of opts, aligned. */
void cli_print_options(FILE *f, const cli_opt *opts);

/* The strict number rules above, for values parsed elsewhere: 0, or -1 on junk/range. */
int cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
int cli_parse_u64(const char *s, uint64_t hi, uint64_t *out);
int cli_parse_f64(const char *s, double *out);

#endif
