/* verify_tools.c -- the sanitizer tools of a verification record (verify_tools.h). */
#include "verify_tools.h"

const char *const verify_sanitizer_tools[VERIFY_SANITIZER_TOOLS] = {"memcheck", "racecheck", "initcheck", "synccheck"};
