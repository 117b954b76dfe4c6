/* A library with nothing in it, for preload_exec's floor row: what
 * LD_PRELOAD itself costs a process start on this machine (open, map and
 * relocate one more object), which no shim can go under. The one function
 * only gives the object a symbol table, as any library has. */
void pl_bench_empty_preload(void);

void pl_bench_empty_preload(void)
{
}
