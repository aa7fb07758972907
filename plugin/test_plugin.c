/* test_plugin.c -- the plug-in loader (ada_plugin.h) on the CPU, with the stub modules of
 * test_stub.c: a good library loads, lists its variants with the file's SHA-256 and is
 * called with each variant's own name through the host checks; every refusal the ABI names
 * (adaload_variant.h) is refused with its status and a message naming the file, and leaves
 * nothing loaded; an unknown status from a plug-in is reported as one. Criterion runs each
 * test in its own process, so each starts with nothing loaded. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ada_plugin.h"
#include "srchash.h"
#include "test_tmpdir.h"

static void mk(void) { test_tmp_make("plugin"); }

#define STUB(k) ADALOAD_STUB_DIR "/libadaload_stub_" k ".so"

static lnmod_desc small(int64_t D)
{
    lnmod_desc d = lnmod_desc_default();
    d.x_dtype = d.y_dtype = LNMOD_F32;
    d.rows = 2;
    d.D = D;
    d.rows_per_sample = 2;
    d.scale_stride = d.shift_stride = 6 * D;
    return d;
}

static void refused(const char *path, ada_plugin_status want, const char *what)
{
    char err[700] = "";
    ada_plugin_status st = ada_plugin_load(path, err, sizeof err);
    cr_assert_eq(st, want, "%s: status %d (%s), want %d", path, st, err, want);
    cr_assert(strstr(err, path) == err, "the message names the file first: %s", err);
    cr_assert(strstr(err, what), "message \"%s\" says \"%s\"", err, what);
    cr_assert_eq(ada_plugin_count(), 0);
    cr_assert_eq(ada_plugin_lib_count(), 0);
}

Test(plugin, good_library_loads_lists_and_hashes)
{
    char err[700] = "";
    cr_assert_eq(ada_plugin_load(STUB("good"), err, sizeof err), ADA_PLUGIN_OK, "%s", err);
    cr_assert_eq(ada_plugin_count(), 2);
    cr_assert_str_eq(ada_plugin_name(0), "plugin:alpha");
    cr_assert_str_eq(ada_plugin_name(1), "plugin:beta");
    cr_assert_str_eq(ada_plugin_description(0), "forward only");
    cr_assert_eq(ada_plugin_has_backward(0), 0);
    cr_assert_eq(ada_plugin_has_backward(1), 1);
    cr_assert_eq(ada_plugin_find("plugin:beta"), 1);
    cr_assert_eq(ada_plugin_find("beta"), -1, "only the plugin: name");
    cr_assert_eq(ada_plugin_find("plugin:dtile"), -1);
    cr_assert(ada_plugin_is_name("plugin:x") && !ada_plugin_is_name("dtile") && !ada_plugin_is_name(NULL));
    /* The hash is the file's SHA-256. */
    FILE *f = fopen(STUB("good"), "rb");
    cr_assert(f);
    static unsigned char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    char hex[SH_HEX];
    sh_sha256_hex(buf, n, hex);
    cr_assert_str_eq(ada_plugin_lib_sha256(0), hex);
    json_t *j = ada_plugin_json();
    cr_assert(json_is_array(j) && json_array_size(j) == 1);
    json_t *o = json_array_get(j, 0);
    cr_assert_str_eq(json_string_value(json_object_get(o, "path")), STUB("good"));
    cr_assert_str_eq(json_string_value(json_object_get(o, "file_sha256")), hex);
    cr_assert_eq(json_integer_value(json_object_get(o, "abi_version")), 1);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(o, "variants"), 1)), "plugin:beta");
    json_decref(j);
    ada_plugin_unload_all();
    cr_assert_eq(ada_plugin_count(), 0);
    j = ada_plugin_json();
    cr_assert(json_is_array(j) && json_array_size(j) == 0);
    json_decref(j);
}

