#include "demo.h"
int demo_stencil(int argc, char **argv) { (void)argc; (void)argv; return 0; }
