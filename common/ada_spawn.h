/* ada_spawn.h -- running another program (python3 for the PyTorch peers, compute-sanitizer)
 * and waiting for it, without a shell.
 *
 *   char *argv[] = {"python3", "script.py", "--out", path, NULL};
 *   int st = ada_spawn_wait(argv, 0);            // its exit status; -1: could not start
 *   if (ada_python_has_module("torch")) ...      // `python3 -c "import torch"` exits 0
 *
 * The program is searched in PATH. A child killed by signal S gives 128 + S.
 */
#ifndef ADALOAD_ADA_SPAWN_H
#define ADALOAD_ADA_SPAWN_H

/* Runs argv[0] (PATH searched) with argv, stdout and stderr inherited, or sent to /dev/null
 * when quiet is non-zero; returns its exit status, or -1 when it could not start. */
int ada_spawn_wait(char *const argv[], int quiet);

/* 1 when `python3 -c "import MODULE"` succeeds (quietly), else 0. */
int ada_python_has_module(const char *module);

#endif
