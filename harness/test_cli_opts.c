/* test_cli_opts.c -- Criterion tests of the one option parser (cli_opts.h): strict decimal
 * numbers (no base 0: "010" is ten, "0x10" is an error), ranges, repeated options rejected,
 * "--name=value", missing and empty values, lists, positionals, help, flags. */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "cli_opts.h"

Test(cli_numbers, decimal_only)
{
    uint64_t u = 0;
    int64_t i = 0;
    double d = 0;
    cr_assert_eq(cli_parse_u64("010", UINT64_MAX, &u), 0);
    cr_assert_eq(u, 10, "010 is ten, not eight");
    cr_assert_eq(cli_parse_u64("0x10", UINT64_MAX, &u), -1);
    cr_assert_eq(cli_parse_u64("+1", UINT64_MAX, &u), -1);
    cr_assert_eq(cli_parse_u64(" 1", UINT64_MAX, &u), -1);
    cr_assert_eq(cli_parse_u64("1 ", UINT64_MAX, &u), -1);
    cr_assert_eq(cli_parse_u64("", UINT64_MAX, &u), -1);
    cr_assert_eq(cli_parse_u64("-1", UINT64_MAX, &u), -1);
    cr_assert_eq(cli_parse_u64("18446744073709551615", UINT64_MAX, &u), 0);
    cr_assert_eq(u, UINT64_MAX);
    cr_assert_eq(cli_parse_u64("18446744073709551616", UINT64_MAX, &u), -1, "overflow");
    cr_assert_eq(cli_parse_u64("9223372036854775808", INT64_MAX, &u), -1, "above the bound");
    cr_assert_eq(cli_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &i), 0);
    cr_assert_eq(i, INT64_MIN);
    cr_assert_eq(cli_parse_i64("-010", -100, 100, &i), 0);
    cr_assert_eq(i, -10);
    cr_assert_eq(cli_parse_i64("4x", 1, 100, &i), -1);
    cr_assert_eq(cli_parse_i64("0", 1, 100, &i), -1, "below the range");
    cr_assert_eq(cli_parse_f64("1e-3", &d), 0);
    cr_assert_float_eq(d, 1e-3, 1e-18);
    cr_assert_eq(cli_parse_f64("0x1p3", &d), -1, "no hex floats");
    cr_assert_eq(cli_parse_f64("inf", &d), -1);
    cr_assert_eq(cli_parse_f64("nan", &d), -1);
    cr_assert_eq(cli_parse_f64("1e999", &d), -1, "overflow");
    cr_assert_eq(cli_parse_f64(" 1", &d), -1);
}

typedef struct {
    int64_t n;
    uint64_t seed;
    double x;
    const char *s;
    int flag;
    cli_list list;
} vals;

static int parse(vals *v, int argc, char **argv, const char **pos, int max_pos, int *npos)
{
    memset(v, 0, sizeof *v);
    const cli_opt opts[] = {CLI_I64("--n", &v->n, 1, 10, "N", "a count"),
                            CLI_U64("--seed", &v->seed, INT64_MAX, "N", "seed"),
                            CLI_F64("--x", &v->x, 0, 1, "X", "in (0, 1]"),
                            CLI_STR("--s", &v->s, "S", "a string"),
                            CLI_FLAG("--flag", &v->flag, "a flag"),
                            CLI_LIST("--list", &v->list, "L", "a list"),
                            CLI_END};
    return cli_parse("test", opts, argc, argv, pos, max_pos, npos);
}

Test(cli_parse, values_forms_and_lists, .init = cr_redirect_stderr)
{
    vals v;
    char *argv[] = {"test", "--n", "7", "--seed=010", "--x", "0.5", "--s", "-", "--flag",
                    "--list", "a,b", "--list=c", NULL};
    cr_assert_eq(parse(&v, 12, argv, NULL, 0, NULL), CLI_OK);
    cr_assert_eq(v.n, 7);
    cr_assert_eq(v.seed, 10);
    cr_assert_float_eq(v.x, 0.5, 1e-15);
    cr_assert_str_eq(v.s, "-");
    cr_assert_eq(v.flag, 1);
    cr_assert_eq(v.list.n, 3);
    cr_assert_str_eq(v.list.v[0], "a");
    cr_assert_str_eq(v.list.v[1], "b");
    cr_assert_str_eq(v.list.v[2], "c");
}

Test(cli_parse, errors, .init = cr_redirect_stderr)
{
    vals v;
    char *twice[] = {"test", "--n", "1", "--n", "2", NULL};
    cr_assert_eq(parse(&v, 5, twice, NULL, 0, NULL), CLI_ERROR, "a repeated option is an error");
    char *ftwice[] = {"test", "--flag", "--flag", NULL};
    cr_assert_eq(parse(&v, 3, ftwice, NULL, 0, NULL), CLI_ERROR);
    char *missing[] = {"test", "--n", NULL};
    cr_assert_eq(parse(&v, 2, missing, NULL, 0, NULL), CLI_ERROR);
    char *next_opt[] = {"test", "--s", "--flag", NULL};
    cr_assert_eq(parse(&v, 3, next_opt, NULL, 0, NULL), CLI_ERROR, "a value may not start with --");
    char *empty[] = {"test", "--s=", NULL};
    cr_assert_eq(parse(&v, 2, empty, NULL, 0, NULL), CLI_ERROR);
    char *range[] = {"test", "--x", "0", NULL};
    cr_assert_eq(parse(&v, 3, range, NULL, 0, NULL), CLI_ERROR, "(0, 1] is open at 0");
    char *hex[] = {"test", "--seed", "0x10", NULL};
    cr_assert_eq(parse(&v, 3, hex, NULL, 0, NULL), CLI_ERROR);
    char *unknown[] = {"test", "--bogus", NULL};
    cr_assert_eq(parse(&v, 2, unknown, NULL, 0, NULL), CLI_ERROR);
    char *flagval[] = {"test", "--flag=1", NULL};
    cr_assert_eq(parse(&v, 2, flagval, NULL, 0, NULL), CLI_ERROR);
    char *extra[] = {"test", "a", NULL};
    cr_assert_eq(parse(&v, 2, extra, NULL, 0, NULL), CLI_ERROR, "no positionals allowed");
}

Test(cli_parse, positionals_and_help, .init = cr_redirect_stderr)
{
    vals v;
    const char *pos[2];
    int npos = 0;
    char *two[] = {"test", "A", "--n", "3", "B", NULL};
    cr_assert_eq(parse(&v, 5, two, pos, 2, &npos), CLI_OK);
    cr_assert_eq(npos, 2);
    cr_assert_str_eq(pos[0], "A");
    cr_assert_str_eq(pos[1], "B");
    char *three[] = {"test", "A", "B", "C", NULL};
    cr_assert_eq(parse(&v, 4, three, pos, 2, &npos), CLI_ERROR);
    char *help[] = {"test", "--bogus", "-h", NULL};
    cr_assert_eq(parse(&v, 3, help, pos, 2, &npos), CLI_HELP, "help wins over errors");
}

Test(cli_parse, messages_name_option_and_value, .init = cr_redirect_stderr)
{
    vals v;
    char *argv[] = {"test", "--n", "0", NULL};
    cr_assert_eq(parse(&v, 3, argv, NULL, 0, NULL), CLI_ERROR);
    fflush(stderr);
    cr_assert_stderr_eq_str("adaload test: --n 0: must be a whole number in [1, 10]\n");
}
