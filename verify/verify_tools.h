/* verify_tools.h -- the compute-sanitizer tools a verification record names, in record
 * order. verify/ owns the list: the verifier runs them (verify_sanitizers.c), the gate
 * (gate/) and the catalog (catalog/) read their verdicts by these names. A tiny library of
 * its own (ada_verify_tools) so that readers need not link the verifier. */
#ifndef ADALOAD_VERIFY_TOOLS_H
#define ADALOAD_VERIFY_TOOLS_H

enum { VERIFY_SANITIZER_TOOLS = 4 };

/* memcheck, racecheck, initcheck, synccheck. */
extern const char *const verify_sanitizer_tools[VERIFY_SANITIZER_TOOLS];

#endif
