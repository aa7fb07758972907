/* test_srchash.c -- SHA-256 test vectors, the normalization rules of scheme 2 (each rule
 * with a pair that must hash the same and a pair that must not), and scheme 1 of the real
 * kernels/ folder against the hash CMake computed (kernels/source_hash.cmake). */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "srchash.h"

static void norm_eq(const char *src, const char *want)
{
    char *out = NULL;
    size_t n = 0;
    cr_assert_eq(sh_normalize_c(src, strlen(src), &out, &n), SH_OK);
    cr_assert_eq(n, strlen(out));
    cr_assert_str_eq(out, want, "normalizing [%s]", src);
    free(out);
}

static int same_c(const char *a, const char *b)
{
    char *x, *y;
    size_t nx, ny;
    cr_assert_eq(sh_normalize_c(a, strlen(a), &x, &nx), SH_OK);
    cr_assert_eq(sh_normalize_c(b, strlen(b), &y, &ny), SH_OK);
    int same = nx == ny && !memcmp(x, y, nx);
    free(x);
    free(y);
    return same;
}

Test(srchash, sha256_vectors)
{
    char h[SH_HEX];
    sh_sha256_hex("", 0, h);
    cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sh_sha256_hex("abc", 3, h);
    cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 56: two blocks */
    sh_sha256_hex(m, strlen(m), h);
    cr_assert_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *a = malloc(1000000);
    memset(a, 'a', 1000000);
    sh_sha256_hex(a, 1000000, h);
    free(a);
    cr_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

Test(srchash, comments_and_layout_go)
{
    norm_eq("int  a = b + c; // why\n/* block\n comment */ float x;\n", "int a=b+c;float x;");
    norm_eq("static __global__ void k ( float * y )\n{\n    y [ 0 ] = 1.0f ;\n}\n",
            "static __global__ void k(float*y){y[0]=1.0f;}");
    cr_assert(same_c("int f(int a){return a*2;}", "int f (int a)\n{\n\treturn a * 2; /* doubled */\n}\n"));
    cr_assert(!same_c("int f(int a){return a*2;}", "int f(int a){return a*3;}"));
}

Test(srchash, literals_stay_as_they_are)
{
    norm_eq("const char *s = \"a // not a comment /* nor this */  \";", "const char*s=\"a // not a comment /* nor this */  \";");
    norm_eq("char c = '/'; char d = '*'; char q = '\\''; // x", "char c='/';char d='*';char q='\\'';");
    norm_eq("const char *e = \"say \\\"hi\\\" // ok\";", "const char*e=\"say \\\"hi\\\" // ok\";");
    cr_assert(!same_c("f(\"a b\");", "f(\"a  b\");"));
    norm_eq("auto r = R\"x(a // b \" c)x\"; // gone", "auto r=R\"x(a // b \" c)x\";");
    norm_eq("int n = 1'000'000; char c = 'a';", "int n=1'000'000;char c='a';");
}

Test(srchash, tokens_are_never_joined)
{
    cr_assert(!same_c("x = a + ++b;", "x = a++ + b;"));
    cr_assert(!same_c("x = a - -b;", "x = a--b;"));
    cr_assert(!same_c("y = a / *p;", "y = a /*p*/;"));
    cr_assert(!same_c("wchar_t *w = L\"x\";", "wchar_t *w = L \"x\";"));
    cr_assert(!same_c("int ab;", "int a b;"));
    norm_eq("x = - 1 ; y = a < < 2 ;", "x=-1;y=a< <2;");
    cr_assert(same_c("x = -1;", "x=-1;"));
}

Test(srchash, preprocessor_lines_and_defines)
{
    norm_eq("#  include <stdio.h>\n  #define A 1\nint x;\n", "#include<stdio.h>\n#define A 1\nint x;");
    /* Joining a code line into a directive is a code edit. */
    cr_assert(!same_c("#define A 1\nint x;", "#define A 1 int x;"));
    /* An object-like macro that starts with '(' is not a function-like macro. */
    cr_assert(!same_c("#define F (x)\n", "#define F(x)\n"));
    cr_assert(same_c("#define F(x) ((x) + 1)\n", "#define F(x)   ( (x)+1 ) // plus one\n"));
    norm_eq("int a;\n  #pragma unroll\nfor (;;) {}\n", "int a;\n#pragma unroll\nfor(;;){}");
    /* Backslash-newline is spliced first, so a continued directive stays one directive. */
    norm_eq("#define A \\\n  1\nint y;", "#define A 1\nint y;");
    /* A block comment inside a directive does not end it. */
    cr_assert(same_c("#define B 2 /* two\n lines */\nint z;", "#define B 2\nint z;"));
}

Test(srchash, cmake_files)
{
    const char *a = "# header\nset(FOO  \"a # kept\"   bar) # trailing\n\n  add_library(x   y.c)\n#[[ bracket\ncomment ]]\n";
    char *out;
    size_t n;
    cr_assert_eq(sh_normalize_cmake(a, strlen(a), &out, &n), SH_OK);
    cr_assert_str_eq(out, "set(FOO \"a # kept\" bar)\nadd_library(x y.c)\n");
    free(out);
}

Test(srchash, scheme1_equals_cmake)
{
    char h[SH_HEX], err[256], *lines = NULL;
    cr_assert_eq(sh_dir_hash(ADALOAD_TEST_KERNELS_DIR, 1, h, &lines, err, sizeof err), SH_OK, "%s", err);
    cr_assert_str_eq(h, ADALOAD_TEST_KERNEL_HASH, "scheme 1 must be kernels/source_hash.cmake's hash");
    cr_assert(strstr(lines, "lnmod_fwd_dtile.cu "), "%s", lines);
    cr_assert_null(strstr(lines, "test_"), "test files are not hashed");
    free(lines);
    char h2[SH_HEX];
    cr_assert_eq(sh_dir_hash(ADALOAD_TEST_KERNELS_DIR, 2, h2, NULL, err, sizeof err), SH_OK);
    cr_assert_str_neq(h, h2);
    cr_assert_eq(sh_dir_hash("/nonexistent-adaload", 2, h2, NULL, err, sizeof err), SH_IO);
    cr_assert_eq(sh_dir_hash(ADALOAD_TEST_KERNELS_DIR, 3, h2, NULL, err, sizeof err), SH_BAD_ARG);
}
