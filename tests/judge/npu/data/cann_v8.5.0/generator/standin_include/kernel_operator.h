/* Empty stand-in for asc-devkit's include/kernel_operator.h, so that `#include <kernel_operator.h>`
 * resolves under g++ -E. The macros of it that the host-stub generator can see are in ../standins.h
 * (force-included before the kernel file); nothing else of the header reaches the generator's
 * output. regen.sh's cross-check (CROSSCHECK=1) preprocesses with the real v8.5.0 headers instead. */