Test(plugin, calls_arrive_with_the_own_name_after_the_host_checks)
{
    char err[700];
    cr_assert_eq(ada_plugin_load(STUB("good"), err, sizeof err), ADA_PLUGIN_OK, "%s", err);
    lnmod_desc d = small(8);
    float x[16] = {2.0f}, sc[48] = {0}, sh[48] = {0}, y[16] = {0};
    cr_assert_eq(ada_plugin_forward(0, &d, x, sc, sh, y, NULL, NULL, NULL), LNMOD_OK);
    cr_assert_float_eq(y[0], 3.0f, 0, "the stub ran");
    cr_assert_eq(ada_plugin_forward(0, &d, x, sc, sh, NULL, NULL, NULL, NULL), LNMOD_ERR_NULL_POINTER);
    cr_assert_eq(ada_plugin_forward(5, &d, x, sc, sh, y, NULL, NULL, NULL), LNMOD_ERR_UNKNOWN_VARIANT);
    lnmod_desc bad = d;
    bad.eps = 0;
    y[0] = 0;
    cr_assert_eq(ada_plugin_forward(0, &bad, x, sc, sh, y, NULL, NULL, NULL), LNMOD_ERR_EPS);
    cr_assert_float_eq(y[0], 0.0f, 0, "an invalid descriptor never reaches the plug-in");
    /* beta's supports: D <= 64. */
    lnmod_desc big = small(128);
    cr_assert_eq(ada_plugin_supports(1, &d), 1);
    cr_assert_eq(ada_plugin_supports(1, &big), 0);
    cr_assert_eq(ada_plugin_forward(1, &big, x, sc, sh, y, NULL, NULL, NULL), LNMOD_ERR_UNSUPPORTED);
    /* The backward: alpha has none; beta's workspace is 16 D bytes, checked before the call. */
    size_t w = 1;
    cr_assert_eq(ada_plugin_backward_workspace(0, &d, &w), LNMOD_ERR_UNSUPPORTED);
    cr_assert_eq(ada_plugin_backward_workspace(1, &d, &w), LNMOD_OK);
    cr_assert_eq(w, 128);
    float dy[16] = {0}, m[2] = {0}, r[2] = {0}, dx[16] = {0}, dsc[48], dsh[48];
    _Alignas(16) unsigned char wsp[128];
    cr_assert_eq(ada_plugin_backward(1, &d, x, sc, dy, m, r, dx, dsc, dsh, NULL, 0, NULL), LNMOD_ERR_NULL_POINTER);
    cr_assert_neq(ada_plugin_backward(1, &d, x, sc, dy, m, r, dx, dsc, dsh, wsp, 64, NULL), LNMOD_OK,
                  "a workspace smaller than asked is refused");
    cr_assert_neq(ada_plugin_backward(1, &d, x, sc, dy, m, r, dx, dsc, dsh, wsp + 1, 127, NULL), LNMOD_OK,
                  "a misaligned workspace is refused");
    cr_assert_float_eq(dx[0], 0.0f, 0);
    cr_assert_eq(ada_plugin_backward(1, &d, x, sc, dy, m, r, dx, dsc, dsh, wsp, 128, NULL), LNMOD_OK);
    cr_assert_float_eq(dx[0], 7.0f, 0);
}

Test(plugin, unknown_status_is_reported_as_one)
{
    char err[700], text[300];
    cr_assert_eq(ada_plugin_load(STUB("badstatus"), err, sizeof err), ADA_PLUGIN_OK, "%s", err);
    lnmod_desc d = small(8);
    float x[16] = {0}, sc[48] = {0}, sh[48] = {0}, y[16] = {0};
    int raw = ada_plugin_forward(0, &d, x, sc, sh, y, NULL, NULL, NULL);
    cr_assert_eq(raw, 1234);
    cr_assert_eq(ada_plugin_status_known(raw), 0);
    ada_plugin_status_text(raw, text, sizeof text);
    cr_assert(strstr(text, "unknown status 1234"), "%s", text);
    cr_assert_eq(ada_plugin_status_known(LNMOD_ERR_CUDA), 1);
    cr_assert_eq(ada_plugin_status_known(-1), 0);
    cr_assert_eq(ada_plugin_status_known(LNMOD_STATUS_COUNT), 0);
    ada_plugin_status_text(LNMOD_ERR_CUDA, text, sizeof text);
    cr_assert(strstr(text, "LNMOD_ERR_CUDA"), "%s", text);
}

