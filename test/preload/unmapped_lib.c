/* libplunmapped.so: calls back into the program, which then unloads this
 * library while the call is on its stack (test/preload/unmapped_caller.c). */
__attribute__((visibility("default"))) void unmapped_call(void (*fn)(void));

void unmapped_call(void (*fn)(void))
{
	fn();
	__asm__ volatile(""); /* keeps fn's return address in this library */
}
