/* test_ada_output.c -- Criterion tests of the output helper (ada_output.h), one per kind of
 * target and per failure: new and existing regular files (mode kept), symlinks (resolved;
 * dangling refused), folders and sockets refused, a private character device and a FIFO
 * written through (never replaced), /dev/full failing cleanly, outputs naming an input or
 * each other refused, '-' as stdout, the transaction (a failing second output leaves the
 * first target's old content and no temporary), stale temporaries of dead processes swept,
 * and SIGTERM removing the temporaries. CI runs these as root, where permission bits stop
 * nothing: every refusal here is by the kind of file, never by permissions. */
#define _DEFAULT_SOURCE /* mknod, makedev */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "ada_output.h"

static char dir[64];

static void mk(void)
{
    snprintf(dir, sizeof dir, "/tmp/adaload-test-output-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void rm(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(output, .init = mk, .fini = rm);

static const char *at(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static char *get(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Files in dir whose names contain ".adaload" (temporaries). */
static int temps(void)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += strstr(e->d_name, ".adaload") != NULL;
    closedir(d);
    return n;
}

/* One output with text; returns the commit status (or the add failure). */
static ada_out_status write_one(const char *path, const char *text, char *err, size_t n)
{
    ada_outset *t = ada_outset_new("test");
    ada_out *o = ada_outset_add(t, path, "out", err, n);
    ada_out_status st = o ? ADA_OUT_OK : ada_outset_status(t);
    if (o) {
        fputs(text, ada_out_file(o));
        st = ada_outset_commit(t, err, n);
    }
    ada_outset_free(t);
    return st;
}

Test(output, new_and_replaced_regular_files_keep_mode)
{
    char err[512];
    cr_assert_eq(write_one(at("a.txt"), "one\n", err, sizeof err), ADA_OUT_OK, "%s", err);
    cr_assert_str_eq(get(at("a.txt")), "one\n");
    chmod(at("a.txt"), 0640);
    cr_assert_eq(write_one(at("a.txt"), "two\n", err, sizeof err), ADA_OUT_OK, "%s", err);
    cr_assert_str_eq(get(at("a.txt")), "two\n");
    struct stat st;
    cr_assert_eq(stat(at("a.txt"), &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0640, "mode %o", st.st_mode & 0777);
    cr_assert_eq(temps(), 0);
}

Test(output, symlink_is_resolved_dangling_refused)
{
    char err[512];
    put(at("target.txt"), "old\n");
    cr_assert_eq(symlink("target.txt", at("link.txt")), 0);
    cr_assert_eq(write_one(at("link.txt"), "new\n", err, sizeof err), ADA_OUT_OK, "%s", err);
    struct stat st;
    cr_assert_eq(lstat(at("link.txt"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link stays a link");
    cr_assert_str_eq(get(at("target.txt")), "new\n");
    cr_assert_eq(symlink("nowhere.txt", at("dangling")), 0);
    cr_assert_eq(write_one(at("dangling"), "x", err, sizeof err), ADA_OUT_EUSAGE);
    cr_assert_not_null(strstr(err, "dangling"), "%s", err);
    cr_assert_eq(access(at("nowhere.txt"), F_OK), -1);
    cr_assert_eq(temps(), 0);
}

Test(output, folder_and_socket_refused)
{
    char err[512];
    cr_assert_eq(mkdir(at("sub"), 0777), 0);
    cr_assert_eq(write_one(at("sub"), "x", err, sizeof err), ADA_OUT_EUSAGE);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", at("sock"));
    cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(write_one(at("sock"), "x", err, sizeof err), ADA_OUT_EUSAGE);
    close(s);
    struct stat st;
    cr_assert_eq(lstat(at("sock"), &st), 0);
    cr_assert(S_ISSOCK(st.st_mode), "the socket is still a socket");
    cr_assert_eq(write_one(at("nodir/x.txt"), "x", err, sizeof err), ADA_OUT_EIO, "no such folder");
    cr_assert_eq(temps(), 0);
}

Test(output, devices_written_through_never_replaced)
{
    char err[512];
    /* /dev/null itself: still the same character device afterwards. */
    struct stat before, after;
    cr_assert_eq(stat("/dev/null", &before), 0);
    cr_assert_eq(write_one("/dev/null", "x", err, sizeof err), ADA_OUT_OK, "%s", err);
    cr_assert_eq(stat("/dev/null", &after), 0);
    cr_assert(S_ISCHR(after.st_mode) && after.st_ino == before.st_ino);
    /* A private null device where root can make one. */
    if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
        cr_assert_eq(write_one(at("null"), "x", err, sizeof err), ADA_OUT_OK, "%s", err);
        cr_assert_eq(lstat(at("null"), &after), 0);
        cr_assert(S_ISCHR(after.st_mode), "the device node was replaced");
    }
    /* /dev/full: the write fails, cleanly. */
    cr_assert_eq(write_one("/dev/full", "x", err, sizeof err), ADA_OUT_EIO);
    cr_assert_not_null(strstr(err, "No space"), "%s", err);
    cr_assert_eq(temps(), 0);
}

Test(output, fifo_written_through)
{
    char err[512];
    cr_assert_eq(mkfifo(at("fifo"), 0666), 0);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) { /* the reader */
        int fd = open(at("fifo"), O_RDONLY);
        char buf[64] = "";
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        _exit(n == 6 && !memcmp(buf, "hello\n", 6) ? 0 : 1);
    }
    cr_assert_eq(write_one(at("fifo"), "hello\n", err, sizeof err), ADA_OUT_OK, "%s", err);
    int st = 0;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the reader got the bytes");
    struct stat s;
    cr_assert_eq(lstat(at("fifo"), &s), 0);
    cr_assert(S_ISFIFO(s.st_mode));
}

Test(output, names_an_input_or_another_output)
{
    char err[512];
    put(at("in.csv"), "input\n");
    ada_outset *t = ada_outset_new("test");
    ada_outset_input(t, at("in.csv"));
    cr_assert_null(ada_outset_add(t, at("in.csv"), "--out", err, sizeof err));
    cr_assert_eq(ada_outset_status(t), ADA_OUT_EUSAGE);
    cr_assert_not_null(strstr(err, "input"), "%s", err);
    cr_assert_eq(link(at("in.csv"), at("hard.csv")), 0);
    cr_assert_null(ada_outset_add(t, at("hard.csv"), "--out", err, sizeof err), "same inode");
    char dotted[300];
    snprintf(dotted, sizeof dotted, "%s/./sub/../in.csv", dir);
    mkdir(at("sub"), 0777);
    cr_assert_null(ada_outset_add(t, dotted, "--out", err, sizeof err), "same resolved path");
    ada_out *a = ada_outset_add(t, at("new.json"), "--a", err, sizeof err);
    cr_assert_not_null(a, "%s", err);
    snprintf(dotted, sizeof dotted, "%s/./new.json", dir);
    cr_assert_null(ada_outset_add(t, dotted, "--b", err, sizeof err), "two outputs, one file");
    cr_assert_not_null(strstr(err, "--a"), "%s", err);
    ada_outset_free(t);
    cr_assert_str_eq(get(at("in.csv")), "input\n");
    cr_assert_eq(access(at("new.json"), F_OK), -1, "nothing committed");
    cr_assert_eq(temps(), 0);
}

Test(output, dash_is_stdout)
{
    char err[512];
    fflush(stdout);
    int saved = dup(1);
    int fd = open(at("captured"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    close(fd);
    ada_out_status st = write_one("-", "to stdout\n", err, sizeof err);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    cr_assert_eq(st, ADA_OUT_OK, "%s", err);
    cr_assert_str_eq(get(at("captured")), "to stdout\n");
}

Test(output, transaction_all_or_nothing)
{
    char err[512];
    put(at("plan.jsonl"), "OLD PLAN\n");
    ada_outset *t = ada_outset_new("test");
    ada_out *a = ada_outset_add(t, at("plan.jsonl"), "--plan-out", err, sizeof err);
    ada_out *b = ada_outset_add(t, "/dev/full", "--summary-json", err, sizeof err);
    cr_assert(a && b, "%s", err);
    fputs("NEW PLAN\n", ada_out_file(a));
    fputs("summary\n", ada_out_file(b));
    cr_assert_eq(ada_outset_commit(t, err, sizeof err), ADA_OUT_EIO);
    ada_outset_free(t);
    cr_assert_str_eq(get(at("plan.jsonl")), "OLD PLAN\n", "the first target keeps its old content");
    cr_assert_eq(temps(), 0);
    /* Both fine: both replaced. */
    t = ada_outset_new("test");
    a = ada_outset_add(t, at("plan.jsonl"), "--plan-out", err, sizeof err);
    b = ada_outset_add(t, at("summary.json"), "--summary-json", err, sizeof err);
    fputs("NEW PLAN\n", ada_out_file(a));
    fputs("summary\n", ada_out_file(b));
    cr_assert_eq(ada_outset_commit(t, err, sizeof err), ADA_OUT_OK, "%s", err);
    ada_outset_free(t);
    cr_assert_str_eq(get(at("plan.jsonl")), "NEW PLAN\n");
    cr_assert_str_eq(get(at("summary.json")), "summary\n");
    cr_assert_eq(temps(), 0);
}

Test(output, stale_temporaries_of_dead_processes_are_swept)
{
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    waitpid(pid, NULL, 0); /* pid is now dead */
    char stale[256], alive[256], other[256];
    snprintf(stale, sizeof stale, "%s/old.json.tmp.%ld.adaload", dir, (long)pid);
    snprintf(alive, sizeof alive, "%s/old.json.tmp.%ld.adaload", dir, (long)getppid());
    snprintf(other, sizeof other, "%s/notes.tmp.%ld", dir, (long)pid);
    put(stale, "x");
    put(alive, "x");
    put(other, "x");
    char err[512];
    cr_assert_eq(write_one(at("new.json"), "{}\n", err, sizeof err), ADA_OUT_OK, "%s", err);
    cr_assert_eq(access(stale, F_OK), -1, "the dead process's temporary is gone");
    cr_assert_eq(access(alive, F_OK), 0, "a live process's temporary stays");
    cr_assert_eq(access(other, F_OK), 0, "files not named by us stay");
}

Test(output, sigterm_removes_temporaries)
{
    int pipefd[2];
    cr_assert_eq(pipe(pipefd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        char err[512];
        ada_outset *t = ada_outset_new("test");
        ada_out *o = ada_outset_add(t, at("big.jsonl"), "--plan-out", err, sizeof err);
        if (!o) _exit(3);
        fputs("partial", ada_out_file(o));
        fflush(ada_out_file(o));
        if (write(pipefd[1], "r", 1) != 1) _exit(4);
        for (;;) pause();
    }
    char c;
    cr_assert_eq(read(pipefd[0], &c, 1), 1);
    cr_assert_eq(temps(), 1, "the temporary exists while the child writes");
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "the child ends as SIGTERM would end it");
    cr_assert_eq(temps(), 0, "no temporary left behind");
    cr_assert_eq(access(at("big.jsonl"), F_OK), -1);
}

Test(output, own_dir_removed_by_a_signal)
{
    pid_t pid = fork();
    if (pid == 0) {
        char run[256];
        snprintf(run, sizeof run, "%s/run", dir);
        mkdir(run, 0777);
        char meta[300];
        snprintf(meta, sizeof meta, "%s/meta.json", run);
        FILE *f = fopen(meta, "w");
        fputs("{}\n", f);
        fclose(f);
        ada_output_own_dir(run);
        raise(SIGINT);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    cr_assert(WIFSIGNALED(st));
    cr_assert_eq(access(at("run"), F_OK), -1, "the unfinished run folder is gone");
}

Test(output, long_write_reports_progress)
{
    char err[512];
    fflush(stderr);
    int saved = dup(2);
    int fd = open(at("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    ada_outset *t = ada_outset_new("test");
    ada_out *o = ada_outset_add(t, at("big.bin"), "--plan-out", err, sizeof err);
    cr_assert_not_null(o, "%s", err);
    static char mib[1 << 20];
    memset(mib, 'x', sizeof mib);
    for (int i = 0; i < 66; i++) fwrite(mib, 1, sizeof mib, ada_out_file(o));
    ada_out_status st = ada_outset_commit(t, err, sizeof err);
    ada_outset_free(t);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    cr_assert_eq(st, ADA_OUT_OK, "%s", err);
    const char *text = get(at("stderr.txt"));
    cr_assert_not_null(strstr(text, "writing --plan-out"), "%s", text);
    cr_assert_not_null(strstr(text, "syncing"), "%s", text);
    struct stat sb;
    cr_assert_eq(stat(at("big.bin"), &sb), 0);
    cr_assert_eq(sb.st_size, (off_t)66 << 20);
    unlink(at("big.bin"));
}