Test(plugin, missing_file) { refused(ADALOAD_STUB_DIR "/no-such-plugin.so", ADA_PLUGIN_ERR_OPEN, "No such file"); }

Test(plugin, not_a_library, .init = mk, .fini = test_tmp_remove)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/not-a-library.so", test_tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("this is text, not ELF\n", f);
    fclose(f);
    refused(path, ADA_PLUGIN_ERR_OPEN, "not a loadable library");
}

Test(plugin, a_folder_is_not_a_library) { refused(ADALOAD_STUB_DIR, ADA_PLUGIN_ERR_OPEN, "not a regular file"); }
Test(plugin, unresolved_symbol) { refused(STUB("undefined"), ADA_PLUGIN_ERR_OPEN, "adaload_stub_not_defined_anywhere"); }
Test(plugin, missing_symbol) { refused(STUB("noquery"), ADA_PLUGIN_ERR_SYMBOL, "exports no adaload_plugin_query"); }
Test(plugin, wrong_abi_version) { refused(STUB("abi2"), ADA_PLUGIN_ERR_ABI, "built for plug-in ABI version 2"); }
Test(plugin, no_table_for_our_version) { refused(STUB("nulltable"), ADA_PLUGIN_ERR_ABI, "returned no table"); }
Test(plugin, other_header_sizes) { refused(STUB("size"), ADA_PLUGIN_ERR_ABI, "other headers"); }
Test(plugin, variant_without_name) { refused(STUB("noname"), ADA_PLUGIN_ERR_VARIANT, "variant 0 has no name"); }
Test(plugin, variant_with_empty_name) { refused(STUB("emptyname"), ADA_PLUGIN_ERR_VARIANT, "variant 0 has no name"); }
Test(plugin, variant_with_bad_name) { refused(STUB("badname"), ADA_PLUGIN_ERR_VARIANT, "\"a/b\": a name is"); }
Test(plugin, duplicate_name) { refused(STUB("dup"), ADA_PLUGIN_ERR_VARIANT, "two variants are called alpha"); }
Test(plugin, variant_without_forward) { refused(STUB("noforward"), ADA_PLUGIN_ERR_VARIANT, "alpha has no forward"); }
Test(plugin, half_a_backward) { refused(STUB("halfbwd"), ADA_PLUGIN_ERR_VARIANT, "only half a backward"); }
Test(plugin, no_path) { cr_assert_eq(ada_plugin_load("", (char[64]){0}, 64), ADA_PLUGIN_ERR_ARG); }

Test(plugin, duplicate_name_across_libraries_keeps_the_first)
{
    char err[700];
    cr_assert_eq(ada_plugin_load(STUB("good"), err, sizeof err), ADA_PLUGIN_OK, "%s", err);
    cr_assert_eq(ada_plugin_load(STUB("other"), err, sizeof err), ADA_PLUGIN_ERR_VARIANT);
    cr_assert(strstr(err, "variant alpha is already loaded from " STUB("good")), "%s", err);
    cr_assert_eq(ada_plugin_count(), 2, "the refused library added nothing (not even gamma)");
    cr_assert_eq(ada_plugin_find("plugin:gamma"), -1);
    cr_assert_eq(ada_plugin_lib_count(), 1);
    cr_assert_eq(ada_plugin_load(STUB("good"), err, sizeof err), ADA_PLUGIN_ERR_VARIANT, "the same file twice");
}
