/* Where the state a dormant shim reads lives.
 *
 * Loading the shim into a process that asks for nothing must cost as
 * little as preloading any library. On the machines that matter here a
 * page fault is the dearest thing a process start does (12-15 µs each in
 * a paravirtualised guest, bench/preload_exec), so the dormant path reads
 * only pages the loader has touched already: the few flags that say
 * whether a tool is on are kept in .data, beside the GOT the loader has
 * just relocated, instead of in .bss, whose pages nothing else touches
 * (the shim's .bss is over a MiB of tables for the tools). */
#ifndef PL_PRELOAD_DORMANT_H
#define PL_PRELOAD_DORMANT_H

#define PL_DORMANT_STATE __attribute__((section(".data.pl_dormant")))

/* And the code it runs at load time, and the constants that code reads,
 * sit with the constructors, in .text.startup, which the linker puts at
 * the head of .text: on the page the loader's call of _init has just
 * faulted in, not on one of .text's or .rodata's of their own. */
#define PL_DORMANT_CODE __attribute__((section(".text.startup")))
#define PL_DORMANT_CONST __attribute__((section(".text.startup.pl_dormant")))

#endif
